package router

import (
	"errors"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

// Adaptive budgets: with AutoTTFB, a target's TTFB budget follows its own
// recent times to first content, max(1 s, 3 × p99), never above the
// configured TTFB; until it has 20 of them, the configured TTFB holds.

// warmed is warm with plain answers, and a walk started on a's call that
// hangs, its watchdog armed.
func warmed(t *testing.T, b Budgets, n int) (*clocktest.Clock, *Router, <-chan result) {
	t.Helper()
	clk, r := warm(t, b, n, false)
	ch := goNext(t.Context(), start(t, r, "solo", nil))
	clk.WaitForTimers(1) // the hanging call's watchdog
	return clk, r, ch
}

// warm returns a router with alias "solo" over a alone, whose budgets are
// b, after n answers (streamed or plain) from a that each took 300 ms to
// their first content; a's next call hangs.
func warm(t *testing.T, b Budgets, n int, stream bool) (*clocktest.Clock, *Router) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ok := status(200)
	if stream {
		ok = withBody(200, firstThenSilent("data: {}\n\n"))
	}
	var answers []answer
	for range n {
		answers = append(answers, later(clk, 300*time.Millisecond, ok))
	}
	a := newStub(append(answers, hang())...)
	r := build(t, clk, nil, []AliasSpec{{Name: "solo", Budgets: b, Retry: retry.Policy{Attempts: 1},
		Breaker: breaker.Config{ConsecutiveFailures: 1000}, Targets: []TargetSpec{{Provider: "a", Model: "m"}}}},
		ProviderSpec{Name: "a", Upstream: a})
	for i := range n {
		req := request("solo")
		if stream {
			req = streamRequest("solo")
		}
		ch := goNext(t.Context(), start(t, r, "solo", req))
		clk.WaitForTimers(2) // the watchdog and a's answer
		clk.Advance(300 * time.Millisecond)
		at := served(t, await(t, ch), "a/m")
		if at.TTFB() != 300*time.Millisecond {
			t.Fatalf("warm-up %d: TTFB %v; want 300ms", i, at.TTFB())
		}
		at.Succeed()
	}
	return clk, r
}

// checkCutAfter checks that the hanging attempt is cut after d, not before.
func checkCutAfter(t *testing.T, clk *clocktest.Clock, r *Router, ch <-chan result, d time.Duration) {
	t.Helper()
	clk.Advance(d - time.Millisecond)
	if failed, _, _ := totals(t, r, "a/m"); failed != 0 {
		t.Fatalf("cut before %v; want after it", d)
	}
	clk.Advance(time.Millisecond)
	if failed, _, _ := totals(t, r, "a/m"); failed != 1 {
		t.Fatalf("not cut after %v; want cut then", d)
	}
	res := await(t, ch)
	var nt *NoTargetError
	if !errors.As(res.err, &nt) || nt.Skips[0].Reason != "outage (first_byte_timeout)" {
		t.Fatalf("Next: %+v, %v; want a first-byte timeout", res.a, res.err)
	}
}

func TestAdaptiveTTFBFollowsTheTargetsRecentAnswers(t *testing.T) {
	clk, r, ch := warmed(t, Budgets{TTFB: time.Minute, AutoTTFB: true}, 30)
	checkCutAfter(t, clk, r, ch, time.Second) // max(1 s, 3 × 304 ms)
}

func TestAdaptiveTTFBKeepsTheCeilingUntilItHas20Samples(t *testing.T) {
	clk, r, ch := warmed(t, Budgets{TTFB: time.Minute, AutoTTFB: true}, 19)
	checkCutAfter(t, clk, r, ch, time.Minute)
}

func TestAdaptiveTTFBNeverExceedsTheConfiguredTTFB(t *testing.T) {
	clk, r, ch := warmed(t, Budgets{TTFB: 500 * time.Millisecond, AutoTTFB: true}, 30)
	checkCutAfter(t, clk, r, ch, 500*time.Millisecond)
}

func TestFixedTTFBIgnoresTheTargetsRecentAnswers(t *testing.T) {
	clk, r, ch := warmed(t, Budgets{TTFB: time.Minute}, 30)
	checkCutAfter(t, clk, r, ch, time.Minute)
}

// A stream's budgets adapt from its first events: TTFB as for plain
// answers, and the idle budget from the same distribution (there is none of
// the gaps between chunks), never above the configured Idle.
func TestAdaptiveStreamBudgetsFollowTheTargetsFirstEvents(t *testing.T) {
	b := Budgets{TTFB: time.Minute, Idle: 30 * time.Second, AutoTTFB: true, AutoIdle: true}
	for _, c := range []struct {
		n          int
		ttfb, idle time.Duration
	}{
		{n: 19, ttfb: time.Minute, idle: 30 * time.Second},
		{n: 30, ttfb: time.Second, idle: time.Second},
	} {
		_, r := warm(t, b, c.n, true)
		alias, _ := r.Lookup("solo")
		ttfb, idle := alias.StreamBudgets(target(t, r, "a/m"), r.now())
		if ttfb != c.ttfb || idle != c.idle {
			t.Errorf("after %d streams: budgets %v, %v; want %v, %v", c.n, ttfb, idle, c.ttfb, c.idle)
		}
	}
}
