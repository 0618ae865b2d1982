package telemetry_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/telemetry"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The client's trace, as its traceparent header names it.
const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// start returns telemetry exporting to a new receiver, on a fake clock.
func start(t *testing.T, cfg telemetry.Config) (*telemetry.Telemetry, *receiver, *clocktest.Clock) {
	t.Helper()
	rc := newReceiver(t)
	clk := clocktest.New(t0)
	cfg.Enabled, cfg.Endpoint = true, rc.URL()
	tel, err := telemetry.New(context.Background(), cfg, telemetry.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	return tel, rc, clk
}

// clientRequest is a chat request arriving with the client's traceparent.
func clientRequest() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	r.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	r.Header.Set("tracestate", "vendor=1")
	return r
}

// failover drives the API as the gateway does for a request that fails
// over once: the first target answers 503 (an outage), the second
// answers. It returns the traceparent sent with each attempt.
func failover(t *testing.T, tel *telemetry.Telemetry, clk *clocktest.Clock) (sent [2]string) {
	t.Helper()
	_, req := tel.StartRequest(context.Background(), clientRequest(), "chat", "fast", false, 256)
	req.SetAlias("fast")
	req.Skip("stale/gpt-4o", "breaker open")

	a1 := req.StartAttempt(telemetry.AttemptInfo{
		Target: "primary/gpt-4.1", Provider: "openai", ProviderType: "openai", Model: "gpt-4.1",
		ServerAddress: "api.openai.com", ServerPort: 443, Number: 1, BreakerState: "closed", MaxTokens: 256,
	})
	h := http.Header{}
	a1.Inject(h)
	sent[0] = h.Get("traceparent")
	clk.Advance(120 * time.Millisecond)
	a1.End(telemetry.AttemptResult{ErrType: "outage", Status: 503})

	a2 := req.StartAttempt(telemetry.AttemptInfo{
		Target: "backup/claude-sonnet-4-5", ProviderType: "anthropic", Model: "claude-sonnet-4-5",
		ServerAddress: "api.anthropic.com", ServerPort: 443, Number: 2, BreakerState: "closed",
		FailoverReason: "outage", MaxTokens: 256,
	})
	h = http.Header{}
	a2.Inject(h)
	sent[1] = h.Get("traceparent")
	clk.Advance(800 * time.Millisecond)
	a2.End(telemetry.AttemptResult{
		ResponseModel: "claude-sonnet-4-5-20250929", FinishReasons: []string{"stop"},
		InputTokens: 12, OutputTokens: 34, CacheReadTokens: 5, Cost: 0.0012, Status: 200,
	})
	req.End(200, "")
	return sent
}

