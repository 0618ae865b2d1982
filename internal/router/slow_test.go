package router

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Slow and half-broken streams: a stream below its rate floor is cut as
// too slow, a stall of its target; hedge losers and stalled streams are
// reported as what they were.

// relay reads a delivered stream as the gateway does, telling the
// attempt of every chunk, and sends the error its read ended with.
func relay(at *Attempt) <-chan error {
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := at.Resp.Body.Read(buf)
			if n > 0 {
				at.Progress()
			}
			if err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

// untilCut moves the clock on in steps of step, each once the stream's
// next chunk and its watchdog are armed (pending timers), until at is cut.
func untilCut(t *testing.T, clk *clocktest.Clock, at *Attempt, pending int, step time.Duration) time.Duration {
	t.Helper()
	var moved time.Duration
	for at.Cut() == nil {
		if moved > time.Minute {
			t.Fatalf("not cut after %v", moved)
		}
		clk.WaitForTimers(pending)
		clk.Advance(step)
		moved += step
	}
	return moved
}

// dripping builds alias "smart" over a, streaming one chunk every 2 s
// for ever, then b, with a rate floor of 0.8 events a second.
func dripping(t *testing.T, as AliasSpec) (*clocktest.Clock, *Router, *events, *stub, *stub) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	as.Budgets = Budgets{Idle: 30 * time.Second, MinRate: 0.8}
	a, b := newStub(withBody(200, trickle(clk, 2*time.Second))), newStub(withBody(200, firstThenSilent(firstEvent)))
	aliases, provs := two(as, a, b)
	return clk, build(t, clk, ev, aliases, provs...), ev, a, b
}

// A drip of one chunk every 2 s never stalls (idle is 30 s) but falls
// behind 0.8 a second: each is cut as too slow, a stall of its target,
// and `consecutive` of them open its breaker, after which the walk goes
// to the next target without calling it.
func TestDripOpensTheBreakerAndFailsOver(t *testing.T) {
	clk, r, ev, a, _ := dripping(t, AliasSpec{Breaker: breaker.Config{ConsecutiveFailures: 3}})
	for i := range 3 {
		at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", streamRequest("smart")))), "a/m")
		read := relay(at)
		// due: 2 s + k / 0.8 after the first content; the third event
		// after it (6 s) is late for 5.75 s.
		if moved := untilCut(t, clk, at, 2, 250*time.Millisecond); moved != 5750*time.Millisecond {
			t.Errorf("stream %d cut after %v; want 5.75s", i, moved)
		}
		if v, ok := aierr.FromError(<-read); !ok || v.Code != CodeTooSlow {
			t.Errorf("read ended with %v; want the too-slow cut", v)
		}
		if v := at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF)); v.Code != CodeTooSlow || v.Sub != aierr.StreamStalled || v.Kind != aierr.Outage {
			t.Errorf("Broke returned %v; want an outage, stalled, %s", v, CodeTooSlow)
		}
		if e := nextEvent(t, ev); e.Verdict.Code != CodeTooSlow {
			t.Errorf("reported %v; want %s", e.Verdict, CodeTooSlow)
		}
	}
	if s := target(t, r, "a/m").Breaker().State(); s != breaker.StateOpen {
		t.Fatalf("a/m breaker %v after 3 drips; want open", s)
	}
	w := start(t, r, "smart", streamRequest("smart"))
	served(t, await(t, goNext(t.Context(), w)), "b/m").Succeed()
	if a.n() != 3 || len(w.Skips) != 1 || w.Skips[0].Reason != "breaker open" {
		t.Errorf("a called %d times, skips %+v; want 3 and a skipped as open", a.n(), w.Skips)
	}
}

// A drip that was already delivered is continued on the next target, as a
// stall after commit is.
func TestDripAfterCommitContinuesElsewhere(t *testing.T) {
	clk, r, _, _, _ := dripping(t, AliasSpec{Continue: true, Breaker: breaker.Config{ConsecutiveFailures: 5}})
	w := start(t, r, "smart", streamRequest("smart"))
	at := served(t, await(t, goNext(t.Context(), w)), "a/m")
	read := relay(at)
	untilCut(t, clk, at, 2, 250*time.Millisecond)
	<-read
	at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
	w.Continue(request("smart").Body, nil)
	next := served(t, await(t, goNext(t.Context(), w)), "b/m")
	next.Succeed()
	want := Skip{Target: "a/m", Reason: "outage (" + CodeTooSlow + ") after it began"}
	if len(w.Skips) != 1 || w.Skips[0] != want {
		t.Errorf("skips %+v; want [%+v]", w.Skips, want)
	}
}

