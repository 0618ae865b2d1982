package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// A request that fails over once is one SERVER span continuing the
// client's trace, with a CLIENT span per attempt (the failed one carrying
// error.type), the upstream sent the attempt's trace context, and the
// GenAI metrics recorded for both attempts.
func TestTracesARequestThatFailsOver(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	p, s := newUpstream(t, status(http.StatusServiceUnavailable, "overloaded_error")), newUpstream(t, chatOK("secondary"))
	cfg := "otel: {enabled: true, endpoint: \"http://127.0.0.1:1\"}\n" + twoTargets
	srv, gw := start(t, Options{Telemetry: telemetryOptions(spans, reader)}, cfg, p, s)
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions", strings.NewReader(`{"model":"smart","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Traceparent", parent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if srv.tel == nil {
		t.Fatal("telemetry is off")
	}
	srv.tel.ForceFlush(t.Context()) // Close would flush too, and the in-memory exporter drop them
	got := spans.GetSpans()
	var server, failed, served *tracetest.SpanStub
	for i := range got {
		sp := &got[i]
		switch {
		case sp.SpanKind == oteltrace.SpanKindServer:
			server = sp
		case sp.SpanKind == oteltrace.SpanKindClient && sp.Name == "chat gpt-4.1":
			failed = sp
		case sp.SpanKind == oteltrace.SpanKindClient && sp.Name == "chat deepseek-chat":
			served = sp
		}
	}
	if server == nil || failed == nil || served == nil {
		t.Fatalf("spans %v; want a server span and two attempts", names(got))
	}
	if server.SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || server.Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("the server span does not continue the client's trace: %v parent %v", server.SpanContext.TraceID(), server.Parent.SpanID())
	}
	for _, sp := range []*tracetest.SpanStub{failed, served} {
		if sp.Parent.SpanID() != server.SpanContext.SpanID() {
			t.Errorf("%s is not a child of the request's span", sp.Name)
		}
	}
	if v, ok := attr(failed.Attributes, "error.type"); !ok || v != "outage" {
		t.Errorf("the failed attempt's error.type = %q, %v", v, ok)
	}
	if v, _ := attr(served.Attributes, "gen_ai.usage.output_tokens"); v != "3" {
		t.Errorf("the served attempt's output tokens = %q", v)
	}
	if v, _ := attr(served.Attributes, "fusebox.target"); v != "secondary/deepseek-chat" {
		t.Errorf("fusebox.target = %q", v)
	}
	if tp := s.header(0).Get("Traceparent"); !strings.Contains(tp, "0af7651916cd43dd8448eb211c80319c") || strings.Contains(tp, "b7ad6b7169203331") {
		t.Errorf("the upstream got traceparent %q; want the trace, with the attempt's own span", tp)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "gen_ai.client.operation.duration" {
				for _, dp := range h.DataPoints {
					points += int(dp.Count)
				}
			}
		}
	}
	if points != 2 {
		t.Errorf("gen_ai.client.operation.duration recorded %d attempts; want 2", points)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func attr(kvs []attribute.KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

func telemetryOptions(spans *tracetest.InMemoryExporter, reader sdkmetric.Reader) telemetry.Options {
	return telemetry.Options{SpanExporter: spans, MetricReader: reader}
}

// discardTelemetry exports to nowhere, for benchmarks: the spans are made
// and ended, and dropped.
func discardTelemetry() telemetry.Options {
	return telemetry.Options{SpanExporter: tracetest.NewNoopExporter(), MetricReader: sdkmetric.NewManualReader()}
}