func TestFailoverSpans(t *testing.T) {
	tel, rc, clk := start(t, telemetry.Config{ServiceName: "fusebox-test"})
	sent := failover(t, tel, clk)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans, _, _ := rc.snapshot()
	if len(spans) != 3 {
		t.Fatalf("got %d spans; want 3 (request, two attempts)", len(spans))
	}
	byName := map[string]gotSpan{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	req, a1, a2 := byName["chat fast"], byName["chat gpt-4.1"], byName["chat claude-sonnet-4-5"]
	if req.Span == nil || a1.Span == nil || a2.Span == nil {
		t.Fatalf("span names %v; want chat fast, chat gpt-4.1, chat claude-sonnet-4-5", slices.Collect(maps.Keys(byName)))
	}
	if got := rc.resource["service.name"]; got != "fusebox-test" {
		t.Errorf("service.name = %v; want fusebox-test", got)
	}

	// The request continues the client's trace; the attempts are its children.
	if got := hex.EncodeToString(req.TraceId); got != clientTrace {
		t.Errorf("request trace %s; want the client's %s", got, clientTrace)
	}
	if got := hex.EncodeToString(req.ParentSpanId); got != clientSpan {
		t.Errorf("request parent %s; want the client's span %s", got, clientSpan)
	}
	if req.TraceState != "vendor=1" {
		t.Errorf("request tracestate %q; want vendor=1", req.TraceState)
	}
	for i, a := range []gotSpan{a1, a2} {
		if !bytes.Equal(a.TraceId, req.TraceId) || !bytes.Equal(a.ParentSpanId, req.SpanId) {
			t.Errorf("attempt %d: trace %x parent %x; want trace %x parent %x", i+1, a.TraceId, a.ParentSpanId, req.TraceId, req.SpanId)
		}
		want := fmt.Sprintf("00-%s-%x-01", clientTrace, a.SpanId)
		if sent[i] != want {
			t.Errorf("attempt %d sent traceparent %q; want %q", i+1, sent[i], want)
		}
	}
	if req.Kind != tracepb.Span_SPAN_KIND_SERVER || a1.Kind != tracepb.Span_SPAN_KIND_CLIENT || a2.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("kinds %v, %v, %v; want SERVER, CLIENT, CLIENT", req.Kind, a1.Kind, a2.Kind)
	}

	wantAttrs(t, "request", req.attrs, map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "fast", "gen_ai.request.max_tokens": int64(256),
		"http.request.method": "POST", "url.path": "/v1/chat/completions", "http.response.status_code": int64(200),
		"fusebox.alias": "fast", "fusebox.attempts": int64(2),
	}, "error.type", "gen_ai.request.stream")
	wantAttrs(t, "attempt 1", a1.attrs, map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1",
		"server.address": "api.openai.com", "server.port": int64(443), "gen_ai.request.max_tokens": int64(256),
		"fusebox.target": "primary/gpt-4.1", "fusebox.attempt": int64(1), "fusebox.breaker.state": "closed",
		"fusebox.provider.type": "openai", "error.type": "outage", "http.response.status_code": int64(503),
		"gen_ai.usage.input_tokens": int64(0), "gen_ai.usage.output_tokens": int64(0),
	}, "fusebox.failover.reason", "gen_ai.response.model", "fusebox.cost_usd")
	wantAttrs(t, "attempt 2", a2.attrs, map[string]any{
		"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
		"gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.response.finish_reasons": []any{"stop"},
		"gen_ai.usage.input_tokens": int64(12), "gen_ai.usage.output_tokens": int64(34),
		"gen_ai.usage.cache_read.input_tokens": int64(5), "fusebox.cost_usd": 0.0012,
		"fusebox.attempt": int64(2), "fusebox.failover.reason": "outage", "http.response.status_code": int64(200),
	}, "error.type", "gen_ai.input.messages", "gen_ai.output.messages")

	if a1.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || a2.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR ||
		req.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("statuses: request %v, attempt 1 %v, attempt 2 %v; want only attempt 1 an error", req.Status, a1.Status, a2.Status)
	}
	if d := time.Duration(a1.EndTimeUnixNano - a1.StartTimeUnixNano); d != 120*time.Millisecond {
		t.Errorf("attempt 1 lasted %v; want 120ms on the injected clock", d)
	}
	if req.StartTimeUnixNano != uint64(t0.UnixNano()) {
		t.Errorf("request started at %d; want the clock's %d", req.StartTimeUnixNano, t0.UnixNano())
	}

	if len(req.Events) != 1 || req.Events[0].Name != "fusebox.skip" {
		t.Fatalf("request events %v; want one fusebox.skip", req.Events)
	}
	wantAttrs(t, "skip event", attrMap(req.Events[0].Attributes),
		map[string]any{"fusebox.target": "stale/gpt-4o", "fusebox.skip.reason": "breaker open"})
}

