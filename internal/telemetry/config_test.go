package telemetry_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  telemetry.Config
		env  string // OTEL_EXPORTER_OTLP_PROTOCOL
		want string
	}{
		{telemetry.Config{Protocol: "grpc"}, "", `protocol "grpc" is not built in`},
		{telemetry.Config{Protocol: "http/json"}, "", `protocol "http/json"`},
		{telemetry.Config{}, "grpc", `protocol "grpc"`},
		{telemetry.Config{Endpoint: "collector:4318"}, "", "want an http:// or https:// URL"},
		{telemetry.Config{Endpoint: "http://c:4318/?x=1"}, "", "no query"},
		{telemetry.Config{SampleRatio: 1.5}, "", "sample_ratio 1.5"},
		{telemetry.Config{SampleRatio: -0.1}, "", "sample_ratio -0.1"},
		{telemetry.Config{Timeout: -1}, "", "timeout"},
	} {
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.env)
		c.cfg.Enabled = true
		tel, err := telemetry.New(context.Background(), c.cfg, telemetry.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "telemetry: ") {
			t.Errorf("New(%+v) = %v, %v; want an error with %q", c.cfg, tel, err, c.want)
			tel.Shutdown(context.Background())
		}
	}
}

// The configuration wins over the environment: service_name over
// OTEL_SERVICE_NAME, endpoint over OTEL_EXPORTER_OTLP_ENDPOINT.
func TestConfigOverridesEnv(t *testing.T) {
	elsewhere := newReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", elsewhere.URL())
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	tel, rc, clk := start(t, telemetry.Config{ServiceName: "from-config"})
	failover(t, tel, clk)
	tel.Shutdown(context.Background())
	if _, _, n := elsewhere.snapshot(); n != 0 {
		t.Errorf("%d exports went to OTEL_EXPORTER_OTLP_ENDPOINT; want them at the configured endpoint", n)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.resource["service.name"] != "from-config" || rc.resource["deployment.environment.name"] != "test" {
		t.Errorf("resource %v; want service.name from-config and OTEL_RESOURCE_ATTRIBUTES kept", rc.resource)
	}
}

// Without a configured service_name, OTEL_SERVICE_NAME names the service;
// without either, it is "fusebox".
func TestServiceNameFromEnv(t *testing.T) {
	for _, env := range []string{"from-env", ""} {
		t.Setenv("OTEL_SERVICE_NAME", env)
		tel, rc, clk := start(t, telemetry.Config{})
		failover(t, tel, clk)
		tel.Shutdown(context.Background())
		want := env
		if want == "" {
			want = "fusebox"
		}
		if got := rc.resource["service.name"]; got != want {
			t.Errorf("OTEL_SERVICE_NAME=%q: service.name %v; want %s", env, got, want)
		}
	}
}

// A sample ratio samples new traces at that rate, but a request whose
// traceparent is sampled is traced whatever the ratio; metrics are
// recorded either way.
func TestSampleRatio(t *testing.T) {
	tel, rc, clk := start(t, telemetry.Config{SampleRatio: 1e-12})
	failover(t, tel, clk) // sampled by its client
	_, req := tel.StartRequest(context.Background(), httptestRequest(), "chat", "fast", false, 0)
	req.StartAttempt(telemetry.AttemptInfo{Model: "m", Provider: "openai"}).End(telemetry.AttemptResult{})
	req.End(http.StatusOK, "")
	tel.Shutdown(context.Background())
	spans, metrics, _ := rc.snapshot()
	if len(spans) != 3 {
		t.Errorf("%d spans; want the 3 of the client-sampled request only", len(spans))
	}
	if p := histPoints(t, metrics, "gen_ai.client.operation.duration", "s"); len(p) != 3 {
		t.Errorf("%d duration points; want 3 (metrics ignore sampling)", len(p))
	}
}
