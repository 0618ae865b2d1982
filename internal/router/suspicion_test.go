package router

import (
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// A target hedged twice in a row without producing a first content is
// suspect: the next request skips it and goes straight to the next target,
// with no hedge delay, until a request is let through a period later.
func TestTargetHedgedTwiceInARowIsSuspect(t *testing.T) {
	as := hedged()
	as.Budgets.SuspectAfter = time.Second
	clk := clocktest.New(time.Time{})
	a, b := newStub(hang()), newStub(status(200))
	aliases, provs := two(as, a, b)
	r := build(t, clk, nil, aliases, provs...)
	for range 2 {
		ch := goNext(t.Context(), start(t, r, "smart", nil))
		recv(t, a.sent, "a's call")
		clk.WaitForTimers(1)
		clk.Advance(800 * time.Millisecond)
		served(t, await(t, ch), "b/m").Succeed()
	}
	w := start(t, r, "smart", nil)
	served(t, await(t, goNext(t.Context(), w)), "b/m").Succeed()
	if a.n() != 2 || len(w.Skips) != 1 || w.Skips[0].Reason != "suspected stalled" {
		t.Fatalf("third request: a called %d times, skips %+v; want a skipped as suspected stalled", a.n(), w.Skips)
	}
	// The first let-through comes the breaker's open period later.
	clk.Advance(breaker.DefaultOpenDuration)
	ch := goNext(t.Context(), start(t, r, "smart", nil))
	recv(t, a.sent, "the call let through to a")
	clk.WaitForTimers(1)
	clk.Advance(800 * time.Millisecond)
	served(t, await(t, ch), "b/m").Succeed()
}

// A first content from the target ends that suspicion.
func TestFirstContentEndsHedgeSuspicion(t *testing.T) {
	as := hedged()
	as.Budgets.SuspectAfter = time.Second
	clk := clocktest.New(time.Time{})
	a, b := newStub(hang(), hang(), status(200)), newStub(status(200))
	aliases, provs := two(as, a, b)
	r := build(t, clk, nil, aliases, provs...)
	for range 2 {
		ch := goNext(t.Context(), start(t, r, "smart", nil))
		recv(t, a.sent, "a's call")
		clk.WaitForTimers(1)
		clk.Advance(800 * time.Millisecond)
		served(t, await(t, ch), "b/m").Succeed()
	}
	clk.Advance(breaker.DefaultOpenDuration)                                             // the let-through
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "a/m").Succeed() // a answers at once
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "a/m").Succeed()
}

// Suspicion only puts a target last: when every other target fails, the
// suspect one is tried after all rather than the request failing.
func TestSuspectTargetIsTriedWhenTheRestCannotAnswer(t *testing.T) {
	clk, r, _, a, _ := suspectable(t)
	clk.Advance(1500 * time.Millisecond)
	target(t, r, "b/m").Breaker().ForceOpen()
	w, res := streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed()
	if a.n() != 2 || len(w.Skips) != 2 {
		t.Fatalf("a called %d times, skips %+v; want a skipped, b open, then a tried", a.n(), w.Skips)
	}
}

// A throttle's own wait is honoured even when it is shorter than the rest
// a throttle without a hint gets.
func TestThrottleHintShorterThanTheFloorIsHonoured(t *testing.T) {
	m1, m2 := newStub(status(429, "retry-after-ms", "500")), newStub(status(200))
	_, r := oneKeyTwoModels(t, m1, m2)
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "p/m2").Succeed()
	want := KeyState{ID: "p#0", State: "resting", RetryIn: 500 * time.Millisecond}
	if got := r.Keys(); len(got) != 1 || got[0] != want {
		t.Fatalf("Keys() = %+v; want [%+v]", got, want)
	}
}
