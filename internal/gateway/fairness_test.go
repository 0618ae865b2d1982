package gateway

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// When a target is at its concurrency limit, the requests waiting for it
// are served by weighted fair queueing across client keys: with weights 1
// and 3 and both clients backlogged, the heavier gets three slots in four,
// however many requests the lighter one queued first.
func TestSaturatedTargetIsSharedByClientWeight(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var served []string
	var p *upstream
	p = newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		// The user field names the client in this test.
		var body struct{ User string }
		p.mu.Lock()
		json.Unmarshal([]byte(p.bodies[n-1]), &body)
		p.mu.Unlock()
		mu.Lock()
		served = append(served, body.User)
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		chatOK(body.User)(w, r, n)
	})
	srv, gw := gateway(t, nil, `
clients:
  - {name: light, key: kl, weight: 1}
  - {name: heavy, key: kh, weight: 3}
providers:
  p: {type: openai, base_url: "%s", keys: [k], limits: {max_in_flight: 1, max_wait: 5m}}
models:
  - name: m
    targets: [{provider: p, model: x}]
    retry: {attempts: 1}
`, p)
	ask := func(key, user string) {
		c := newClient(gw.URL, option.WithAPIKey(key))
		pr := params("m")
		pr.User = openai.String(user)
		if _, err := c.Chat.Completions.New(t.Context(), pr); err != nil {
			t.Errorf("%s: %v", user, err)
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(release)
	wg.Add(1)
	go func() { defer wg.Done(); ask("kl", "light") }() // holds the one slot
	eventually(t, "the first call upstream", func() bool { return p.calls() == 1 })
	// The light client queues its whole burst before the heavy one starts.
	const each = 40
	for _, c := range []struct{ key, user string }{{"kl", "light"}, {"kh", "heavy"}} {
		for range each {
			wg.Add(1)
			go func() { defer wg.Done(); ask(c.key, c.user) }()
		}
		want := each
		if c.user == "heavy" {
			want = 2 * each
		}
		eventually(t, "the queue", func() bool { return srv.Router().Targets()[0].Queued() == want })
	}
	// Free the slot 40 times, one at a time, and see who gets it.
	const rounds = 40
	for i := range rounds {
		release <- struct{}{}
		eventually(t, "the next call upstream", func() bool { return p.calls() == i+2 })
	}
	mu.Lock()
	heavy := 0
	for _, who := range served[1 : rounds+1] {
		if who == "heavy" {
			heavy++
		}
	}
	mu.Unlock()
	// Within 10% of the 75% share.
	if share := float64(heavy) / rounds; share < 0.65 || share > 0.85 {
		t.Fatalf("the heavy client got %d of %d slots (%.0f%%), want 75%% ± 10%%", heavy, rounds, 100*share)
	}
}
