package router

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// When a target's rate limit is spent, the requests waiting for it reach
// it in weighted fair order across flows: with weights 1 and 3 and both
// flows backlogged, the heavier gets three slots in four, though the
// lighter queued its whole burst first.
func TestRateLimitedTargetIsSharedByFlowWeight(t *testing.T) {
	clk := clocktest.New(time.Unix(0, 0))
	up := &fake{script: []int{200}}
	r := newRouter(t, clk, ladder(TargetSpec{Provider: "p", Model: "m"}),
		ProviderSpec{Name: "p", Upstream: up, Limits: Limits{RequestsPerMinute: 60, MaxWait: time.Hour}})
	alias, _ := r.Lookup("smart")
	send := func(flow string, weight float64) {
		body := []byte(`{"model":"smart","user":"` + flow + `","messages":[]}`)
		w := r.Start(alias, &Request{Path: "/chat/completions", Body: body, Fields: aireq.Scan(body), Flow: flow, Weight: weight})
		a, err := w.Next(t.Context())
		if err != nil {
			t.Error(err)
			return
		}
		a.Succeed()
	}
	// Spend the burst.
	warm := burstOf(60, RequestBurstWindow)
	for range warm {
		send("warm-up", 1)
	}
	target := r.Targets()[0]
	var wg sync.WaitGroup
	defer wg.Wait()
	const each = 30
	for _, f := range []struct {
		flow   string
		weight float64
	}{{"light", 1}, {"heavy", 3}} {
		for range each {
			wg.Add(1)
			go func() { defer wg.Done(); send(f.flow, f.weight) }()
		}
		want := each - 1 // one light request holds the turn, asleep
		if f.flow == "heavy" {
			want = 2*each - 1
		}
		for target.Queued() != want {
			time.Sleep(time.Millisecond)
		}
	}
	// next lets the turn's holder go once it sleeps for its slot: every
	// queued request has its MaxWait timer, the holder its slot's. The
	// clock moves one slot (a second at 60 rpm), not to the next timer:
	// on a loaded machine the count can match before the holder has armed
	// its slot's timer, and the next timer is then a MaxWait an hour away,
	// which would let every request go at once.
	next := func() {
		for clk.Pending() != target.Queued()+1 {
			time.Sleep(time.Millisecond)
		}
		clk.Advance(time.Second)
	}
	// One slot a second: let 40 go, one at a time.
	const rounds = 40
	for i := range rounds {
		next()
		for up.n() != warm+i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	// Let the rest go.
	for n := up.n(); n < warm+2*each; n = up.n() {
		next()
		for up.n() == n {
			time.Sleep(time.Millisecond)
		}
	}
	heavy := 0
	up.mu.Lock()
	for _, c := range up.calls[warm+1 : warm+rounds] { // the first was the turn's holder
		if bytes.Contains(c.Body, []byte(`"user":"heavy"`)) {
			heavy++
		}
	}
	up.mu.Unlock()
	if share := float64(heavy) / (rounds - 1); share < 0.65 || share > 0.85 {
		t.Fatalf("the heavy flow got %d of %d slots (%.0f%%), want 75%% ± 10%%", heavy, rounds-1, 100*share)
	}
}
