package breaker

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"pgregory.net/rapid"
)

// For any sequence of calls, outcomes and clock steps: the breaker never has
// more than HalfOpenProbes probes of one half-open period out at once, never
// opens on a rate with fewer than MinCalls calls in the window, and its
// totals add up.
func TestPropertyInvariants(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		probes := rapid.IntRange(1, 4).Draw(rt, "probes")
		minCalls := rapid.IntRange(1, 30).Draw(rt, "minCalls")
		cfg := Config{
			FailureRate:         rapid.Float64Range(0.1, 1).Draw(rt, "rate"),
			MinCalls:            minCalls,
			ConsecutiveFailures: rapid.IntRange(0, 8).Draw(rt, "consecutive"),
			SlowCallDuration:    time.Second,
			SlowCallRate:        rapid.Float64Range(0.1, 1).Draw(rt, "slowRate"),
			OpenDuration:        time.Duration(rapid.IntRange(1, 10).Draw(rt, "openSec")) * time.Second,
			HalfOpenProbes:      probes,
			HalfOpenSuccesses:   rapid.IntRange(1, probes).Draw(rt, "successes"),
			HalfOpenMaxWait:     30 * time.Second,
			OpenBackoff:         2,
		}
		if rapid.Bool().Draw(rt, "timeWindow") {
			cfg.Window = time.Duration(rapid.IntRange(1, 60).Draw(rt, "windowSec")) * time.Second
		} else {
			cfg.WindowCalls = rapid.IntRange(1, 50).Draw(rt, "windowCalls")
		}
		clk := clocktest.New(time.Time{})
		cfg.Clock = clk
		var b *Breaker
		var bad string
		cfg.OnStateChange = func(tr Transition) {
			if tr.Reason == ReasonFailureRate || tr.Reason == ReasonSlowCallRate {
				need := minCalls
				if cfg.WindowCalls > 0 {
					need = min(need, cfg.WindowCalls)
				}
				if c := b.Snapshot().Calls; c < int64(need) {
					bad = "opened on a rate with " + tr.Reason.String()
				}
			}
		}
		b, err := New(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		var held []Permit
		outstanding := map[uint64]int{} // half-open generation → probes out
		calls := 0
		steps := rapid.IntRange(1, 300).Draw(rt, "steps")
		for i := range steps {
			switch rapid.IntRange(0, 3).Draw(rt, "action") {
			case 0:
				calls++
				p, err := b.Allow()
				if err != nil {
					continue
				}
				held = append(held, p)
				if p.state == StateHalfOpen {
					outstanding[p.gen]++
					if outstanding[p.gen] > probes {
						rt.Fatalf("step %d: %d probes out in one half-open period; limit %d", i, outstanding[p.gen], probes)
					}
				}
			case 1, 2:
				if len(held) == 0 {
					continue
				}
				j := rapid.IntRange(0, len(held)-1).Draw(rt, "which")
				p := held[j]
				held = append(held[:j], held[j+1:]...)
				o := Outcome{Result: Result(rapid.IntRange(0, 2).Draw(rt, "result"))}
				if rapid.Bool().Draw(rt, "slow") {
					o.Duration = 2 * time.Second
				}
				p.Report(o)
				if p.state == StateHalfOpen {
					outstanding[p.gen]--
				}
			case 3:
				clk.Advance(time.Duration(rapid.IntRange(0, 5000).Draw(rt, "ms")) * time.Millisecond)
			}
			if bad != "" {
				rt.Fatalf("step %d: %s", i, bad)
			}
		}
		s := b.Snapshot()
		tt := s.Totals
		if tt.Allowed+tt.Rejected != uint64(calls) {
			rt.Fatalf("allowed %d + rejected %d != %d calls", tt.Allowed, tt.Rejected, calls)
		}
		if tt.Allowed != tt.Succeeded+tt.Failed+tt.Ignored+tt.Dropped+uint64(len(held)) {
			rt.Fatalf("totals do not add up: %+v with %d held", tt, len(held))
		}
		if tt.Slow > tt.Succeeded+tt.Failed {
			rt.Fatalf("more slow calls than recorded: %+v", tt)
		}
	})
}

// Many goroutines on one breaker while the clock moves: no more probes than
// allowed at once, and every call is accounted for.
func TestHammer(t *testing.T) {
	clk := clocktest.New(time.Time{})
	const probes = 3
	b, err := New(Config{Window: 10 * time.Second, FailureRate: 0.3, MinCalls: 20, ConsecutiveFailures: 10,
		OpenDuration: 100 * time.Millisecond, HalfOpenProbes: probes, HalfOpenSuccesses: 2, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	out := map[uint64]int{} // half-open generation → probes out
	maxOut := 0
	var calls, refused atomic.Uint64
	stop := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				clk.Advance(time.Millisecond)
			}
		}
	})
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 2000 {
				calls.Add(1)
				p, err := b.Allow()
				if err != nil {
					refused.Add(1)
					continue
				}
				if p.state == StateHalfOpen {
					mu.Lock()
					out[p.gen]++
					maxOut = max(maxOut, out[p.gen])
					mu.Unlock()
				}
				// A probe stops counting as out before its report: an
				// ignored probe frees its slot during the report, and
				// another goroutine may take it before this one returns.
				if p.state == StateHalfOpen {
					mu.Lock()
					out[p.gen]--
					mu.Unlock()
				}
				switch r := rng.IntN(10); {
				case r < 3:
					p.Failure()
				case r < 5:
					p.Ignore()
				default:
					p.Success()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	ticker.Wait()
	if m := maxOut; m > probes {
		t.Errorf("up to %d probes out at once; limit %d per half-open period", m, probes)
	}
	s := b.Snapshot()
	tt := s.Totals
	if tt.Allowed+tt.Rejected != calls.Load() || tt.Rejected != refused.Load() {
		t.Errorf("allowed %d + rejected %d != %d calls (%d refused)", tt.Allowed, tt.Rejected, calls.Load(), refused.Load())
	}
	if tt.Allowed != tt.Succeeded+tt.Failed+tt.Ignored+tt.Dropped {
		t.Errorf("totals do not add up: %+v", tt)
	}
	if tt.Rejected == 0 || tt.Succeeded == 0 {
		t.Errorf("the hammer never opened the breaker or never succeeded: %+v", tt)
	}
}
