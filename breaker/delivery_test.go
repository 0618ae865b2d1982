package breaker

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// chain records delivered transitions and checks that they form one chain:
// each From is the previous To, starting from closed.
type chain struct {
	mu   sync.Mutex
	last State
	n    int
	bad  []string
}

func (c *chain) add(tr Transition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tr.From != c.last && len(c.bad) < 5 {
		c.bad = append(c.bad, tr.From.String()+"->"+tr.To.String()+" ("+tr.Reason.String()+") after a change to "+c.last.String())
	}
	c.last = tr.To
	c.n++
}

// 64 goroutines trip, probe, reset and sync one breaker at once, over many
// iterations: the listener sees every transition in the order it was made,
// one chain in which each From is the previous To. Before transitions were
// queued under the lock, a goroutine could deliver its half-open → open
// before another's closed → open.
func TestDeliveryInTransitionOrder(t *testing.T) {
	const iterations, workers, callsEach = 40, 64, 200
	total := 0
	for it := range iterations {
		clk := clocktest.New(time.Time{})
		var c chain
		var b *Breaker
		b, err := New(Config{Clock: clk, ConsecutiveFailures: 2, OpenDuration: time.Millisecond,
			HalfOpenProbes: 2, HalfOpenMaxWait: 5 * time.Millisecond,
			OnStateChange: func(tr Transition) {
				c.add(tr)
				if tr.To == StateHalfOpen {
					_ = b.State() // a listener may call the breaker
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(it), uint64(g)))
				for range callsEach {
					switch r := rng.IntN(100); {
					case r < 2:
						b.Reset()
					case r < 3:
						b.ForceOpen()
					case r < 5:
						b.Trip(ReasonExternal)
					case r < 7:
						b.OpenUntil(clk.Now().Add(time.Duration(rng.IntN(3)) * time.Millisecond))
					case r < 9:
						b.CloseRemote()
					case r < 12:
						clk.Advance(time.Millisecond)
					case r < 14:
						_ = b.State()
					default:
						p, err := b.Allow()
						if err != nil {
							continue
						}
						if rng.IntN(2) == 0 {
							p.Failure()
						} else {
							p.Success()
						}
					}
				}
			})
		}
		wg.Wait()
		if len(c.bad) > 0 {
			t.Fatalf("iteration %d: transitions delivered out of order, e.g. %v", it, c.bad)
		}
		if s := b.State(); s != c.last {
			t.Fatalf("iteration %d: state %v; the last transition delivered went to %v", it, s, c.last)
		}
		total += c.n
	}
	t.Logf("%d transitions", total)
	if total < iterations*100 {
		t.Fatalf("only %d transitions in %d iterations: a weak hammer", total, iterations)
	}
}

// A transition the listener causes is delivered after the listener
// returns, not inside it, so the listener sees it in order.
func TestDeliveryOfTransitionCausedByListener(t *testing.T) {
	var b *Breaker
	var got []string
	depth := 0
	clk := clocktest.New(time.Time{})
	b, err := New(Config{Clock: clk, ConsecutiveFailures: 1, OpenDuration: time.Second, OnStateChange: func(tr Transition) {
		depth++
		defer func() { depth-- }()
		if depth > 1 {
			t.Errorf("listener re-entered for %v -> %v", tr.From, tr.To)
		}
		if !b.mu.TryLock() {
			t.Errorf("listener called with the breaker's lock held (%v -> %v)", tr.From, tr.To)
		} else {
			b.mu.Unlock()
		}
		got = append(got, tr.From.String()+">"+tr.To.String())
		if tr.To == StateOpen && tr.Reason == ReasonConsecutiveFailures {
			clk.Advance(time.Second)
			_ = b.State() // makes open → half-open from inside the listener
			got = append(got, "listener returns")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	mustAllow(t, b).Failure()
	want := []string{"closed>open", "listener returns", "open>half-open"}
	if len(got) != len(want) {
		t.Fatalf("delivered %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delivered %v; want %v", got, want)
		}
	}
}

// A listener that panics does not stop later transitions from being
// delivered.
func TestDeliveryAfterListenerPanic(t *testing.T) {
	var got []State
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, OnStateChange: func(tr Transition) {
		got = append(got, tr.To)
		if len(got) == 1 {
			panic("listener bug")
		}
	}})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the listener's panic did not reach the caller")
			}
		}()
		mustAllow(t, b).Failure()
	}()
	clk.Advance(time.Second)
	mustAllow(t, b).Success()
	want := []State{StateOpen, StateHalfOpen, StateClosed}
	if len(got) != len(want) || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("delivered %v; want %v", got, want)
	}
}
