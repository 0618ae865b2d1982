package gateway

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// BenchmarkDashboardRequestPath is a chat completion through the handler
// to a loopback upstream from 50 concurrent clients, with the admin API
// (and so the dashboard's hooks and sampler) off and on: what the
// dashboard costs a request. Metrics stay on, since the dashboard reads
// them.
func BenchmarkDashboardRequestPath(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { chatOK("up")(w, r, 1) }))
	defer up.Close()
	for _, admin := range []string{"", "admin_token: adm\n"} {
		name := "dashboard=off"
		if admin != "" {
			name = "dashboard=on"
		}
		b.Run(name+"/c=50", func(b *testing.B) {
			cfg, err := config.Parse("b.yaml", []byte(fmt.Sprintf(admin+`providers:
  up: {type: openai, base_url: "%s/v1", keys: [k]}
models:
  - {name: smart, targets: [{provider: up, model: m, price: {input: 1, output: 1}}]}
`, up.URL)), func(string) (string, bool) { return "", false })
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := s.Handler()
			const body = `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`
			b.SetParallelism((50 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
					if rec.Code != 200 {
						b.Errorf("%d %s", rec.Code, rec.Body)
						return
					}
				}
			})
		})
	}
}