// However fast it comes, a stream's answer may take at most rateSlack +
// max_tokens / floor after its first content.
func TestMaxTokensBoundsAStreamsDuration(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(withBody(200, trickle(clk, 500*time.Millisecond))), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{MinRate: 1}), a, b)
	r := build(t, clk, ev, aliases, provs...)
	req := streamRequest("smart")
	req.Fields.MaxTokens = 3
	at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", req))), "a/m")
	read := relay(at)
	if moved := untilCut(t, clk, at, 2, 250*time.Millisecond); moved != 5*time.Second {
		t.Errorf("cut after %v; want 5s (2s + 3 / 1 per second)", moved)
	}
	<-read
	at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
	if e := nextEvent(t, ev); e.Verdict.Code != CodeTooSlow {
		t.Errorf("reported %v; want %s", e.Verdict, CodeTooSlow)
	}
}

// A stream that keeps its pace is not cut, and its pace teaches the
// target's adaptive floor.
func TestAStreamAtPaceIsNotCutAndTeachesTheFloor(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := newStub(withBody(200, trickle(clk, 500*time.Millisecond))), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{MinRate: 1, AutoRate: true}), a, b)
	r := build(t, clk, nil, aliases, provs...)
	for range autoMinSamples {
		at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", streamRequest("smart")))), "a/m")
		read := relay(at)
		for range rateMinEvents {
			clk.WaitForTimers(2)
			clk.Advance(500 * time.Millisecond)
		}
		clk.WaitForTimers(2) // the last chunk told
		if at.Cut() != nil {
			t.Fatalf("a stream of 2 a second was cut: %v", at.Cut())
		}
		at.Succeed()
		at.Resp.Body.Close()
		<-read
	}
	clk.Advance(2 * autoRefresh)
	alias, _ := r.Lookup("smart")
	// Its pace is 2 a second: the floor rises to a third of it.
	if got := alias.minRate(target(t, r, "a/m"), r.now()); got != 1 {
		t.Errorf("floor %v; want max(1, 2/3) = 1", got)
	}
	alias.rungs[0].MinRate = 0.1
	if got := alias.minRate(target(t, r, "a/m"), r.now()); got < 0.6 || got > 0.7 { // a histogram's quantile: near 2/3
		t.Errorf("floor %v; want 2/3 of a second's events", got)
	}
}

// With continuation, the stalled streams cut when their target turns
// suspect go on elsewhere at that moment, not after their idle budget.
func TestStallsCutBySuspicionContinueAtOnce(t *testing.T) {
	clk := clocktest.New(time.Time{})
	stream := withBody(200, firstThenSilent(firstEvent))
	a, b := newStub(stream), newStub(stream)
	aliases, provs := two(AliasSpec{Continue: true, Budgets: Budgets{Idle: 30 * time.Second, SuspectAfter: time.Second},
		Breaker: breaker.Config{ConsecutiveFailures: 5}}, a, b)
	r := build(t, clk, nil, aliases, provs...)
	var walks [3]*Walk
	var ats [3]*Attempt
	for i := range walks {
		walks[i] = start(t, r, "smart", streamRequest("smart"))
		ats[i] = served(t, await(t, goNext(t.Context(), walks[i])), "a/m")
	}
	clk.Advance(time.Second + time.Nanosecond)
	for i, at := range ats {
		if v := at.Cut(); v == nil || v.Sub != aierr.StreamStalled {
			t.Fatalf("stream %d: cut %v at 1s; want stalled", i, v)
		}
		at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
		walks[i].Continue(request("smart").Body, nil)
		next := served(t, await(t, goNext(t.Context(), walks[i])), "b/m")
		next.Succeed()
	}
	if failed, _, _ := totals(t, r, "a/m"); failed != 3 {
		t.Errorf("a/m breaker failures %d; want 3, one per cut", failed)
	}
}

// A breaker that opens cuts its target's stalled streams at once, even a
// lone one.
func TestAnOpeningBreakerCutsStalledStreams(t *testing.T) {
	clk, r, _, _, at := suspectable(t)
	clk.Advance(1500 * time.Millisecond)
	if at.Cut() != nil {
		t.Fatalf("lone stream cut before the breaker opened: %v", at.Cut())
	}
	target(t, r, "a/m").Breaker().ForceOpen()
	if v := at.Cut(); v == nil || v.Sub != aierr.StreamStalled {
		t.Errorf("cut %v; want stalled as the breaker opened", v)
	}
}

