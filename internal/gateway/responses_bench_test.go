package gateway

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// BenchmarkAPIs is the same answer asked for in each client API the
// gateway speaks, through the handler to a loopback upstream: what the
// Responses translation (and, with otel on, tracing) adds to a request
// beside plain chat, and what passing a Responses request through to a
// target that serves the API itself ("native") costs.
func BenchmarkAPIs(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		streamed := strings.Contains(r.Header.Get("Accept"), "event-stream")
		switch {
		case r.URL.Path == "/v1/responses" && streamed:
			nativeStream(w)
		case r.URL.Path == "/v1/responses":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, nativeAnswer)
		case streamed:
			usageStream(w, r, 1, `"include_usage":true`)
		default:
			chatOK("up")(w, r, 1)
		}
	}))
	defer up.Close()
	for _, tc := range []struct {
		name, path, body, otel string
		native                 bool
	}{
		{"chat", "/v1/chat/completions", `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`, "", false},
		{"responses", "/v1/responses", `{"model":"smart","input":"hi","store":false}`, "", false},
		{"responses-native", "/v1/responses", `{"model":"smart","input":"hi","store":false}`, "", true},
		{"responses-stored", "/v1/responses", `{"model":"smart","input":"hi"}`, "", false},
		{"chat-stream", "/v1/chat/completions", `{"model":"smart","messages":[{"role":"user","content":"hi"}],"stream":true}`, "", false},
		{"responses-stream", "/v1/responses", `{"model":"smart","input":"hi","stream":true,"store":false}`, "", false},
		{"responses-native-stream", "/v1/responses", `{"model":"smart","input":"hi","stream":true,"store":false}`, "", true},
		{"chat-otel", "/v1/chat/completions", `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`, "otel: {enabled: true}\n", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg, err := config.Parse("b.yaml", []byte(fmt.Sprintf(tc.otel+`providers:
  up: {type: openai, base_url: "%s/v1", keys: [k], responses: %v}
models:
  - {name: smart, targets: [{provider: up, model: m, price: {input: 1, output: 1}}]}
`, up.URL, tc.native)), func(string) (string, bool) { return "", false })
			if err != nil {
				b.Fatal(err)
			}
			o := Options{Config: cfg, NoMetrics: true, Logger: slog.New(slog.DiscardHandler)}
			if tc.otel != "" {
				o.Telemetry = discardTelemetry()
			}
			s, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := s.Handler()
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body)))
				if rec.Code != 200 || (tc.native && !strings.Contains(rec.Body.String(), "resp_0c")) {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// nativeAnswer is a Responses answer of the same size as the chat one.
const nativeAnswer = `{"id":"resp_0c","object":"response","created_at":1,"status":"completed","model":"m","output":[` +
	`{"id":"msg_0c","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"hello from up","annotations":[]}]}],` +
	`"usage":{"input_tokens":3,"output_tokens":3,"total_tokens":6}}`

// nativeStream is the Responses stream of the same answer, in two deltas
// as usageStream's.
func nativeStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name, data string) { io.WriteString(w, "event: "+name+"\ndata: "+data+"\n\n") }
	ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_0c","object":"response","status":"in_progress","model":"m","output":[]}}`)
	ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_0c","type":"message","status":"in_progress","role":"assistant","content":[]}}`)
	ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_0c","output_index":0,"content_index":0,"delta":"Hel"}`)
	ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_0c","output_index":0,"content_index":0,"delta":"lo"}`)
	ev("response.output_item.done", `{"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"id":"msg_0c","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}}`)
	ev("response.completed", `{"type":"response.completed","sequence_number":5,"response":`+nativeAnswer+`}`)
}
