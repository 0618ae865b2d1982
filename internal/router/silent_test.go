package router

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
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

// twoStalled is suspectable with a second stream from a (through alias
// "solo") begun at the same moment: both stall after their first event.
func twoStalled(t *testing.T) (*clocktest.Clock, *Router, *events, *stub, [2]*Attempt) {
	t.Helper()
	clk, r, ev, a, first := suspectable(t)
	_, res := streamOn(t, r, "solo")
	second := served(t, res, "a/m")
	t.Cleanup(second.Abandon)
	return clk, r, ev, a, [2]*Attempt{first, second}
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

// The stream whose silence made its target suspect is cut at that moment
// with a stall verdict, counted once by its breaker, and reads fail with
// it: it does not wait out an idle budget (here, none at all).
func TestTurningSuspectCutsTheStalledStreamsAtOnce(t *testing.T) {
	clk, r, ev, _, ats := twoStalled(t)
	clk.Advance(time.Second)
	select {
	case e := <-ev.attempted:
		t.Fatalf("reported %s %v at 1s; want nothing before the stream is silent for longer", e.Target.Name, e.Verdict)
	default:
	}
	clk.Advance(time.Nanosecond)
	for range 2 {
		e := nextEvent(t, ev)
		if e.Target.Name != "a/m" || e.Verdict.Sub != aierr.StreamStalled || e.Duration != time.Second+time.Nanosecond {
			t.Fatalf("reported %s %v after %v; want a/m cut as stalled at 1s", e.Target.Name, e.Verdict, e.Duration)
		}
	}
	for _, at := range ats {
		if _, err := at.Resp.Body.Read(make([]byte, 8)); err == nil {
			t.Errorf("read of the cut stream succeeded; want the stall")
		} else if v, ok := aierr.FromError(err); !ok || v.Sub != aierr.StreamStalled {
			t.Errorf("read of the cut stream: %v; want stream_stalled", err)
		}
		if v := at.Broke(aierr.ClassifyError(io.ErrUnexpectedEOF)); v.Sub != aierr.StreamStalled {
			t.Errorf("Broke returned %v; want the cut's stall", v)
		}
	}
	if failed, _, _ := totals(t, r, "a/m"); failed != 2 {
		t.Errorf("a/m breaker failures: got %d; want 2, each cut counted once", failed)
	}
}

// One silent stream alone may be a pause of its own: it steers new
// requests away but is not cut before its idle budget.
func TestALoneSilentStreamIsNotCut(t *testing.T) {
	clk, _, _, _, at := suspectable(t)
	clk.Advance(5 * time.Second)
	if at.Cut() != nil {
		t.Errorf("the lone silent stream was cut: %v", at.Cut())
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

func TestProgressWithinSuspectAfterKeepsTheStream(t *testing.T) {
	clk, r, _, _, at := suspectable(t)
	clk.Advance(900 * time.Millisecond)
	at.Progress()
	clk.Advance(900 * time.Millisecond)
	_, res := streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed()
	if at.Cut() != nil {
		t.Errorf("the flowing stream was cut: %v", at.Cut())
	}
}

// Suspicion outlives the streams it cut: new requests skip the target
// until one let through a breaker's open period later answers.
func TestSuspicionOutlivesTheStreamsItCut(t *testing.T) {
	clk, r, _, a, _ := twoStalled(t)
	clk.Advance(1500 * time.Millisecond)
	_, res := streamOn(t, r, "smart")
	served(t, res, "b/m").Succeed()
	clk.Advance(breaker.DefaultOpenDuration - time.Second)
	_, res = streamOn(t, r, "smart")
	served(t, res, "b/m").Succeed()
	clk.Advance(time.Second) // the breaker's open period since a turned suspect
	_, res = streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed() // let through; it answers: suspicion ends
	_, res = streamOn(t, r, "smart")
	served(t, res, "a/m").Succeed()
	if a.n() != 4 {
		t.Errorf("a called %d times; want 4", a.n())
	}
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