// Under hedging, a target that hangs loses every race to the hedge; each
// loss counts as a first-byte timeout, so its breaker opens within
// `consecutive` attempts as without hedging, and then it gets no calls.
func TestHangUnderHedgingOpensTheBreaker(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(hang()), newStub(status(200))
	aliases, provs := two(hedged(), a, b) // consecutive: 5
	r := build(t, clk, ev, aliases, provs...)
	for range 5 {
		ch := goNext(t.Context(), start(t, r, "smart", nil))
		recv(t, a.sent, "a's call")
		clk.WaitForTimers(1)
		clk.Advance(800 * time.Millisecond)
		served(t, await(t, ch), "b/m").Succeed()
		nextEvent(t, ev)
		nextEvent(t, ev)
	}
	if s := target(t, r, "a/m").Breaker().State(); s != breaker.StateOpen {
		t.Fatalf("a/m breaker %v after 5 hedged hangs; want open", s)
	}
	for range 20 {
		served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "b/m").Succeed()
	}
	if a.n() != 5 {
		t.Errorf("a called %d times; want 5, none once its breaker opened", a.n())
	}
}

// A client that gives up on an attempt past its budget reports what the
// watchdog would have; within it, a cancellation.
func TestAbandonReportsTheSilenceItSaw(t *testing.T) {
	clk, r, ev, at, _ := stalledStream(t, Budgets{Idle: 3 * time.Second})
	clk.Advance(2 * time.Second)
	at.Abandon()
	if e := nextEvent(t, ev); e.Verdict.Kind != aierr.Canceled {
		t.Errorf("abandoned within idle: reported %v; want canceled", e.Verdict)
	}
	if failed, _, _ := totals(t, r, "a/m"); failed != 0 {
		t.Errorf("a/m failures %d; want 0", failed)
	}
}

// Suspicion's recovery follows the breaker's settings: with background
// probes, no client request is let through; a probe comes after the
// breaker's open period, the next after it has grown, and one that
// succeeds ends the suspicion.
func TestSuspicionRecoversByBackgroundProbes(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	stream := withBody(200, firstThenSilent(firstEvent))
	whole := withBody(200, func(context.Context) io.ReadCloser {
		return io.NopCloser(strings.NewReader(firstEvent + "data: [DONE]\n\n"))
	})
	// Its streams stalled, so it is probed with a stream, which must end.
	a, b := newStub(stream, stream, status(500), whole, stream), newStub(stream)
	as := AliasSpec{BackgroundProbe: true, Budgets: Budgets{SuspectAfter: time.Second},
		Breaker: breaker.Config{ConsecutiveFailures: 5, OpenDuration: 2 * time.Second, OpenBackoff: 2, MaxOpenDuration: 3 * time.Second}}
	aliases, provs := two(as, a, b)
	r := build(t, clk, ev, aliases, provs...)
	for range 2 {
		at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", streamRequest("smart")))), "a/m")
		t.Cleanup(at.Abandon)
	}
	clk.Advance(time.Second + time.Nanosecond) // both cut: a is suspect
	nextEvent(t, ev)
	nextEvent(t, ev)
	step := func(d time.Duration) {
		clk.Advance(d)
		w := start(t, r, "smart", streamRequest("smart"))
		served(t, await(t, goNext(t.Context(), w)), "b/m").Succeed()
	}
	step(2*time.Second - time.Millisecond)
	if a.n() != 2 {
		t.Fatalf("a called %d times before the open period; want 2", a.n())
	}
	clk.Advance(time.Millisecond)
	if v := recv(t, ev.probed, "first probe"); v.Status != 500 {
		t.Fatalf("first probe %v; want the 500", v)
	}
	step(3*time.Second - time.Millisecond) // grown 2 × 2 s, capped at 3 s
	if a.n() != 3 {
		t.Fatalf("a called %d times; want 3 (2 streams, 1 probe)", a.n())
	}
	clk.Advance(time.Millisecond)
	if v := recv(t, ev.probed, "second probe"); v.Kind != aierr.Success {
		t.Fatalf("second probe %v; want success", v)
	}
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", streamRequest("smart")))), "a/m").Succeed()
}

// A suspect target's suspicion ends when its breaker closes.
func TestSuspicionEndsWhenTheBreakerCloses(t *testing.T) {
	clk, r, ev, _, _ := twoStalled(t)
	clk.Advance(time.Second + time.Nanosecond)
	nextEvent(t, ev)
	nextEvent(t, ev)
	_, res := streamOn(t, r, "smart")
	served(t, res, "b/m").Succeed()
	br := target(t, r, "a/m").Breaker()
	br.ForceOpen()
	br.Reset()
	if target(t, r, "a/m").suspected.Load() {
		t.Fatal("a/m still suspect after its breaker closed")
	}
	_, res = streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed()
}