func TestFailoverMetrics(t *testing.T) {
	tel, rc, clk := start(t, telemetry.Config{})
	failover(t, tel, clk)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, metrics, _ := rc.snapshot()

	dur := histPoints(t, metrics, "gen_ai.client.operation.duration", "s")
	failed := findPoint(t, dur, map[string]any{"error.type": "outage", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "gpt-4.1", "server.address": "api.openai.com", "server.port": int64(443), "gen_ai.operation.name": "chat"})
	ok := findPoint(t, dur, map[string]any{"gen_ai.provider.name": "anthropic",
		"gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.request.model": "claude-sonnet-4-5"})
	if _, has := pointAttrs(ok)["error.type"]; has {
		t.Errorf("successful attempt's duration has error.type: %v", pointAttrs(ok))
	}
	if len(dur) != 2 || failed.GetCount() != 1 || ok.GetCount() != 1 {
		t.Fatalf("duration points %d (counts %d, %d); want 2 of one each", len(dur), failed.GetCount(), ok.GetCount())
	}
	if !near(failed.GetSum(), 0.12) || !near(ok.GetSum(), 0.8) {
		t.Errorf("durations %v, %v; want 0.12 s and 0.8 s", failed.GetSum(), ok.GetSum())
	}
	wantBounds := []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	if !slices.Equal(ok.ExplicitBounds, wantBounds) {
		t.Errorf("duration buckets %v; want the conventions' %v", ok.ExplicitBounds, wantBounds)
	}

	usage := histPoints(t, metrics, "gen_ai.client.token.usage", "{token}")
	if len(usage) != 4 {
		t.Fatalf("token usage points %d; want 4 (input and output of both attempts)", len(usage))
	}
	for _, c := range []struct {
		provider, kind string
		sum            float64
	}{{"openai", "input", 0}, {"openai", "output", 0}, {"anthropic", "input", 12}, {"anthropic", "output", 34}} {
		p := findPoint(t, usage, map[string]any{"gen_ai.provider.name": c.provider, "gen_ai.token.type": c.kind})
		if p.GetSum() != c.sum || p.GetCount() != 1 {
			t.Errorf("%s %s tokens: sum %v count %d; want %v once", c.provider, c.kind, p.GetSum(), p.GetCount(), c.sum)
		}
	}
	if _, has := metrics["gen_ai.client.operation.time_to_first_chunk"]; has {
		t.Error("time to first chunk recorded for attempts that did not stream")
	}
}

// wantAttrs checks that got has every want attribute and none of absent.
func wantAttrs(t *testing.T, what string, got map[string]any, want map[string]any, absent ...string) {
	t.Helper()
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("%s: %s = %#v; want %#v", what, k, got[k], v)
		}
	}
	for _, k := range absent {
		if v, has := got[k]; has {
			t.Errorf("%s: %s = %#v; want none", what, k, v)
		}
	}
}

// histPoints returns the points of the histogram name, checking its unit.
func histPoints(t *testing.T, metrics map[string]*metricspb.Metric, name, unit string) []*metricspb.HistogramDataPoint {
	t.Helper()
	m := metrics[name]
	if m == nil {
		t.Fatalf("no metric %s among %v", name, slices.Sorted(maps.Keys(metrics)))
	}
	if m.Unit != unit {
		t.Errorf("%s unit %q; want %q", name, m.Unit, unit)
	}
	h := m.GetHistogram()
	if h == nil {
		t.Fatalf("%s is not a histogram: %v", name, m.Data)
	}
	return h.DataPoints
}

func pointAttrs(p *metricspb.HistogramDataPoint) map[string]any { return attrMap(p.Attributes) }

// findPoint returns the one point whose attributes include want.
func findPoint(t *testing.T, points []*metricspb.HistogramDataPoint, want map[string]any) *metricspb.HistogramDataPoint {
	t.Helper()
	var found *metricspb.HistogramDataPoint
	for _, p := range points {
		if hasAttrs(attrMap(p.Attributes), want) {
			if found != nil {
				t.Fatalf("two points match %v", want)
			}
			found = p
		}
	}
	if found == nil {
		var all []map[string]any
		for _, p := range points {
			all = append(all, attrMap(p.Attributes))
		}
		t.Fatalf("no point with %v among %v", want, all)
	}
	return found
}

func hasAttrs(got, want map[string]any) bool {
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			return false
		}
	}
	return true
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
