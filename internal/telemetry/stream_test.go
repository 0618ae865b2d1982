package telemetry_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

// stream drives one streamed attempt: the first chunk after 200 ms, two
// more after 50 ms and 30 ms.
func stream(tel *telemetry.Telemetry, clk *clocktest.Clock, res telemetry.AttemptResult) {
	_, req := tel.StartRequest(context.Background(), httptestRequest(), "chat", "fast", true, 0)
	a := req.StartAttempt(telemetry.AttemptInfo{Target: "p/m", Provider: "openai", Model: "m",
		ServerAddress: "127.0.0.1", ServerPort: 9090, Number: 1, Stream: true})
	clk.Advance(200 * time.Millisecond)
	a.FirstChunk()
	a.FirstChunk() // only the first counts
	clk.Advance(50 * time.Millisecond)
	a.Chunk()
	clk.Advance(30 * time.Millisecond)
	a.Chunk()
	a.End(res)
	a.End(telemetry.AttemptResult{ErrType: "outage"}) // only the first counts
	req.End(200, "")
}

func httptestRequest() *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "http://fusebox/v1/chat/completions", nil)
	return r
}

func TestStreamMetrics(t *testing.T) {
	tel, rc, clk := start(t, telemetry.Config{})
	stream(tel, clk, telemetry.AttemptResult{ResponseModel: "m-1", FinishReasons: []string{"stop"}, InputTokens: 3, OutputTokens: 7})
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans, metrics, _ := rc.snapshot()
	base := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m",
		"server.address": "127.0.0.1", "server.port": int64(9090)}

	ttfc := histPoints(t, metrics, "gen_ai.client.operation.time_to_first_chunk", "s")
	if p := findPoint(t, ttfc, base); p.GetCount() != 1 || !near(p.GetSum(), 0.2) {
		t.Errorf("time to first chunk: count %d sum %v; want one of 0.2 s", p.GetCount(), p.GetSum())
	}
	per := histPoints(t, metrics, "gen_ai.client.operation.time_per_output_chunk", "s")
	if p := findPoint(t, per, base); p.GetCount() != 2 || !near(p.GetSum(), 0.08) {
		t.Errorf("time per output chunk: count %d sum %v; want two summing to 0.08 s", p.GetCount(), p.GetSum())
	}
	dur := histPoints(t, metrics, "gen_ai.client.operation.duration", "s")
	if p := findPoint(t, dur, base); p.GetCount() != 1 || !near(p.GetSum(), 0.28) {
		t.Errorf("duration: count %d sum %v; want one of 0.28 s (a second End does not count)", p.GetCount(), p.GetSum())
	}

	for _, s := range spans {
		if s.Kind.String() != "SPAN_KIND_CLIENT" {
			wantAttrs(t, "request", s.attrs, map[string]any{"gen_ai.request.stream": true}, "gen_ai.request.max_tokens")
			continue
		}
		wantAttrs(t, "attempt", s.attrs, map[string]any{"gen_ai.request.stream": true,
			"gen_ai.response.time_to_first_chunk": 0.2}, "error.type")
	}
}

// A stream that breaks after its first chunk reports the finish reason
// it never received as "error".
func TestBrokenStreamFinishReason(t *testing.T) {
	tel, rc, clk := start(t, telemetry.Config{})
	stream(tel, clk, telemetry.AttemptResult{ErrType: "outage", InputTokens: 3})
	tel.Shutdown(context.Background())
	spans, _, _ := rc.snapshot()
	for _, s := range spans {
		if s.Name == "chat m" {
			wantAttrs(t, "attempt", s.attrs, map[string]any{"error.type": "outage",
				"gen_ai.response.finish_reasons": []any{"error"}})
			return
		}
	}
	t.Fatal("no attempt span")
}

// With OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental the
// metrics take the latest conventions' names and shapes; the exports are
// gzipped when OTEL_EXPORTER_OTLP_COMPRESSION says so.
func TestLatestConventions(t *testing.T) {
	t.Setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "http,gen_ai_latest_experimental")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	tel, rc, clk := start(t, telemetry.Config{})
	stream(tel, clk, telemetry.AttemptResult{ResponseModel: "m-1", InputTokens: 30, OutputTokens: 7, CacheReadTokens: 20, CacheWriteTokens: 4})
	failover(t, tel, clk)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, metrics, _ := rc.snapshot()
	for _, old := range []string{"gen_ai.client.operation.duration", "gen_ai.client.token.usage", "gen_ai.client.operation.time_to_first_chunk"} {
		if metrics[old] != nil {
			t.Errorf("%s exported with the latest conventions chosen", old)
		}
	}
	dur := histPoints(t, metrics, "gen_ai.client.inference.duration", "s")
	findPoint(t, dur, map[string]any{"error.type": "outage", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4.1"})
	histPoints(t, metrics, "gen_ai.client.inference.time_to_first_chunk", "s")
	histPoints(t, metrics, "gen_ai.client.inference.time_per_output_chunk", "s")
	opIn := histPoints(t, metrics, "gen_ai.client.inference.operation.input_tokens", "{token}")
	if p := findPoint(t, opIn, map[string]any{"error.type": "outage"}); p.GetSum() != 0 {
		t.Errorf("failed attempt's input tokens %v; want 0", p.GetSum())
	}
	for name, want := range map[string]int64{
		"gen_ai.client.inference.usage.input_tokens":             30 + 12,
		"gen_ai.client.inference.usage.output_tokens":            7 + 34,
		"gen_ai.client.inference.usage.cache_read.input_tokens":  20 + 5,
		"gen_ai.client.inference.usage.cache_write.input_tokens": 4,
	} {
		m := metrics[name]
		if m == nil || m.GetSum() == nil || !m.GetSum().IsMonotonic || m.Unit != "{token}" {
			t.Errorf("%s: %v; want a monotonic {token} counter", name, m)
			continue
		}
		var total int64
		for _, p := range m.GetSum().DataPoints {
			if got := attrMap(p.Attributes)["gen_ai.token.modality"]; got != "unknown" {
				t.Errorf("%s: modality %v; want unknown", name, got)
			}
			total += p.GetAsInt()
		}
		if total != want {
			t.Errorf("%s = %d; want %d", name, total, want)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gzipped == 0 {
		t.Error("no export was gzipped")
	}
}
