package router

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

// finished is a stream of n events that ends cleanly.
func finished(n int) answer {
	return func(ctx context.Context, c *Call) (*http.Response, error) {
		chunks := make([]string, n)
		for i := range chunks {
			chunks[i] = firstEvent
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &endingBody{ctx: ctx, chunks: chunks}}, nil
	}
}

// endingBody sends its chunks, then io.EOF.
type endingBody struct {
	ctx    context.Context
	chunks []string
}

func (b *endingBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if len(b.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.chunks[0])
	b.chunks = b.chunks[1:]
	return n, nil
}

func (b *endingBody) Close() error { return nil }

// randomly is an Upstream whose every call plays one of its answers at
// random (seeded: the same mix each run).
type randomly struct {
	*stub
	mu      sync.Mutex
	rnd     *rand.Rand
	choices []answer
}

func (r *randomly) Send(ctx context.Context, c *Call) (*http.Response, error) {
	r.mu.Lock()
	a := r.choices[r.rnd.IntN(len(r.choices))]
	r.mu.Unlock()
	r.stub.Send(ctx, c) // counts the call (its own answer ignored)
	return a(ctx, c)
}

// Many streams at once on a target that drips, stalls or answers at
// random, continued on a healthy one: afterwards every attempt was
// reported exactly once, the breakers counted each report once, and no
// stream is left counted anywhere.
func TestHammerOfDripsAndStalls(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a := &randomly{stub: newStub(status(200)), rnd: rand.New(rand.NewPCG(1, 2)), choices: []answer{
		withBody(200, trickle(clk, 2*time.Second)),
		withBody(200, firstThenSilent(firstEvent)),
		finished(12),
	}}
	b := newStub(finished(5))
	as := AliasSpec{Name: "smart", Continue: true, Budgets: Budgets{Idle: 10 * time.Second, SuspectAfter: time.Second, MinRate: 0.8},
		Breaker: breaker.Config{ConsecutiveFailures: 1000}, Retry: retry.Policy{Attempts: 1},
		Targets: []TargetSpec{{Provider: "a", Model: "m"}, {Provider: "b", Model: "m"}}}
	r := build(t, clk, ev, []AliasSpec{as}, ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})

	const clients = 40
	var wg sync.WaitGroup
	var attempts, served, refused, left atomic.Int64
	left.Store(clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer left.Add(-1)
			w := start(t, r, "smart", streamRequest("smart"))
			defer func() { attempts.Add(int64(w.Attempts)) }()
			for range 4 {
				at, err := w.Next(t.Context())
				if err != nil {
					if _, ok := err.(*NoTargetError); ok {
						refused.Add(1)
					}
					return
				}
				if rerr := <-relay(at); rerr == io.EOF {
					at.Succeed()
					served.Add(1)
					return
				}
				at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
				w.Continue(request("smart").Body, nil)
			}
		}()
	}
	// The clock moves while clients are left; the cap counts steps since
	// the last client ended, so that a machine too loaded to schedule the
	// clients for a while does not fail the test, and a client that hangs
	// still does.
	for idle, last := 0, left.Load(); last > 0; {
		if idle > 100000 {
			t.Fatalf("%d clients still running", last)
		}
		clk.Advance(50 * time.Millisecond)
		runtime.Gosched()
		if n := left.Load(); n < last {
			last, idle = n, 0
			continue
		}
		if idle++; idle%1000 == 0 {
			time.Sleep(time.Millisecond) // let a starved client run
		}
	}
	wg.Wait()

	// The fake clock runs ahead of the readers here, so that even b's
	// streams may look stalled: a client is served or told no target
	// could answer, never left hanging or failed otherwise.
	if served.Load()+refused.Load() != clients || served.Load() == 0 {
		t.Errorf("%d clients served, %d refused, of %d; want each one or the other, some served", served.Load(), refused.Load(), clients)
	}
	evs := ev.attemptsSoFar()
	if n := int64(len(evs)); n != attempts.Load() || n != int64(a.n()+b.n()) {
		t.Errorf("%d attempts reported, %d made by the walks, %d calls upstream; want one report per attempt", n, attempts.Load(), a.n()+b.n())
	}
	for _, name := range []string{"a/m", "b/m"} {
		var reports, failures uint64
		for _, e := range evs {
			if e.Target.Name == name {
				reports++
				if e.Verdict.Breaker() == aierr.BreakerFailure {
					failures++
				}
			}
		}
		failed, succeeded, ignored := totals(t, r, name)
		if failed+succeeded+ignored != reports || failed != failures {
			t.Errorf("%s breaker: %d failed, %d succeeded, %d ignored; want %d reports of which %d failures", name, failed, succeeded, ignored, reports, failures)
		}
		tg := target(t, r, name)
		tg.streamsMu.Lock()
		tracked := len(tg.streams)
		tg.streamsMu.Unlock()
		if tg.InFlight() != 0 || tg.silent.Load() != 0 || tg.mature.Load() != 0 || tracked != 0 {
			t.Errorf("%s left with %d in flight, %d silent, %d mature, %d tracked; want none", name, tg.InFlight(), tg.silent.Load(), tg.mature.Load(), tracked)
		}
	}
}
