package router

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Stall suspicion: when every stream in flight on a target has been silent
// for SuspectAfter, new requests skip it while a later target exists. The
// breaker is not told: suspicion alone trips nothing.

const firstEvent = "data: {}\n\n"

// suspectable returns a router with alias "smart" over a then b and alias
// "solo" over a alone, both suspecting silence of 1 s, and a stream
// delivered from a whose Prepare saw its first event.
func suspectable(t *testing.T) (*clocktest.Clock, *Router, *events, *stub, *Attempt) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	stream := withBody(200, firstThenSilent(firstEvent))
	a, b := newStub(stream), newStub(stream)
	budgets := Budgets{SuspectAfter: time.Second}
	r := build(t, clk, ev, []AliasSpec{
		{Name: "smart", Budgets: budgets, Targets: []TargetSpec{{Provider: "a", Model: "m"}, {Provider: "b", Model: "m"}}},
		{Name: "solo", Budgets: budgets, Targets: []TargetSpec{{Provider: "a", Model: "m"}}},
	}, ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", streamRequest("smart")))), "a/m")
	t.Cleanup(at.Abandon)
	return clk, r, ev, a, at
}

// streamOn starts a streamed walk on alias and returns it with its answer.
func streamOn(t *testing.T, r *Router, alias string) (*Walk, result) {
	t.Helper()
	w := start(t, r, alias, streamRequest(alias))
	return w, await(t, goNext(t.Context(), w))
}

func TestSilentStreamsMakeTheirTargetSuspect(t *testing.T) {
	clk, r, ev, a, _ := suspectable(t)
	clk.Advance(1500 * time.Millisecond)
	w, res := streamOn(t, r, "smart")
	served(t, res, "b/m").Succeed()
	want := Skip{Target: "a/m", Reason: "suspected stalled"}
	if len(w.Skips) != 1 || w.Skips[0] != want {
		t.Errorf("skips %+v; want [%+v]", w.Skips, want)
	}
	if got := recv(t, ev.skipped, "skip reported"); got != want {
		t.Errorf("OnSkip told %+v; want %+v", got, want)
	}
	if a.n() != 1 {
		t.Errorf("a called %d times; want 1", a.n())
	}
}

func TestSuspicionDoesNotTripTheBreaker(t *testing.T) {
	clk, r, _, _, _ := suspectable(t)
	clk.Advance(1500 * time.Millisecond)
	_, res := streamOn(t, r, "smart")
	served(t, res, "b/m").Succeed()
	if failed, _, _ := totals(t, r, "a/m"); failed != 0 {
		t.Errorf("a/m breaker failures: got %d; want 0", failed)
	}
}

func TestStreamsSilentForLessThanSuspectAfterAreNotSuspect(t *testing.T) {
	clk, r, _, _, _ := suspectable(t)
	clk.Advance(time.Second)
	_, res := streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed()
}

func TestSuspectTargetIsStillTriedWhenItIsTheLast(t *testing.T) {
	clk, r, _, a, _ := suspectable(t)
	clk.Advance(1500 * time.Millisecond)
	_, res := streamOn(t, r, "solo")
	served(t, res, "a/m").Succeed()
	if a.n() != 2 {
		t.Errorf("a called %d times; want 2", a.n())
	}
}

func TestProgressClearsSuspicion(t *testing.T) {
	clk, r, _, _, at := suspectable(t)
	clk.Advance(1500 * time.Millisecond)
	at.Progress()
	_, res := streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed()
}

func TestSuspicionEndsWithTheSilentStream(t *testing.T) {
	clk, r, _, _, at := suspectable(t)
	clk.Advance(1500 * time.Millisecond)
	at.Succeed()
	_, res := streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed()
}

// A TTFB cut that lands as a stream's headers arrive leaves no stream
// counted in flight on the target: otherwise the target would look silent
// for ever, and be skipped as suspected stalled while healthy.
func TestStreamCutAsItsHeadersArriveLeavesItsTargetUnsuspected(t *testing.T) {
	clk := clocktest.New(time.Time{})
	stream := withBody(200, firstThenSilent(firstEvent))
	// The first answer's headers come at 2 s whatever the context says, as
	// from a transport that had them as the attempt was cut.
	headersAt2s := func(ctx context.Context, c *Call) (*http.Response, error) {
		<-clk.NewTimer(2 * time.Second).C()
		return stream(ctx, c)
	}
	a, b := newStub(headersAt2s, stream), newStub(stream)
	aliases, provs := two(AliasSpec{Budgets: Budgets{TTFB: 2 * time.Second, SuspectAfter: time.Second},
		Breaker: breaker.Config{ConsecutiveFailures: 5}}, a, b)
	r := build(t, clk, nil, aliases, provs...)
	w := start(t, r, "smart", streamRequest("smart"))
	ch := goNext(t.Context(), w)
	clk.WaitForTimers(2) // the watchdog, then a's headers
	clk.Advance(2 * time.Second)
	served(t, await(t, ch), "b/m").Succeed()
	if len(w.Skips) != 1 || w.Skips[0].Reason != "outage (first_byte_timeout)" {
		t.Fatalf("skips %+v; want a/m cut by its TTFB budget", w.Skips)
	}

	clk.Advance(5 * time.Second)
	if n := target(t, r, "a/m").silent.Load() + target(t, r, "a/m").mature.Load(); n != 0 {
		t.Errorf("a/m counts %d streams for suspicion; want 0", n)
	}
	w2, res := streamOn(t, r, "smart")
	if len(w2.Skips) != 0 {
		t.Errorf("skips %+v; want a/m tried", w2.Skips)
	}
	served(t, res, "a/m").Succeed()
}
