package router

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// The watchdogs: every budget runs on the router's clock from the moment
// the request is sent, and the one that runs out cuts the attempt there and
// then: the target's breaker hears of the outage at that moment, not when
// the walk gets round to it.

// budgeted returns the alias settings of these tests: the given budgets and
// a breaker that one failure does not trip.
func budgeted(b Budgets) AliasSpec {
	return AliasSpec{Budgets: b, Breaker: breaker.Config{ConsecutiveFailures: 5}}
}

// checkCut checks that exactly one attempt has been reported, on target,
// with sub-kind sub, after d, and that target's breaker counted it.
func checkCut(t *testing.T, r *Router, ev *events, target string, sub aierr.SubKind, d time.Duration) {
	t.Helper()
	got := ev.attemptsSoFar()
	if len(got) != 1 {
		t.Fatalf("%d attempts reported when the budget ran out; want 1 (the cut)", len(got))
	}
	e := got[0]
	if e.Target.Name != target || e.Verdict.Kind != aierr.Outage || e.Verdict.Sub != sub {
		t.Errorf("attempt reported: %s %v; want %s outage/%v", e.Target.Name, e.Verdict, target, sub)
	}
	if e.Duration != d {
		t.Errorf("attempt reported after %v; want %v", e.Duration, d)
	}
	if failed, _, _ := totals(t, r, target); failed != 1 {
		t.Errorf("%s breaker failures right after the cut: got %d; want 1", target, failed)
	}
}

// checkUncut checks that nothing has been reported yet.
func checkUncut(t *testing.T, r *Router, ev *events, target string) {
	t.Helper()
	if got := ev.attemptsSoFar(); len(got) != 0 {
		t.Fatalf("attempt reported before its budget ran out: %+v", got[0].Verdict)
	}
	if failed, _, _ := totals(t, r, target); failed != 0 {
		t.Fatalf("%s breaker failures before the budget ran out: got %d; want 0", target, failed)
	}
}

func TestTTFBCutsAnAttemptThatSendsNoHeaders(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(hang()), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{TTFB: 2 * time.Second}), a, b)
	r := build(t, clk, ev, aliases, provs...)
	w := start(t, r, "smart", nil)
	ch := goNext(t.Context(), w)

	clk.WaitForTimers(1) // the watchdog, armed as the request is sent
	clk.Advance(2*time.Second - time.Millisecond)
	checkUncut(t, r, ev, "a/m")
	clk.Advance(time.Millisecond)
	checkCut(t, r, ev, "a/m", aierr.FirstByteTimeout, 2*time.Second)

	at := served(t, await(t, ch), "b/m")
	defer at.Succeed()
	if _, ctx := a.call(0); !errors.Is(context.Cause(ctx), aierr.ErrFirstByteTimeout) {
		t.Errorf("the hung call's context ended with %v; want %v", context.Cause(ctx), aierr.ErrFirstByteTimeout)
	}
	if len(w.Skips) != 1 || w.Skips[0] != (Skip{Target: "a/m", Reason: "outage (first_byte_timeout)"}) {
		t.Errorf("skips %+v; want a/m outage (first_byte_timeout)", w.Skips)
	}
}

// A plain 2xx whose body sends nothing has not answered: the walk reads
// its first byte under the TTFB budget.
func TestTTFBCutsAPlainAnswerWhoseBodyIsSilent(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(withBody(200, silent)), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{TTFB: 2 * time.Second}), a, b)
	r := build(t, clk, ev, aliases, provs...)
	ch := goNext(t.Context(), start(t, r, "smart", nil))

	clk.WaitForTimers(1)
	clk.Advance(2*time.Second - time.Millisecond)
	checkUncut(t, r, ev, "a/m")
	clk.Advance(time.Millisecond)
	checkCut(t, r, ev, "a/m", aierr.FirstByteTimeout, 2*time.Second)

	at := served(t, await(t, ch), "b/m")
	defer at.Succeed()
	if body, _ := io.ReadAll(at.Resp.Body); string(body) != okBody {
		t.Errorf("served body %q; want %q", body, okBody)
	}
}

// A stream's first content is what Prepare waits for: a stream whose
// headers came but whose first event does not is cut by the TTFB budget
// while Prepare reads.
func TestTTFBCutsAStreamWhoseFirstEventNeverComes(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(withBody(200, silent)), newStub(withBody(200, firstThenSilent("data: {}\n\n")))
	aliases, provs := two(budgeted(Budgets{TTFB: 2 * time.Second}), a, b)
	r := build(t, clk, ev, aliases, provs...)
	ch := goNext(t.Context(), start(t, r, "smart", streamRequest("smart")))

	clk.WaitForTimers(1)
	clk.Advance(2*time.Second - time.Millisecond)
	checkUncut(t, r, ev, "a/m")
	clk.Advance(time.Millisecond)
	checkCut(t, r, ev, "a/m", aierr.FirstByteTimeout, 2*time.Second)
	served(t, await(t, ch), "b/m").Succeed()
}

