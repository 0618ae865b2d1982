package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// BenchmarkCacheHit is a chat completion answered from the response cache,
// through the gateway's handler (no upstream call).
func BenchmarkCacheHit(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { counting(w, r, 1) }))
	defer up.Close()
	for _, stream := range []bool{false, true} {
		b.Run(fmt.Sprintf("stream=%v", stream), func(b *testing.B) {
			cfg, err := config.Parse("b.yaml", []byte(fmt.Sprintf(`providers:
  up: {type: openai, base_url: "%s/v1", keys: [k]}
models:
  - {name: smart, targets: [{provider: up, model: m}], cache: {ttl: 1h}}
`, up.URL)), func(string) (string, bool) { return "", false })
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(Options{Config: cfg})
			if err != nil {
				b.Fatal(err)
			}
			body := `{"model":"smart","messages":[{"role":"user","content":"hi"}],"stream":` + fmt.Sprint(stream) + `}`
			serve := func() *httptest.ResponseRecorder {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
				s.Handler().ServeHTTP(rec, req)
				return rec
			}
			serve() // the miss that fills the cache
			b.ReportAllocs()
			for b.Loop() {
				if rec := serve(); rec.Header().Get("X-Fusebox-Cache") != "hit" {
					b.Fatalf("not a hit: %d %v", rec.Code, rec.Header())
				}
			}
		})
	}
}
