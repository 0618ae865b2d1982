package router

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Budgets.CommitAfter: a stream's first content events are held until
// enough have come, each within the suspicion threshold of the one before;
// a stream that stalls or drips before then fails over unseen.

// heldRequest is a streamed request whose Prepare reads as the gateway's
// does with a hold: every read that brings bytes is a content event, told
// to the attempt, and it reads on while the attempt is Holding. Held
// counts the events it held.
func heldRequest(model string) *Request {
	req := request(model)
	req.Stream = true
	req.Prepare = PrepareFunc(func(a *Attempt) aierr.Verdict {
		buf := make([]byte, 256)
		held := 0
		for {
			n, err := a.Resp.Body.Read(buf)
			if n > 0 {
				held++
				a.Held = held
				if a.Progress(); !a.Holding() {
					return aierr.Verdict{Kind: aierr.Success}
				}
				continue
			}
			if cut := a.Cut(); cut != nil {
				return *cut
			}
			return aierr.ClassifyError(err)
		}
	})
	return req
}

// chunks is a body that sends its chunks at once, one a read, then
// nothing until the attempt's context ends.
func chunks(c ...string) func(ctx context.Context) io.ReadCloser {
	return func(ctx context.Context) io.ReadCloser { return &scriptedBody{ctx: ctx, chunks: c} }
}

// holding builds alias "smart" over a then b, each holding 3 content
// events within 1 s of each other, and alias "solo" over a alone.
func holding(t *testing.T, a, b *stub) (*clocktest.Clock, *Router, *events) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	budgets := Budgets{Idle: 30 * time.Second, SuspectAfter: time.Second, CommitAfter: 3}
	r := build(t, clk, ev, []AliasSpec{
		{Name: "smart", Budgets: budgets, Targets: []TargetSpec{{Provider: "a", Model: "m"}, {Provider: "b", Model: "m"}}},
		{Name: "solo", Budgets: budgets, Targets: []TargetSpec{{Provider: "a", Model: "m"}}},
	}, ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	return clk, r, ev
}

// A stream that stalls after two content events, one short of its hold,
// is cut at the hold's gap as a stall of its target (its breaker hears of
// it) and the request goes to the next target, the last, whose stream
// commits at its first content: nothing of the first reached the caller.
func TestHeldStreamThatStallsFailsOverUnseen(t *testing.T) {
	a, b := newStub(withBody(200, chunks("x", "y"))), newStub(withBody(200, chunks("1", "2", "3", "4")))
	clk, r, ev := holding(t, a, b)
	res := goNext(t.Context(), start(t, r, "smart", heldRequest("smart")))
	clk.WaitForTimers(1)
	clk.Advance(999 * time.Millisecond)
	select {
	case got := <-res:
		t.Fatalf("Next returned %+v before the hold's gap had passed", got)
	default:
	}
	clk.Advance(time.Millisecond)
	at := served(t, await(t, res), "b/m")
	if held := at.Held.(int); held != 1 {
		t.Errorf("b's stream committed after %d events; want 1 (the last rung is not held)", held)
	}
	if e := nextEvent(t, ev); e.Target.Name != "a/m" || e.Verdict.Sub != aierr.StreamStalled {
		t.Errorf("first report %+v; want a/m's stall", e)
	}
	if failed, _, _ := totals(t, r, "a/m"); failed != 1 {
		t.Errorf("a/m's breaker counted %d failures; want the held stall", failed)
	}
	at.Succeed()
}

// A stream that keeps its pace through the hold commits on the target it
// began on, after exactly CommitAfter content events.
func TestHeldStreamCommitsAfterItsEvents(t *testing.T) {
	a, b := newStub(withBody(200, chunks("1", "2", "3", "4", "5"))), newStub(withBody(200, chunks("z")))
	_, r, _ := holding(t, a, b)
	at := served(t, await(t, goNext(t.Context(), start(t, r, "smart", heldRequest("smart")))), "a/m")
	if held := at.Held.(int); held != 3 {
		t.Errorf("committed after %d events; want 3", held)
	}
	if at.Holding() {
		t.Error("Holding after the hold's events had come")
	}
	at.Succeed()
	if b.n() != 0 {
		t.Errorf("b called %d times; want none", b.n())
	}
}

// On the ladder's last rung there is nowhere to fail over to: the first
// content commits, and a stall is left to the stream's own budgets.
func TestLastRungIsNotHeld(t *testing.T) {
	a := newStub(withBody(200, chunks("x")))
	_, r, _ := holding(t, a, newStub(withBody(200, chunks("z"))))
	at := served(t, await(t, goNext(t.Context(), start(t, r, "solo", heldRequest("solo")))), "a/m")
	if held := at.Held.(int); held != 1 || at.Holding() {
		t.Errorf("held %d events, holding %v; want the first content to commit", held, at.Holding())
	}
	at.Succeed()
}
