package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/telemetry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// request is the gateway's whole use of the API for a request that fails
// over once, streaming its answer; h is the upstream request's headers.
func request(tel *telemetry.Telemetry, r *http.Request, h http.Header, reasons []string) {
	ctx, req := tel.StartRequest(r.Context(), r, "chat", "fast", true, 256)
	_ = ctx
	req.SetAlias("fast")
	req.Input(nil)
	req.Skip("stale/gpt-4o", "breaker open")
	a := req.StartAttempt(telemetry.AttemptInfo{Target: "primary/gpt-4.1", Provider: "openai", ProviderType: "openai",
		Model: "gpt-4.1", ServerAddress: "api.openai.com", ServerPort: 443, Number: 1, BreakerState: "closed", Stream: true, MaxTokens: 256})
	a.Inject(h)
	a.End(telemetry.AttemptResult{ErrType: "outage", Status: 503})
	a = req.StartAttempt(telemetry.AttemptInfo{Target: "backup/gpt-4.1-mini", Provider: "openai", ProviderType: "openai",
		Model: "gpt-4.1-mini", ServerAddress: "api.openai.com", ServerPort: 443, Number: 2, BreakerState: "closed",
		FailoverReason: "outage", Stream: true, MaxTokens: 256})
	a.Inject(h)
	a.FirstChunk()
	for range 8 {
		a.Chunk()
	}
	a.Output("hello", "stop")
	a.End(telemetry.AttemptResult{ResponseModel: "gpt-4.1-mini-2025-04-14", FinishReasons: reasons,
		InputTokens: 12, OutputTokens: 34, Cost: 0.0001, Status: 200})
	req.End(200, "")
}

// Off: New returns a nil *Telemetry, nothing is exported, nothing is
// written to the upstream's headers, and a request allocates nothing.
func TestOff(t *testing.T) {
	rc := newReceiver(t)
	for _, c := range []struct {
		name string
		cfg  telemetry.Config
		env  string
	}{
		{"disabled", telemetry.Config{Endpoint: rc.URL()}, ""},
		{"OTEL_SDK_DISABLED", telemetry.Config{Enabled: true, Endpoint: rc.URL()}, "true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_SDK_DISABLED", c.env)
			tel, err := telemetry.New(context.Background(), c.cfg, telemetry.Options{})
			if err != nil || tel != nil {
				t.Fatalf("New = %v, %v; want nil, nil", tel, err)
			}
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			r.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
			h := http.Header{}
			reasons := []string{"stop"}
			if n := testing.AllocsPerRun(100, func() { request(tel, r, h, reasons) }); n != 0 {
				t.Errorf("a request allocates %v times with telemetry off; want 0", n)
			}
			if len(h) != 0 {
				t.Errorf("upstream headers %v; want none", h)
			}
			if tel.CaptureContent() || tel.ForceFlush(context.Background()) != nil || tel.Shutdown(context.Background()) != nil {
				t.Error("a nil Telemetry's methods did something")
			}
		})
	}
	if _, _, n := rc.snapshot(); n != 0 {
		t.Errorf("%d exports received with telemetry off; want 0", n)
	}
}

// discard is a span exporter that drops everything.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

func benchmarkRequest(b *testing.B, tel *telemetry.Telemetry) {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	r.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	reasons := []string{"stop"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		h := http.Header{}
		for pb.Next() {
			request(tel, r, h, reasons)
		}
	})
}

// BenchmarkRequestOff is a request's telemetry cost with telemetry off
// (a nil *Telemetry): none.
func BenchmarkRequestOff(b *testing.B) { benchmarkRequest(b, nil) }

// BenchmarkRequestOn is its cost with telemetry on, every trace sampled,
// spans going to a no-op exporter and metrics to a manual reader.
func BenchmarkRequestOn(b *testing.B) {
	tel, err := telemetry.New(context.Background(), telemetry.Config{Enabled: true},
		telemetry.Options{SpanExporter: discard{}, MetricReader: sdkmetric.NewManualReader()})
	if err != nil {
		b.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	benchmarkRequest(b, tel)
}