// A plain answer that keeps trickling is cut by its total budget, and the
// caller's read of it fails with the cut's verdict.
func TestTotalBudgetCutsAnAnswerThatKeepsTrickling(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(withBody(200, trickle(clk, time.Second))), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{Total: 4500 * time.Millisecond}), a, b)
	r := build(t, clk, ev, aliases, provs...)
	at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "a/m")

	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(at.Resp.Body)
		read <- err
	}()
	for range 4 { // a byte a second: the stream is alive
		clk.WaitForTimers(2) // the watchdog and the next byte
		clk.Advance(time.Second)
	}
	checkUncut(t, r, ev, "a/m")
	clk.WaitForTimers(2)
	clk.Advance(time.Second)
	checkCut(t, r, ev, "a/m", aierr.Timeout, 4500*time.Millisecond)

	err := recv(t, read, "end of the body read")
	if v, ok := aierr.FromError(err); !ok || v.Sub != aierr.Timeout {
		t.Errorf("body read failed with %v; want the total budget's timeout", err)
	}
	if v := at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF)); v.Sub != aierr.Timeout {
		t.Errorf("Broke returned %v; want the watchdog's verdict (timeout)", v)
	}
	if failed, _, _ := totals(t, r, "a/m"); failed != 1 {
		t.Errorf("a/m breaker failures after Broke: got %d; want 1 (the cut, counted once)", failed)
	}
}

// stalledStream starts a streamed walk on "smart" whose first target sends
// its first event and then nothing, and returns the delivered attempt and a
// channel that receives the error its body read ends with.
func stalledStream(t *testing.T, b Budgets) (*clocktest.Clock, *Router, *events, *Attempt, <-chan error) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, bb := newStub(withBody(200, firstThenSilent("data: {}\n\n"))), newStub(status(200))
	aliases, provs := two(budgeted(b), a, bb)
	r := build(t, clk, ev, aliases, provs...)
	at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", streamRequest("smart")))), "a/m")
	if at.Held != "data: {}\n\n" {
		t.Fatalf("Prepare held %q; want the first event", at.Held)
	}
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(at.Resp.Body)
		read <- err
	}()
	return clk, r, ev, at, read
}

func TestIdleBudgetCutsAStreamWhoseEventsStop(t *testing.T) {
	clk, r, ev, at, read := stalledStream(t, Budgets{TTFB: 2 * time.Second, Idle: 3 * time.Second})
	clk.Advance(3*time.Second - time.Millisecond)
	checkUncut(t, r, ev, "a/m")
	clk.Advance(time.Millisecond)
	checkCut(t, r, ev, "a/m", aierr.StreamStalled, 3*time.Second)

	err := recv(t, read, "end of the body read")
	if v, ok := aierr.FromError(err); !ok || v.Sub != aierr.StreamStalled {
		t.Errorf("body read failed with %v; want stream_stalled", err)
	}
	if v := at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF)); v.Sub != aierr.StreamStalled {
		t.Errorf("Broke returned %v; want the watchdog's verdict (stream_stalled)", v)
	}
}

func TestEveryProgressRestartsTheIdleBudget(t *testing.T) {
	clk, r, ev, at, read := stalledStream(t, Budgets{Idle: 3 * time.Second})
	clk.Advance(2 * time.Second)
	at.Progress() // an event at 2 s: silent from there
	clk.Advance(2 * time.Second)
	clk.Advance(time.Second - time.Millisecond)
	checkUncut(t, r, ev, "a/m")
	clk.Advance(time.Millisecond)
	checkCut(t, r, ev, "a/m", aierr.StreamStalled, 5*time.Second)
	recv(t, read, "end of the body read")
	at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
}

// An attempt that ends in time disarms its watchdogs: nothing is cut later.
func TestAnAttemptThatEndedIsNeverCut(t *testing.T) {
	clk, r, ev, at, read := stalledStream(t, Budgets{TTFB: time.Second, Idle: 3 * time.Second, Total: 10 * time.Second})
	at.Succeed()
	at.Resp.Body.Close()
	recv(t, read, "end of the body read")
	clk.Advance(time.Minute)
	if got := ev.attemptsSoFar(); len(got) != 1 || got[0].Verdict.Kind != aierr.Success {
		t.Fatalf("attempts reported: %+v; want only the success", got)
	}
	if failed, succeeded, _ := totals(t, r, "a/m"); failed != 0 || succeeded != 1 {
		t.Fatalf("a/m breaker: %d failed, %d succeeded; want 0 and 1", failed, succeeded)
	}
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers left pending; want none", n)
	}
}

