package router

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// A failover is counted (Spec.OnFailover) when the next target is actually
// sent the request, not when the walk gives up on a target.

// three returns a router with alias "smart" over a/m, b/m then c/m.
func three(t *testing.T, ev *events, a, b, c *stub) *Router {
	t.Helper()
	return build(t, clocktest.New(time.Time{}), ev, []AliasSpec{{Name: "smart",
		Targets: []TargetSpec{{Provider: "a", Model: "m"}, {Provider: "b", Model: "m"}, {Provider: "c", Model: "m"}}}},
		ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b}, ProviderSpec{Name: "c", Upstream: c})
}

func failovers(t *testing.T, ev *events, want ...string) {
	t.Helper()
	got := ev.failoversSoFar()
	if len(got) != len(want) {
		t.Fatalf("failovers %q; want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("failovers %q; want %q", got, want)
		}
	}
}

// From a to c past b's open breaker is one failover, from a.
func TestFailoverIsCountedWhenTheNextTargetIsSent(t *testing.T) {
	ev := newEvents()
	a, b, c := newStub(status(500)), newStub(status(200)), newStub(status(200))
	r := three(t, ev, a, b, c)
	target(t, r, "b/m").Breaker().ForceOpen()
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "c/m").Succeed()
	failovers(t, ev, "a/m: 500 outage (t500)")
}

// Failing on a and finding b's breaker open sends nothing: no failover.
func TestNoFailoverWhenNoTargetIsLeftToSend(t *testing.T) {
	ev := newEvents()
	a, b := newStub(status(500)), newStub(status(200))
	aliases, provs := two(AliasSpec{}, a, b)
	r := build(t, clocktest.New(time.Time{}), ev, aliases, provs...)
	target(t, r, "b/m").Breaker().ForceOpen()
	res := await(t, goNext(t.Context(), start(t, r, "smart", nil)))
	var nt *NoTargetError
	if !errors.As(res.err, &nt) {
		t.Fatalf("Next: got %+v, %v; want a NoTargetError", res.a, res.err)
	}
	failovers(t, ev)
}

// brokenStream delivers a stream from a/m and breaks it after commit.
func brokenStream(t *testing.T, ev *events, a, b *stub) (*Router, *Walk) {
	t.Helper()
	aliases, provs := two(AliasSpec{}, a, b)
	r := build(t, clocktest.New(time.Time{}), ev, aliases, provs...)
	w := start(t, r, "smart", streamRequest("smart"))
	at := served(t, await(t, goNext(t.Context(), w)), "a/m")
	at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF))
	return r, w
}

func TestBrokenStreamIsNoFailoverByItself(t *testing.T) {
	ev := newEvents()
	a, b := newStub(withBody(200, firstThenSilent("data: {}\n\n"))), newStub(status(200))
	brokenStream(t, ev, a, b)
	failovers(t, ev)
	if b.n() != 0 {
		t.Errorf("b called %d times; want 0", b.n())
	}
}

func TestBrokenStreamIsAFailoverOnceNextSendsTheNextTarget(t *testing.T) {
	ev := newEvents()
	a, b := newStub(withBody(200, firstThenSilent("data: {}\n\n"))), newStub(withBody(200, firstThenSilent("data: {}\n\n")))
	_, w := brokenStream(t, ev, a, b)
	served(t, await(t, goNext(t.Context(), w)), "b/m").Succeed()
	failovers(t, ev, "a/m: outage (conn_reset)")
	if len(w.Skips) != 1 || w.Skips[0] != (Skip{Target: "a/m", Reason: "outage (conn_reset) after it began"}) {
		t.Errorf("skips %+v; want a/m outage (conn_reset) after it began", w.Skips)
	}
}

func TestBrokenStreamThenAnOpenBreakerIsNoFailover(t *testing.T) {
	ev := newEvents()
	a, b := newStub(withBody(200, firstThenSilent("data: {}\n\n"))), newStub(status(200))
	r, w := brokenStream(t, ev, a, b)
	target(t, r, "b/m").Breaker().ForceOpen()
	res := await(t, goNext(t.Context(), w))
	var nt *NoTargetError
	if !errors.As(res.err, &nt) {
		t.Fatalf("Next: got %+v, %v; want a NoTargetError", res.a, res.err)
	}
	failovers(t, ev)
}
