package router

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"go.uber.org/goleak"
)

// Hedging: when the first target has not answered within the hedge delay,
// the request goes to the next target too; the first to answer wins and
// the other is canceled. A loser silent past its hedge delay counts as a
// first-byte timeout of its target; a hedge the first target beat counts
// as nothing.

// hedged returns alias settings that hedge once after 800 ms, with a
// budget that does not get in the way.
func hedged() AliasSpec {
	return AliasSpec{Hedge: Hedge{After: 800 * time.Millisecond, Max: 1, Budget: 1},
		Breaker: breaker.Config{ConsecutiveFailures: 5}}
}

// raceOn starts a walk on "smart" over a then b, hedged as as says.
func raceOn(t *testing.T, as AliasSpec, a, b *stub) (*clocktest.Clock, *Router, *events, *Walk, <-chan result) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	aliases, provs := two(as, a, b)
	r := build(t, clk, ev, aliases, provs...)
	w := start(t, r, "smart", nil)
	return clk, r, ev, w, goNext(t.Context(), w)
}

// checkLost checks that the race's loser, on target name, was canceled:
// its call's context ended, and the walk lists it as lost. One that had
// been silent past its hedge delay (outrun) was reported a first-byte
// timeout and counted by its breaker as a failure; any other was reported
// canceled and ignored.
func checkLost(t *testing.T, r *Router, ev *events, w *Walk, loser *stub, name string, outrun bool) {
	t.Helper()
	e := nextEvent(t, ev) // the loser ends on its own goroutine
	want, wantFailed, wantIgnored := aierr.Canceled, uint64(0), uint64(1)
	if outrun {
		want, wantFailed, wantIgnored = aierr.Outage, 1, 0
		if e.Verdict.Sub != aierr.FirstByteTimeout {
			t.Errorf("loser reported %v; want a first-byte timeout", e.Verdict)
		}
	}
	if e.Target.Name != name || e.Verdict.Kind != want || e.Hedge != (name == "b/m") {
		t.Errorf("loser reported %s %v hedge=%v; want %s %v", e.Target.Name, e.Verdict, e.Hedge, name, want)
	}
	if _, ctx := loser.call(0); !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("the loser's call context: %v; want canceled", ctx.Err())
	}
	if failed, succeeded, ignored := totals(t, r, name); failed != wantFailed || succeeded != 0 || ignored != wantIgnored {
		t.Errorf("%s breaker: %d failed, %d succeeded, %d ignored; want %d, 0, %d", name, failed, succeeded, ignored, wantFailed, wantIgnored)
	}
	if len(w.Lost) != 1 || w.Lost[0].Name != name {
		t.Errorf("Walk.Lost = %v; want [%s]", names(w.Lost), name)
	}
}

func TestHedgeWinsWhenTheFirstTargetHangs(t *testing.T) {
	a, b := newStub(hang()), newStub(status(200))
	clk, r, ev, w, ch := raceOn(t, hedged(), a, b)
	clk.WaitForTimers(1) // the hedge delay
	clk.Advance(800*time.Millisecond - time.Millisecond)
	if b.n() != 0 {
		t.Fatalf("b called %d times before the hedge delay; want 0", b.n())
	}
	clk.Advance(time.Millisecond)
	at := served(t, await(t, ch), "b/m")
	checkLost(t, r, ev, w, a, "a/m", true)
	if w.HedgeWait != 800*time.Millisecond || at.HedgeWait != 800*time.Millisecond {
		t.Errorf("hedge wait: walk %v, attempt %v; want 800ms, the delay spent on a", w.HedgeWait, at.HedgeWait)
	}

	at.Succeed()
	if e := nextEvent(t, ev); e.Target.Name != "b/m" || !e.Hedge || e.Verdict.Kind != aierr.Success {
		t.Errorf("winner reported %s %v hedge=%v; want b/m success, hedge", e.Target.Name, e.Verdict, e.Hedge)
	}
	ca, _ := a.call(0)
	cb, _ := b.call(0)
	if ca.IdempotencyKey == cb.IdempotencyKey {
		t.Errorf("both attempts carried idempotency key %q; want one each", ca.IdempotencyKey)
	}
	if w.Attempts != 2 {
		t.Errorf("Walk.Attempts = %d; want 2", w.Attempts)
	}
	if f := ev.failoversSoFar(); len(f) != 0 {
		t.Errorf("failovers %q; want none (a hedge is not a failover)", f)
	}
}