// The client going away is nobody's fault upstream: the attempt is
// canceled, the breaker ignores it, and the walk does not fail over.
func TestClientLeavingCancelsTheAttemptWithoutBlame(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(hang()), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{TTFB: time.Minute}), a, b)
	r := build(t, clk, ev, aliases, provs...)
	ctx, cancel := context.WithCancel(t.Context())
	ch := goNext(ctx, start(t, r, "smart", nil))
	recv(t, a.sent, "call to a")
	cancel()

	res := await(t, ch)
	if !errors.Is(res.err, context.Canceled) || res.a != nil {
		t.Fatalf("Next: got %+v, %v; want no attempt and context.Canceled", res.a, res.err)
	}
	if failed, succeeded, ignored := totals(t, r, "a/m"); failed != 0 || succeeded != 0 || ignored != 1 {
		t.Errorf("a/m breaker: %d failed, %d succeeded, %d ignored; want 0, 0, 1", failed, succeeded, ignored)
	}
	if got := ev.attemptsSoFar(); len(got) != 1 || got[0].Verdict.Kind != aierr.Canceled {
		t.Errorf("attempts reported: %+v; want one canceled", got)
	}
	if f := ev.failoversSoFar(); len(f) != 0 {
		t.Errorf("failovers %v; want none", f)
	}
	if b.n() != 0 {
		t.Errorf("b called %d times; want 0", b.n())
	}
	if n := clk.Pending(); n != 0 {
		t.Errorf("%d timers left pending; want none (the watchdog disarmed)", n)
	}
}

// A client that leaves while its answer streams abandons the attempt: the
// breaker ignores it too.
func TestAbandonedAnswerIsIgnoredByTheBreaker(t *testing.T) {
	_, r, _, at, read := stalledStream(t, Budgets{Idle: 3 * time.Second})
	at.Abandon()
	at.Resp.Body.Close()
	recv(t, read, "end of the body read")
	if failed, succeeded, ignored := totals(t, r, "a/m"); failed != 0 || succeeded != 0 || ignored != 1 {
		t.Errorf("a/m breaker: %d failed, %d succeeded, %d ignored; want 0, 0, 1", failed, succeeded, ignored)
	}
}

// Once the request has ended (the client left, its deadline passed), a
// delivered answer that fails is not its target's doing, whatever the
// read failed with.
func TestAnswerBrokenAfterTheRequestEndedIsNotBlamed(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := newStub(withBody(200, firstThenSilent("data: {}\n\n"))), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{}), a, b)
	r := build(t, clk, nil, aliases, provs...)
	ctx, cancel := context.WithCancel(t.Context())
	at := served(t, await(t, goNext(ctx, start(t, r, "smart", streamRequest("smart")))), "a/m")
	cancel()
	if v := at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF)); v.Kind != aierr.Canceled {
		t.Errorf("Broke returned %v; want canceled", v)
	}
	if failed, _, ignored := totals(t, r, "a/m"); failed != 0 || ignored != 1 {
		t.Errorf("a/m breaker: %d failed, %d ignored; want 0, 1", failed, ignored)
	}
}

func TestAnswerFailedAfterTheRequestEndedIsNotBlamedNorFailedOver(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(status(200)), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{}), a, b)
	r := build(t, clk, ev, aliases, provs...)
	ctx, cancel := context.WithCancel(t.Context())
	w := start(t, r, "smart", nil)
	at := served(t, await(t, goNext(ctx, w)), "a/m")
	cancel()
	at.Fail(aierr.ClassifyError(io.ErrUnexpectedEOF))
	if failed, _, ignored := totals(t, r, "a/m"); failed != 0 || ignored != 1 {
		t.Errorf("a/m breaker: %d failed, %d ignored; want 0, 1", failed, ignored)
	}
	res := await(t, goNext(ctx, w))
	if !errors.Is(res.err, context.Canceled) {
		t.Errorf("Next after the client left: %+v, %v; want context.Canceled", res.a, res.err)
	}
	if b.n() != 0 || len(ev.failoversSoFar()) != 0 {
		t.Errorf("b called %d times, failovers %q; want none", b.n(), ev.failoversSoFar())
	}
}

// A watchdog that cut the attempt first keeps its verdict: the target was
// silent before the client left.
func TestCutBeforeTheRequestEndedStaysTheTargetsFault(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := newStub(withBody(200, firstThenSilent("data: {}\n\n"))), newStub(status(200))
	aliases, provs := two(budgeted(Budgets{Idle: 3 * time.Second}), a, b)
	r := build(t, clk, nil, aliases, provs...)
	ctx, cancel := context.WithCancel(t.Context())
	at := served(t, await(t, goNext(ctx, start(t, r, "smart", streamRequest("smart")))), "a/m")
	clk.Advance(3 * time.Second)
	cancel()
	if v := at.Broke(aierr.ClassifyError(context.Canceled)); v.Sub != aierr.StreamStalled {
		t.Errorf("Broke returned %v; want the watchdog's stream_stalled", v)
	}
	if failed, _, ignored := totals(t, r, "a/m"); failed != 1 || ignored != 0 {
		t.Errorf("a/m breaker: %d failed, %d ignored; want 1, 0", failed, ignored)
	}
}
