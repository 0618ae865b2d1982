package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/openai/openai-go/v3/option"
)

// The same-target retry: the user asked for a model, so one transient
// failure on a target whose breaker is closed is tried there once more
// before the walk fails over.

// servedBy makes a request and returns the target that answered.
func servedBy(t *testing.T, base string) string {
	t.Helper()
	c := newClient(base)
	var resp *http.Response
	if _, err := c.Chat.Completions.New(t.Context(), params("smart"), option.WithResponseInto(&resp)); err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get("X-Fusebox-Target")
}

// onceThen answers with first on the first call and chatOK after.
func onceThen(first func(http.ResponseWriter, *http.Request, int), who string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			first(w, r, n)
			return
		}
		chatOK(who)(w, r, n)
	}
}

func TestSameTargetRetry(t *testing.T) {
	for _, tc := range []struct {
		name, retry string
		first       func(http.ResponseWriter, *http.Request, int)
		want        string
		primary     int // calls
		secondary   int
		failovers   float64 // from the primary
	}{
		{"500 then 200", "", status(500, "server_error"), "primary/gpt-4.1", 2, 0, 0},
		{"500 with attempts 1", "    retry: {attempts: 1}\n", status(500, "server_error"), "secondary/deepseek-chat", 1, 1, 1},
		{"500 with same_target_wait 0", "    retry: {same_target_wait: 0s}\n", status(500, "server_error"), "secondary/deepseek-chat", 1, 1, 1},
		{"429 Retry-After 1 then 200", "", status(429, "rate_limit_exceeded", "Retry-After", "1"), "primary/gpt-4.1", 2, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := newUpstream(t, onceThen(tc.first, "primary")), newUpstream(t, chatOK("secondary"))
			srv, gw := gateway(t, nil, silentLadder("{ttfb: 5s}", tc.retry), p, s)
			if got := servedBy(t, gw.URL); got != tc.want {
				t.Fatalf("served by %q; want %s", got, tc.want)
			}
			if p.calls() != tc.primary || s.calls() != tc.secondary {
				t.Fatalf("calls: primary %d, secondary %d; want %d, %d", p.calls(), s.calls(), tc.primary, tc.secondary)
			}
			if st := breakerState(t, srv, "primary/gpt-4.1"); st != breaker.StateClosed {
				t.Fatalf("primary breaker %v", st)
			}
			if n := metricSum(t, gw.URL, `fusebox_failovers_total{target="primary/gpt-4.1",`); n != tc.failovers {
				t.Fatalf("fusebox_failovers_total for the primary is %v; want %v", n, tc.failovers)
			}
		})
	}
}

// Providers count rate limits per model: a 429 on one model of a
// provider rests its key for that model only, so the next rung, another
// model of the same provider with the same key, serves at once, and goes
// on serving while the first model rests.
func TestThrottleRestsTheKeyForOneModel(t *testing.T) {
	var p *upstream
	p = newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		p.mu.Lock()
		body := p.bodies[n-1]
		p.mu.Unlock()
		if strings.Contains(body, `"model":"model-a"`) {
			status(429, "rate_limit_exceeded", "Retry-After", "30")(w, r, n)
			return
		}
		chatOK("model-b")(w, r, n)
	})
	srv, gw := gateway(t, nil, `
providers:
  p: {type: openai, base_url: "%s", keys: [only-key]}
models:
  - name: smart
    targets:
      - {provider: p, model: model-a}
      - {provider: p, model: model-b}
    breaker: {consecutive: 3, open: 10s}
`, p)
	for i := range 2 {
		if got := servedBy(t, gw.URL); got != "p/model-b" {
			t.Fatalf("request %d served by %q; want p/model-b", i, got)
		}
	}
	a, b := 0, 0
	p.mu.Lock()
	for _, body := range p.bodies {
		switch {
		case strings.Contains(body, `"model":"model-a"`):
			a++
		case strings.Contains(body, `"model":"model-b"`):
			b++
		}
	}
	p.mu.Unlock()
	if a != 1 || b != 2 {
		t.Fatalf("model-a got %d calls, model-b %d; want 1 (then it rests) and 2", a, b)
	}
	if tot := totals(t, srv, "p/model-a"); tot.Failed != 0 {
		t.Fatalf("the throttle reached model-a's breaker: %+v", tot)
	}
}