func TestFirstTargetWinsWhenItAnswersAfterTheHedgeWentOut(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(later(clk, 900*time.Millisecond, status(200))), newStub(hang())
	aliases, provs := two(hedged(), a, b)
	r := build(t, clk, ev, aliases, provs...)
	w := start(t, r, "smart", nil)
	ch := goNext(t.Context(), w)
	clk.WaitForTimers(2) // the hedge delay and a's answer
	clk.Advance(800 * time.Millisecond)
	recv(t, b.sent, "hedge sent to b")
	clk.Advance(100 * time.Millisecond)
	at := served(t, await(t, ch), "a/m")
	checkLost(t, r, ev, w, b, "b/m", false)
	if w.HedgeWait != 0 || at.HedgeWait != 0 {
		t.Errorf("hedge wait: walk %v, attempt %v; want 0: the first attempt won", w.HedgeWait, at.HedgeWait)
	}
	at.Succeed()
}

// An attempt that answers before the hedge delay leaves nothing to race.
func TestNoHedgeWhenTheFirstTargetAnswersInTime(t *testing.T) {
	a, b := newStub(status(200)), newStub(status(200))
	clk, _, _, w, ch := raceOn(t, hedged(), a, b)
	served(t, await(t, ch), "a/m").Succeed()
	clk.Advance(time.Minute)
	if b.n() != 0 || len(w.Lost) != 0 {
		t.Errorf("b called %d times, lost %v; want no hedge", b.n(), names(w.Lost))
	}
	if n := clk.Pending(); n != 0 {
		t.Errorf("%d timers left pending; want none", n)
	}
}

// With the alias's hedge budget spent, the first target is left to answer
// (or fail) alone: here it is cut at 2 s and the walk fails over as usual.
func TestNoHedgeWhenTheHedgeBudgetIsSpent(t *testing.T) {
	as := hedged()
	as.Budgets = Budgets{TTFB: 2 * time.Second}
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(hang()), newStub(status(200))
	aliases, provs := two(as, a, b)
	r := build(t, clk, ev, aliases, provs...)
	w := start(t, r, "smart", nil) // counts the request: a hedge's worth of budget
	alias, _ := r.Lookup("smart")
	for alias.hedges.TryRetry() {
	}
	ch := goNext(t.Context(), w)
	clk.WaitForTimers(2) // the hedge delay and a's watchdog
	clk.Advance(800 * time.Millisecond)
	clk.Advance(1200 * time.Millisecond)
	at := served(t, await(t, ch), "b/m")
	at.Succeed()
	got := ev.attemptsSoFar()
	if len(got) != 2 || got[0].Verdict.Sub != aierr.FirstByteTimeout || got[1].Hedge {
		t.Errorf("attempts %+v; want a cut by its TTFB budget, then b not as a hedge", got)
	}
	if len(w.Lost) != 0 {
		t.Errorf("Walk.Lost = %v; want none", names(w.Lost))
	}
}

// A hedge that finds no target to take it leaves the walk where it was:
// the first target's failure is then handled as without hedging (here, a
// same-target retry).
func TestHedgeThatFindsNoTargetLeavesTheWalkOnItsTarget(t *testing.T) {
	as := hedged()
	as.SameTargetWait = 2 * time.Second
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(later(clk, time.Second, status(500)), status(200)), newStub(status(200))
	aliases, provs := two(as, a, b)
	r := build(t, clk, ev, aliases, provs...)
	target(t, r, "b/m").Breaker().ForceOpen()
	ch := goNext(t.Context(), start(t, r, "smart", nil))
	clk.WaitForTimers(2) // the hedge delay and a's answer
	clk.Advance(800 * time.Millisecond)
	if s := recv(t, ev.skipped, "hedge finding b open"); s.Target != "b/m" {
		t.Fatalf("skip %+v; want b/m", s)
	}
	clk.Advance(200 * time.Millisecond) // a answers 500
	res := await(t, ch)
	if res.err != nil {
		t.Fatalf("Next: %v; want a's same-target retry to answer", res.err)
	}
	served(t, res, "a/m").Succeed()
	if a.n() != 2 {
		t.Errorf("a called %d times; want 2", a.n())
	}
}

