package telemetry

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config is the telemetry configuration (the gateway's otel: block). Its
// zero value is telemetry off. A field left at its zero value defers to
// the standard OTEL_* environment variable, then to the default; a field
// that is set wins over the environment.
type Config struct {
	// Enabled turns telemetry on. false: New returns a nil *Telemetry,
	// which records nothing and costs nothing.
	Enabled bool
	// Endpoint is the OTLP/HTTP base URL, e.g. "http://collector:4318";
	// "/v1/traces" and "/v1/metrics" are appended. "":
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _METRICS_ENDPOINT, then
	// OTEL_EXPORTER_OTLP_ENDPOINT, then https://localhost:4318.
	Endpoint string
	// Protocol is the OTLP transport: "http/protobuf", the only one built
	// in. "": OTEL_EXPORTER_OTLP_PROTOCOL, then http/protobuf. "grpc" and
	// "http/json" are refused (not built in).
	Protocol string
	// ServiceName is the resource's service.name. "": OTEL_SERVICE_NAME,
	// then service.name in OTEL_RESOURCE_ATTRIBUTES, then "fusebox".
	ServiceName string
	// Headers are sent with every export (e.g. an API key). nil:
	// OTEL_EXPORTER_OTLP_HEADERS. When set they replace that variable's
	// headers rather than adding to them.
	Headers map[string]string
	// SampleRatio is the share of new traces sampled, in (0, 1]; a
	// request whose traceparent is sampled (or not) follows its parent.
	// 0: OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, then
	// parentbased_always_on. To sample nothing, set
	// OTEL_TRACES_SAMPLER=always_off.
	SampleRatio float64
	// CaptureContent records the request's messages and the answer's text
	// on the attempt spans (gen_ai.input.messages, gen_ai.output.messages),
	// each bounded to MaxContentBytes. false: contents are never recorded.
	CaptureContent bool
	// Timeout bounds each export. 0: OTEL_EXPORTER_OTLP_TIMEOUT, then 10 s.
	Timeout time.Duration
}

// Options are the telemetry's dependencies, for the gateway and tests.
// The zero value exports over OTLP/HTTP on the system clock.
type Options struct {
	// Clock times spans, events and durations. nil: the system clock.
	Clock clock.Clock
	// SpanExporter, if set, receives the spans instead of the OTLP/HTTP
	// exporter (the benchmarks use one that drops them).
	SpanExporter sdktrace.SpanExporter
	// MetricReader, if set, collects the metrics instead of a periodic
	// reader exporting over OTLP/HTTP.
	MetricReader sdkmetric.Reader
}

// MaxContentBytes bounds each captured content attribute: the oldest
// messages are dropped, then long texts cut, until the JSON fits.
const MaxContentBytes = 16 << 10

// protocolHTTPProtobuf is the one OTLP protocol built in: the gRPC
// exporters would bring google.golang.org/grpc's server-side weight into
// the gateway for a transport every collector also serves over HTTP.
const protocolHTTPProtobuf = "http/protobuf"

// optInLatest is the OTEL_SEMCONV_STABILITY_OPT_IN value that switches the
// metrics to the latest experimental GenAI conventions.
const optInLatest = "gen_ai_latest_experimental"

// settings is a Config resolved against the environment.
type settings struct {
	Config
	latest bool // metric names of the latest experimental conventions
}

// resolve validates c and fills in what the environment decides here (the
// SDK's exporters and samplers read the rest of OTEL_* themselves).
func resolve(c Config, getenv func(string) string) (settings, error) {
	s := settings{Config: c}
	if s.Protocol == "" {
		s.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if s.Protocol == "" {
		s.Protocol = protocolHTTPProtobuf
	}
	if s.Protocol != protocolHTTPProtobuf {
		return s, fmt.Errorf("telemetry: protocol %q is not built in: use %s (a collector's port 4318)", s.Protocol, protocolHTTPProtobuf)
	}
	if s.Endpoint != "" {
		u, err := url.Parse(s.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("telemetry: endpoint %q: want an http:// or https:// URL with a host, e.g. http://collector:4318", s.Endpoint)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return s, fmt.Errorf("telemetry: endpoint %q: no query or fragment", s.Endpoint)
		}
	}
	if s.SampleRatio < 0 || s.SampleRatio > 1 {
		return s, fmt.Errorf("telemetry: sample_ratio %v: want a share in (0, 1]", s.SampleRatio)
	}
	if s.Timeout < 0 {
		return s, errors.New("telemetry: timeout must not be negative")
	}
	for _, v := range strings.Split(getenv("OTEL_SEMCONV_STABILITY_OPT_IN"), ",") {
		if strings.TrimSpace(v) == optInLatest {
			s.latest = true
		}
	}
	return s, nil
}

// sdkDisabled reports whether OTEL_SDK_DISABLED turns the SDK off.
func sdkDisabled(getenv func(string) string) bool {
	return strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true")
}

// signalURL is the endpoint's URL for one signal ("traces", "metrics").
func (s settings) signalURL(signal string) string {
	return strings.TrimSuffix(s.Endpoint, "/") + "/v1/" + signal
}