// A background probe is bounded as a client's attempt is, by the alias's
// ttfb, not the router's 10 s: a probe of a hung target is a timeout that
// reopens the breaker, not a half-open breaker left undecided. A target
// whose streams stalled is probed with a stream, and one that stalls
// again fails the probe, though it would answer a plain call.
func TestBackgroundProbesAreBoundedAndStreamWhereStreamsFailed(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	stalled := withBody(200, firstThenSilent(firstEvent))
	a, b := newStub(hang(), stalled), newStub(stalled)
	as := AliasSpec{BackgroundProbe: true, Budgets: Budgets{TTFB: 2 * time.Second, Idle: 5 * time.Second},
		Breaker: breaker.Config{ConsecutiveFailures: 1, OpenDuration: time.Second, MaxOpenDuration: time.Second}}
	aliases, provs := two(as, a, b)
	r := build(t, clk, ev, aliases, provs...)
	target(t, r, "a/m").Breaker().ForceOpen()
	target(t, r, "a/m").Breaker().Reset()
	// Open a's breaker with a hang: its probe hangs too, and is cut at
	// the alias's 2 s.
	w := start(t, r, "smart", request("smart"))
	res := goNext(t.Context(), w)
	clk.WaitForTimers(1)
	clk.Advance(2 * time.Second)
	served(t, await(t, res), "b/m").Abandon() // b is not under test
	clk.Advance(time.Second)                  // open period over: the probe goes
	waitCalls(t, a, 2)
	clk.Advance(2 * time.Second)
	if v := recv(t, ev.probed, "the hung target's probe"); v.Kind != aierr.Outage || v.Code != "probe_timeout" {
		t.Fatalf("probe of a hung target: %v; want a timeout within the alias's ttfb", v)
	}
	if st := target(t, r, "a/m").Breaker().State(); st != breaker.StateOpen {
		t.Fatalf("after the probe timed out the breaker is %v; want open again", st)
	}
	// Now a's streams stall: its probe streams, and a plain answer would
	// not have told.
	target(t, r, "a/m").streamFailAt.Store(r.now())
	clk.Advance(1500 * time.Millisecond) // the grown open period, capped at 1 s: the probe goes
	waitCalls(t, a, 3)
	clk.Advance(4 * time.Second) // twice the ttfb for a streamed probe
	if v := recv(t, ev.probed, "the stalled target's probe"); v.Kind != aierr.Outage {
		t.Fatalf("probe of a target whose streams stall: %v; want an outage", v)
	}
	if c, _ := a.call(a.n() - 1); !c.Stream {
		t.Fatal("the probe of a target whose streams failed was not a stream")
	}
	// No probe after the test: held open, the next one finds it so, and
	// one already on its way runs out of its budget.
	target(t, r, "a/m").Breaker().ForceOpen()
	for range 20 {
		clk.Advance(5 * time.Second)
		time.Sleep(time.Millisecond)
	}
}

// waitCalls waits until s has been called n times: a probe runs on a
// goroutine of its own, which the fake clock does not wait for.
func waitCalls(t *testing.T, s *stub, n int) {
	t.Helper()
	for i := 0; s.n() < n; i++ {
		if i > 5000 {
			t.Fatalf("%d calls; want %d", s.n(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// With background probes, a half-open breaker is left to its probe: a
// client's request goes to the next target rather than take the probe's
// place on a target that may hang or drip.
func TestBackgroundProbeTakesTheHalfOpenPlace(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	ok := status(200)
	a, b := newStub(status(500), hang()), newStub(ok, ok, ok)
	as := AliasSpec{BackgroundProbe: true, Budgets: Budgets{TTFB: 2 * time.Second},
		Breaker: breaker.Config{ConsecutiveFailures: 1, OpenDuration: time.Second, MaxOpenDuration: time.Second}}
	aliases, provs := two(as, a, b)
	r := build(t, clk, ev, aliases, provs...)
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", request("smart")))), "b/m").Succeed() // a's 500 opened it
	clk.Advance(time.Second)
	waitCalls(t, a, 2) // the background probe, which hangs: a is half-open meanwhile
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", request("smart")))), "b/m").Succeed()
	if a.n() != 2 {
		t.Fatalf("a called %d times; want 2: its 500 and the probe, no client request in the probe's place", a.n())
	}
	clk.Advance(2 * time.Second) // the probe's budget, the alias's ttfb
	if v := recv(t, ev.probed, "the probe"); v.Code != "probe_timeout" {
		t.Fatalf("probe %v; want its timeout", v)
	}
	target(t, r, "a/m").Breaker().ForceOpen()
	for range 5 {
		clk.Advance(5 * time.Second)
		time.Sleep(time.Millisecond)
	}
}