// Once the winner is closed, nothing of the race is left running.
func TestARaceLeavesNoGoroutineBehind(t *testing.T) {
	a, b := newStub(hang()), newStub(status(200))
	clk, _, ev, _, ch := raceOn(t, hedged(), a, b)
	clk.WaitForTimers(1)
	clk.Advance(800 * time.Millisecond)
	at := served(t, await(t, ch), "b/m")
	nextEvent(t, ev) // the loser's end
	at.Succeed()
	at.Resp.Body.Close()
	goleak.VerifyNone(t)
}

// When both answer at the same moment, one wins and the other is a loser
// like any: reported once, listed as lost.
func TestALoserThatAnswersTooIsStillCanceled(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a := newStub(later(clk, 900*time.Millisecond, status(200)))
	b := newStub(later(clk, 100*time.Millisecond, status(200)))
	aliases, provs := two(hedged(), a, b)
	r := build(t, clk, ev, aliases, provs...)
	w := start(t, r, "smart", nil)
	ch := goNext(t.Context(), w)
	clk.WaitForTimers(2)
	clk.Advance(800 * time.Millisecond)
	recv(t, b.sent, "hedge sent to b")
	clk.WaitForTimers(3) // a's answer, b's answer and the next hedge delay
	clk.Advance(100 * time.Millisecond)
	res := await(t, ch)
	if res.err != nil {
		t.Fatalf("Next: %v; want an answer", res.err)
	}
	winner, loser := res.a.Target.Name, "b/m"
	if winner == "b/m" {
		loser = "a/m"
	}
	e := nextEvent(t, ev)
	// a, past its hedge delay, may be seen either way: answered (it only
	// lost) or still silent as it lost (a first-byte timeout at its delay).
	outrun := loser == "a/m" && e.Verdict.Sub == aierr.FirstByteTimeout
	if e.Target.Name != loser || (e.Verdict.Kind != aierr.Canceled && !outrun) {
		t.Errorf("loser reported %s %v; want %s canceled", e.Target.Name, e.Verdict, loser)
	}
	if failed, _, ignored := totals(t, r, loser); failed+ignored != 1 || (failed == 1) != outrun {
		t.Errorf("%s breaker: %d failed, %d ignored; want the one outcome reported", loser, failed, ignored)
	}
	if len(w.Lost) != 1 || w.Lost[0].Name != loser {
		t.Errorf("Walk.Lost = %v; want [%s]", names(w.Lost), loser)
	}
	res.a.Succeed()
}

// The client leaving during a race cancels every attempt of it, blaming
// no target.
func TestClientLeavingDuringARaceCancelsEveryAttempt(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a, b := newStub(hang()), newStub(hang())
	aliases, provs := two(hedged(), a, b)
	r := build(t, clk, ev, aliases, provs...)
	ctx, cancel := context.WithCancel(t.Context())
	ch := goNext(ctx, start(t, r, "smart", nil))
	clk.WaitForTimers(1)
	clk.Advance(800 * time.Millisecond)
	recv(t, b.sent, "hedge sent to b")
	cancel()
	res := await(t, ch)
	if !errors.Is(res.err, context.Canceled) || res.a != nil {
		t.Fatalf("Next: %+v, %v; want no attempt and context.Canceled", res.a, res.err)
	}
	for _, name := range []string{"a/m", "b/m"} {
		if failed, succeeded, ignored := totals(t, r, name); failed != 0 || succeeded != 0 || ignored != 1 {
			t.Errorf("%s breaker: %d failed, %d succeeded, %d ignored; want 0, 0, 1", name, failed, succeeded, ignored)
		}
	}
	goleak.VerifyNone(t)
}
