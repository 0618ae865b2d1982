package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/fuseboxhq/fusebox/clock"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every span and metric.
const scope = "github.com/fuseboxhq/fusebox/internal/telemetry"

// Telemetry holds the gateway's tracer and meter providers. It is safe for
// concurrent use. A nil *Telemetry is valid: it records nothing, and its
// Requests are nil.
type Telemetry struct {
	clk     clock.Clock
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	tracer  trace.Tracer
	prop    propagation.TraceContext
	inst    instruments
	capture bool
}

// New starts the telemetry described by cfg. With cfg.Enabled false (or
// OTEL_SDK_DISABLED=true) it returns a nil *Telemetry and no error. The
// exporters connect only when they first export, so an unreachable
// collector is not an error here; Shutdown flushes what is buffered.
func New(ctx context.Context, cfg Config, o Options) (*Telemetry, error) {
	if !cfg.Enabled || sdkDisabled(os.Getenv) {
		return nil, nil
	}
	s, err := resolve(cfg, os.Getenv)
	if err != nil {
		return nil, err
	}
	res, err := newResource(ctx, s.ServiceName)
	if err != nil {
		return nil, err
	}
	spans := o.SpanExporter
	if spans == nil {
		if spans, err = otlptracehttp.New(ctx, traceOptions(s)...); err != nil {
			return nil, fmt.Errorf("telemetry: trace exporter: %w", err)
		}
	}
	reader := o.MetricReader
	if reader == nil {
		exp, err := otlpmetrichttp.New(ctx, metricOptions(s)...)
		if err != nil {
			spans.Shutdown(ctx)
			return nil, fmt.Errorf("telemetry: metric exporter: %w", err)
		}
		reader = sdkmetric.NewPeriodicReader(exp) // interval: OTEL_METRIC_EXPORT_INTERVAL, else 60 s
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithBatcher(spans)}
	if s.SampleRatio > 0 {
		tpOpts = append(tpOpts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(s.SampleRatio))))
	}
	t := &Telemetry{
		clk:     clock.Or(o.Clock),
		tp:      sdktrace.NewTracerProvider(tpOpts...),
		mp:      sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader)),
		capture: s.CaptureContent,
	}
	t.tracer = t.tp.Tracer(scope)
	if t.inst, err = newInstruments(t.mp.Meter(scope), s.latest); err != nil {
		t.Shutdown(ctx)
		return nil, err
	}
	return t, nil
}

// newResource describes the gateway: service.name from the configuration,
// else OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES, else "fusebox"
// (later detectors override earlier ones).
func newResource(ctx context.Context, serviceName string) (*resource.Resource, error) {
	opts := []resource.Option{
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "fusebox")),
		resource.WithFromEnv(),
	}
	if serviceName != "" {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", serviceName)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil
}

func traceOptions(s settings) []otlptracehttp.Option {
	var o []otlptracehttp.Option
	if s.Endpoint != "" {
		o = append(o, otlptracehttp.WithEndpointURL(s.signalURL("traces")))
	}
	if s.Headers != nil {
		o = append(o, otlptracehttp.WithHeaders(s.Headers))
	}
	if s.Timeout > 0 {
		o = append(o, otlptracehttp.WithTimeout(s.Timeout))
	}
	return o
}

func metricOptions(s settings) []otlpmetrichttp.Option {
	var o []otlpmetrichttp.Option
	if s.Endpoint != "" {
		o = append(o, otlpmetrichttp.WithEndpointURL(s.signalURL("metrics")))
	}
	if s.Headers != nil {
		o = append(o, otlpmetrichttp.WithHeaders(s.Headers))
	}
	if s.Timeout > 0 {
		o = append(o, otlpmetrichttp.WithTimeout(s.Timeout))
	}
	return o
}

// CaptureContent reports whether message contents are recorded, so the
// gateway assembles an answer's text for Attempt.Output only when they are.
func (t *Telemetry) CaptureContent() bool { return t != nil && t.capture }

// ForceFlush exports every finished span and the current metrics now.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return errors.Join(t.tp.ForceFlush(ctx), t.mp.ForceFlush(ctx))
}

// Shutdown flushes what is buffered and stops the exporters' goroutines;
// call it once, when the gateway stops. Spans and metrics recorded after
// it are dropped.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}
