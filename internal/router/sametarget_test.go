package router

import (
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

// The same-target retry: the user asked for a model, so one transient
// failure on a healthy target is tried once more there (within the alias's
// SameTargetWait) before the walk fails over.

// sameTarget returns alias settings with a same-target wait of 2 s, the
// default retry policy (without jitter) and a breaker that one failure
// does not trip.
func sameTarget() AliasSpec {
	return AliasSpec{SameTargetWait: 2 * time.Second, Retry: retry.Policy{Rand: noJitter},
		Breaker: breaker.Config{ConsecutiveFailures: 5}}
}

// walkOn runs one walk on "smart" over a then b with settings as, moving
// the clock as the test's drive function says while Next runs.
func walkOn(t *testing.T, as AliasSpec, a, b *stub, drive func(*clocktest.Clock)) (*Router, *Walk, *events, result) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	aliases, provs := two(as, a, b)
	r := build(t, clk, ev, aliases, provs...)
	w := start(t, r, "smart", nil)
	ch := goNext(t.Context(), w)
	if drive != nil {
		drive(clk)
	}
	return r, w, ev, await(t, ch)
}

// calls checks how many calls each stub got.
func calls(t *testing.T, a, b *stub, wantA, wantB int) {
	t.Helper()
	if a.n() != wantA || b.n() != wantB {
		t.Errorf("calls: a %d, b %d; want a %d, b %d", a.n(), b.n(), wantA, wantB)
	}
}

func TestOne5xxIsRetriedOnTheSameTarget(t *testing.T) {
	a, b := newStub(status(500), status(200)), newStub(status(200))
	_, _, ev, res := walkOn(t, sameTarget(), a, b, nil)
	at := served(t, res, "a/m")
	at.Succeed()
	calls(t, a, b, 2, 0)
	got := ev.attemptsSoFar()
	if len(got) != 2 || got[0].Retry || !got[1].Retry {
		t.Errorf("attempts %+v; want the second marked Retry", got)
	}
	c0, _ := a.call(0)
	c1, _ := a.call(1)
	if c0.IdempotencyKey != c1.IdempotencyKey {
		t.Errorf("idempotency keys %q then %q; want the same for an outage's retry", c0.IdempotencyKey, c1.IdempotencyKey)
	}
}

// The retry waits the policy's backoff, at most SameTargetWait.
func TestSameTargetRetryWaitsItsBackoffAtMostSameTargetWait(t *testing.T) {
	as := sameTarget()
	as.Retry = retry.Policy{Base: 10 * time.Second, Rand: func() float64 { return 0.5 }} // backoff 5 s
	a, b := newStub(status(500), status(200)), newStub(status(200))
	_, _, _, res := walkOn(t, as, a, b, func(clk *clocktest.Clock) {
		clk.WaitForTimers(1)
		clk.Advance(2*time.Second - time.Millisecond)
		if a.n() != 1 {
			t.Errorf("a called %d times before the wait ended; want 1", a.n())
		}
		clk.Advance(time.Millisecond)
	})
	served(t, res, "a/m").Succeed()
	calls(t, a, b, 2, 0)
}

func TestTwo5xxInARowFailOver(t *testing.T) {
	a, b := newStub(status(500), status(500)), newStub(status(200))
	_, _, ev, res := walkOn(t, sameTarget(), a, b, nil)
	served(t, res, "b/m").Succeed()
	calls(t, a, b, 2, 1)
	if f := ev.failoversSoFar(); len(f) != 1 || f[0] != "a/m: 500 outage (t500)" {
		t.Errorf("failovers %q; want one from a/m", f)
	}
}

func TestNoSameTargetRetryWhenThePolicyAllowsOneCall(t *testing.T) {
	as := sameTarget()
	as.Retry.Attempts = 1
	a, b := newStub(status(500), status(200)), newStub(status(200))
	_, _, _, res := walkOn(t, as, a, b, nil)
	served(t, res, "b/m").Succeed()
	calls(t, a, b, 1, 1)
}

func TestNoSameTargetRetryWithoutSameTargetWait(t *testing.T) {
	as := sameTarget()
	as.SameTargetWait = 0
	a, b := newStub(status(500), status(200)), newStub(status(200))
	_, _, _, res := walkOn(t, as, a, b, nil)
	served(t, res, "b/m").Succeed()
	calls(t, a, b, 1, 1)
}

