package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// servedSpan sends body to path and returns the one attempt span.
func servedSpan(t *testing.T, cfg, path, body string, header http.Header, ups ...*upstream) tracetest.SpanStub {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	srv, gw := start(t, Options{Telemetry: telemetryOptions(spans, sdkmetric.NewManualReader())},
		"otel: {enabled: true, endpoint: \"http://127.0.0.1:1\"}\n"+cfg, ups...)
	req, _ := http.NewRequest("POST", gw.URL+path, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	srv.tel.ForceFlush(t.Context())
	var found []tracetest.SpanStub
	for _, sp := range spans.GetSpans() {
		if sp.SpanKind == oteltrace.SpanKindClient {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d attempt spans; want 1", len(found))
	}
	return found[0]
}

func wantAttrs(t *testing.T, sp tracetest.SpanStub, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got, ok := attr(sp.Attributes, k); !ok || got != v {
			t.Errorf("%s = %q (set: %v); want %q", k, got, ok, v)
		}
	}
}

// The attempt's span says what the answer says of itself: its id, the
// model that wrote it (which may differ from the one asked for) and why
// each choice ended, for a plain answer, an OpenAI stream with two
// choices, and Anthropic's own answers and streams.
func TestSpansCarryTheResponseAttributes(t *testing.T) {
	const one = `
providers:
  p: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: chat
    targets: [{provider: p, model: gpt-4.1}]
`
	t.Run("answer", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"chatcmpl-abc","object":"chat.completion","model":"gpt-4.1-2025-04-14",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"length"}],`+
				`"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		})
		sp := servedSpan(t, one, "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, nil, up)
		wantAttrs(t, sp, map[string]string{"gen_ai.response.id": "chatcmpl-abc", "gen_ai.response.model": "gpt-4.1-2025-04-14", "gen_ai.response.finish_reasons": `["length"]`})
	})
	t.Run("stream with two choices", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, d := range []string{
				`{"id":"chatcmpl-s","model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"a"}},{"index":1,"delta":{"content":"b"}}]}`,
				`{"id":"chatcmpl-s","model":"gpt-4.1-mini","choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}`,
				`{"id":"chatcmpl-s","model":"gpt-4.1-mini","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
				`{"id":"chatcmpl-s","model":"gpt-4.1-mini","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
				`[DONE]`,
			} {
				fmt.Fprintf(w, "data: %s\n\n", d)
			}
		})
		sp := servedSpan(t, one, "/v1/chat/completions", `{"model":"chat","n":2,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil, up)
		wantAttrs(t, sp, map[string]string{"gen_ai.response.id": "chatcmpl-s", "gen_ai.response.model": "gpt-4.1-mini", "gen_ai.response.finish_reasons": `["length","stop"]`})
	})
	t.Run("a hostile choice index", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","model":"m","choices":[{"index":2000000000,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"},`+
				`{"index":-1,"finish_reason":"stop"},{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],`+
				`"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		})
		sp := servedSpan(t, one, "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, nil, up)
		wantAttrs(t, sp, map[string]string{"gen_ai.response.finish_reasons": `["stop"]`})
	})
	anthropicOnly := `
providers:
  claude: {type: anthropic, base_url: "%s", keys: [ak1]}
models:
  - name: smart
    targets: [{provider: claude, model: claude-opus-4-7}]
`
	messages := `{"model":"smart","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	h := http.Header{"Anthropic-Version": {"2023-06-01"}}
	t.Run("anthropic answer", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-opus-4-7-20260101","content":[{"type":"text","text":"hi"}],`+
				`"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
		})
		sp := servedSpan(t, anthropicOnly, "/v1/messages", messages, h, up)
		wantAttrs(t, sp, map[string]string{"gen_ai.response.id": "msg_01", "gen_ai.response.model": "claude-opus-4-7-20260101", "gen_ai.response.finish_reasons": `["end_turn"]`})
	})
	t.Run("anthropic stream", func(t *testing.T) {
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range [][2]string{
				{"message_start", `{"type":"message_start","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-opus-4-7-20260101","content":[],"usage":{"input_tokens":3,"output_tokens":0}}}`},
				{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
				{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`},
				{"content_block_stop", `{"type":"content_block_stop","index":0}`},
				{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":10}}`},
				{"message_stop", `{"type":"message_stop"}`},
			} {
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e[0], e[1])
			}
		})
		sp := servedSpan(t, anthropicOnly, "/v1/messages", strings.Replace(messages, `"max_tokens":10`, `"max_tokens":10,"stream":true`, 1), h, up)
		wantAttrs(t, sp, map[string]string{"gen_ai.response.id": "msg_02", "gen_ai.response.model": "claude-opus-4-7-20260101", "gen_ai.response.finish_reasons": `["max_tokens"]`})
	})
}
