package gateway

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// BenchmarkAPIs is the same answer asked for in each client API the
// gateway speaks, through the handler to a loopback chat upstream: what
// the Responses translation (and, with otel on, tracing) adds to a
// request beside plain chat.
func BenchmarkAPIs(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "event-stream") {
			usageStream(w, r, 1, `"include_usage":true`)
			return
		}
		chatOK("up")(w, r, 1)
	}))
	defer up.Close()
	for _, tc := range []struct{ name, path, body, otel string }{
		{"chat", "/v1/chat/completions", `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`, ""},
		{"responses", "/v1/responses", `{"model":"smart","input":"hi","store":false}`, ""},
		{"responses-stored", "/v1/responses", `{"model":"smart","input":"hi"}`, ""},
		{"chat-stream", "/v1/chat/completions", `{"model":"smart","messages":[{"role":"user","content":"hi"}],"stream":true}`, ""},
		{"responses-stream", "/v1/responses", `{"model":"smart","input":"hi","stream":true,"store":false}`, ""},
		{"chat-otel", "/v1/chat/completions", `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`, "otel: {enabled: true}\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg, err := config.Parse("b.yaml", []byte(fmt.Sprintf(tc.otel+`providers:
  up: {type: openai, base_url: "%s/v1", keys: [k]}
models:
  - {name: smart, targets: [{provider: up, model: m, price: {input: 1, output: 1}}]}
`, up.URL)), func(string) (string, bool) { return "", false })
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
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