// A timeout spent the target's budget once already: it is not retried there.
func TestTimeoutIsNeverRetriedOnTheSameTarget(t *testing.T) {
	as := sameTarget()
	as.Budgets = Budgets{TTFB: 2 * time.Second}
	a, b := newStub(hang(), status(200)), newStub(status(200))
	_, _, _, res := walkOn(t, as, a, b, func(clk *clocktest.Clock) {
		clk.WaitForTimers(1)
		clk.Advance(2 * time.Second)
	})
	served(t, res, "b/m").Succeed()
	calls(t, a, b, 1, 1)
}

// An error answer whose body stalls is cut by the TTFB watchdog: it is a
// timeout like any other, and not retried on the same target.
func TestErrorAnswerWhoseBodyStallsIsATimeout(t *testing.T) {
	as := sameTarget()
	as.Budgets = Budgets{TTFB: 2 * time.Second}
	a, b := newStub(withBody(500, silent), status(200)), newStub(status(200))
	_, w, ev, res := walkOn(t, as, a, b, func(clk *clocktest.Clock) {
		clk.WaitForTimers(1)
		clk.Advance(2 * time.Second)
	})
	if got := ev.attemptsSoFar(); len(got) < 1 || got[0].Verdict.Sub != aierr.FirstByteTimeout {
		t.Errorf("first attempt reported %+v; want first_byte_timeout", got)
	}
	if len(w.Skips) < 1 || w.Skips[0].Reason != "outage (first_byte_timeout)" {
		t.Errorf("skips %+v; want a/m outage (first_byte_timeout)", w.Skips)
	}
	calls(t, a, b, 1, 1)
	served(t, res, "b/m").Succeed()
}

// throttleRetry checks that a throttle asking for a 1 s wait is waited out
// on the clock and retried on the same target.
func throttleRetry(t *testing.T, header ...string) {
	t.Helper()
	a, b := newStub(status(429, header...), status(200)), newStub(status(200))
	_, _, _, res := walkOn(t, sameTarget(), a, b, func(clk *clocktest.Clock) {
		clk.WaitForTimers(1) // the walk's wait
		clk.Advance(time.Second - time.Millisecond)
		if a.n() != 1 {
			t.Errorf("a called %d times before the throttle's wait ended; want 1", a.n())
		}
		clk.Advance(time.Millisecond)
	})
	served(t, res, "a/m").Succeed()
	calls(t, a, b, 2, 0)
	c0, _ := a.call(0)
	c1, _ := a.call(1)
	if c0.IdempotencyKey == c1.IdempotencyKey {
		t.Errorf("idempotency key %q reused after a throttle; want a new one", c0.IdempotencyKey)
	}
}

func TestShortRetryAfterIsWaitedOutOnTheSameTarget(t *testing.T) {
	throttleRetry(t, "Retry-After", "1")
}

func TestShortRetryAfterMsIsWaitedOutOnTheSameTarget(t *testing.T) {
	throttleRetry(t, "retry-after-ms", "1000")
}

func TestLongRetryAfterFailsOverAtOnce(t *testing.T) {
	a, b := newStub(status(429, "Retry-After", "5"), status(200)), newStub(status(200))
	_, _, _, res := walkOn(t, sameTarget(), a, b, nil)
	served(t, res, "b/m").Succeed()
	calls(t, a, b, 1, 1)
}

func TestNoSameTargetRetryOnceTheBreakerOpened(t *testing.T) {
	as := sameTarget()
	as.Breaker = breaker.Config{ConsecutiveFailures: 1}
	a, b := newStub(status(500), status(200)), newStub(status(200))
	r, _, _, res := walkOn(t, as, a, b, nil)
	served(t, res, "b/m").Succeed()
	calls(t, a, b, 1, 1)
	if s := target(t, r, "a/m").Breaker().State(); s != breaker.StateOpen {
		t.Errorf("a/m breaker %v; want open", s)
	}
}

// A 5xx whose provider asks for a wait beyond SameTargetWait is not
// retried there early: the walk fails over at once, as for a throttle.
func TestOutageAskingForALongWaitFailsOverAtOnce(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := newStub(status(503, "Retry-After", "30"), status(200)), newStub(status(200))
	aliases, provs := two(sameTarget(), a, b)
	r := build(t, clk, nil, aliases, provs...)
	res, stuck := settle(t, clk, goNext(t.Context(), start(t, r, "smart", nil)), 2*time.Second)
	if stuck {
		t.Errorf("the walk waited on the clock after a 503 asking for 30 s; want an immediate failover")
	}
	if res.a != nil && !res.a.Final {
		res.a.Succeed()
	}
	calls(t, a, b, 1, 1)
}
