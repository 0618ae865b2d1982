package gateway

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Under the default breaker settings, a primary that was down for a minute
// serves again within 10 s of recovering: the open period starts at 5 s
// and grows by 1.5 to at most 8 s. One request a second (on the fake
// clock); the retry block only turns off the same-target retry, whose
// backoff would sleep on the fake clock.
func TestRecoveredPrimaryServesAgainWithinSeconds(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var down atomic.Bool
	down.Store(true)
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if down.Load() {
			status(503, "server_error")(w, r, n)
			return
		}
		chatOK("primary")(w, r, n)
	})
	s := newUpstream(t, chatOK("secondary"))
	const cfg = `
providers:
  primary: {type: openai, base_url: "%s", keys: [pk]}
  secondary: {type: openai, base_url: "%s", keys: [sk]}
models:
  - name: smart
    targets:
      - {provider: primary, model: gpt-4.1}
      - {provider: secondary, model: deepseek-chat}
    retry: {attempts: 1}
`
	_, gw := gateway(t, clk, cfg, p, s)
	served := func() string {
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		return resp.Header.Get("X-Fusebox-Target")
	}
	for range 60 {
		served()
		clk.Advance(time.Second)
	}
	down.Store(false)
	for i := 0; ; i++ {
		if served() == "primary/gpt-4.1" {
			t.Logf("back on the primary %d s after it recovered", i)
			return
		}
		if i >= 10 {
			t.Fatalf("still not back on the primary %d s after it recovered", i)
		}
		clk.Advance(time.Second)
	}
}
