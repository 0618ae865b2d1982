package router

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

// Background probes: an open breaker is probed by the router itself as its
// open period ends, and a refused key by its provider's Prober, so that
// recovery is seen without a client paying for it.

// tripped returns a router with alias "solo" over a alone, background
// probes on, whose breaker the first walk (a's first answer, a 500) has
// just opened for 5 s.
func tripped(t *testing.T, a *stub) (*clocktest.Clock, *Router, *events) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	r := build(t, clk, ev, []AliasSpec{{Name: "solo", BackgroundProbe: true, Retry: retry.Policy{Attempts: 1},
		Breaker: breaker.Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second},
		Targets: []TargetSpec{{Provider: "a", Model: "m"}}}},
		ProviderSpec{Name: "a", Upstream: a})
	res := await(t, goNext(t.Context(), start(t, r, "solo", nil)))
	var nt *NoTargetError
	if !errors.As(res.err, &nt) {
		t.Fatalf("Next: %+v, %v; want a NoTargetError", res.a, res.err)
	}
	state(t, r, breaker.StateOpen)
	return clk, r, ev
}

func state(t *testing.T, r *Router, want breaker.State) {
	t.Helper()
	if got := target(t, r, "a/m").Breaker().State(); got != want {
		t.Fatalf("a/m breaker %v; want %v", got, want)
	}
}

// checkProbe checks that a's i-th call is a background probe.
func checkProbe(t *testing.T, a *stub, i int) {
	t.Helper()
	if a.n() != i+1 {
		t.Fatalf("a called %d times; want %d", a.n(), i+1)
	}
	c, _ := a.call(i)
	if !strings.Contains(string(c.Body), `"max_tokens":1`) || c.Model != "m" || c.Stream {
		t.Errorf("probe call %+v body %s; want a plain request for m with max_tokens 1", c, c.Body)
	}
}

func TestBackgroundProbeClosesTheBreakerWhenItSucceeds(t *testing.T) {
	a := newStub(status(500), status(200))
	clk, r, ev := tripped(t, a)
	clk.Advance(5*time.Second - time.Millisecond)
	if a.n() != 1 {
		t.Fatalf("a called %d times before the open period ended; want 1", a.n())
	}
	clk.Advance(time.Millisecond)
	if v := recv(t, ev.probed, "probe"); v.Kind != aierr.Success {
		t.Errorf("probe verdict %v; want success", v)
	}
	checkProbe(t, a, 1)
	state(t, r, breaker.StateClosed)
}

func TestFailedBackgroundProbeReopensTheBreakerAndProbesAgain(t *testing.T) {
	a := newStub(status(500), status(500), status(200))
	clk, r, ev := tripped(t, a)
	clk.Advance(5 * time.Second)
	if v := recv(t, ev.probed, "first probe"); v.Kind != aierr.Outage {
		t.Errorf("first probe verdict %v; want outage", v)
	}
	checkProbe(t, a, 1)
	state(t, r, breaker.StateOpen)

	clk.Advance(5*time.Second - time.Millisecond)
	if a.n() != 2 {
		t.Fatalf("a called %d times before the second open period ended; want 2", a.n())
	}
	clk.Advance(time.Millisecond)
	if v := recv(t, ev.probed, "second probe"); v.Kind != aierr.Success {
		t.Errorf("second probe verdict %v; want success", v)
	}
	checkProbe(t, a, 2)
	state(t, r, breaker.StateClosed)
}

// refusedKey returns a router whose provider a (one key, an auth rest of
// 5 m, probed every 30 s) has just had its key refused with a 401. Its
// probes play probes; each probe answer's body, once closed, is told on
// the returned channel.
func refusedKey(t *testing.T, probeCodes ...int) (*clocktest.Clock, *Router, *events, prober, <-chan struct{}) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	closed := make(chan struct{}, len(probeCodes))
	var probes []answer
	for _, code := range probeCodes {
		probes = append(probes, signalled(code, closed))
	}
	up := prober{stub: newStub(status(401), status(200)), probes: newStub(probes...)}
	r := build(t, clk, ev, []AliasSpec{{Name: "solo", Retry: retry.Policy{Attempts: 1},
		Targets: []TargetSpec{{Provider: "a", Model: "m"}}}},
		ProviderSpec{Name: "a", Upstream: up, Keys: []string{"k1"}, AuthRest: 5 * time.Minute, AuthProbe: 30 * time.Second})
	res := await(t, goNext(t.Context(), start(t, r, "solo", nil)))
	var nt *NoTargetError
	if !errors.As(res.err, &nt) {
		t.Fatalf("Next: %+v, %v; want a NoTargetError", res.a, res.err)
	}
	e := recv(t, ev.keyed, "key refusal")
	if e.Back || e.Key != "a#0" || e.Verdict.Kind != aierr.Auth || e.For != 5*time.Minute {
		t.Fatalf("key event %+v; want a#0 refused (auth) for 5m", e)
	}
	return clk, r, ev, up, closed
}

func keyState(t *testing.T, r *Router, want KeyState) {
	t.Helper()
	if got := r.Keys(); len(got) != 1 || got[0] != want {
		t.Fatalf("Keys() = %+v; want [%+v]", got, want)
	}
}

func TestRefusedKeyIsOutOfRotation(t *testing.T) {
	_, r, _, _, _ := refusedKey(t, 200)
	keyState(t, r, KeyState{ID: "a#0", State: "refused", RetryIn: 5 * time.Minute})
}

func TestAuthProbeChecksARefusedKeyAfterItsPeriod(t *testing.T) {
	clk, _, _, up, closed := refusedKey(t, 401)
	clk.Advance(30*time.Second - time.Millisecond)
	if up.probes.n() != 0 {
		t.Fatalf("probed %d times before 30 s; want 0", up.probes.n())
	}
	clk.Advance(time.Millisecond)
	recv(t, closed, "probe answer read")
	if c, _ := up.probes.call(0); c.Key != "k1" {
		t.Errorf("probed key %q; want k1", c.Key)
	}
	clk.WaitForTimers(1) // the next probe, scheduled
}

func TestKeyStaysOutWhileItsProbeIsRefused(t *testing.T) {
	clk, r, _, up, closed := refusedKey(t, 401)
	for i := range 3 {
		clk.Advance(30 * time.Second)
		recv(t, closed, "probe answer read")
		clk.WaitForTimers(1) // the next probe, scheduled
		if up.probes.n() != i+1 {
			t.Fatalf("probed %d times after %d periods; want %d", up.probes.n(), i+1, i+1)
		}
		keyState(t, r, KeyState{ID: "a#0", State: "refused", RetryIn: 5*time.Minute - time.Duration(i+1)*30*time.Second})
	}
}

func TestKeyIsBackInRotationOnceItsProbeWorks(t *testing.T) {
	clk, r, ev, up, closed := refusedKey(t, 401, 200)
	clk.Advance(30 * time.Second)
	recv(t, closed, "first probe answer read")
	clk.WaitForTimers(1)
	clk.Advance(30 * time.Second)
	recv(t, closed, "second probe answer read")
	if e := recv(t, ev.keyed, "key back"); e != (KeyEvent{Back: true, Key: "a#0"}) {
		t.Errorf("key event %+v; want a#0 back", e)
	}
	keyState(t, r, KeyState{ID: "a#0", State: "in rotation"})
	served(t, await(t, goNext(t.Context(), start(t, r, "solo", nil))), "a/m").Succeed()
	if c, _ := up.call(1); c.Key != "k1" {
		t.Errorf("served with key %q; want k1", c.Key)
	}
	clk.Advance(time.Hour)
	if up.probes.n() != 2 {
		t.Errorf("probed %d times; want 2 (no probing once the key is back)", up.probes.n())
	}
}

// A target whose streams failed lately is probed with a stream, and that
// stream must keep going: one that sends its first bytes and then falls
// silent for the alias's suspicion threshold is a stall at that moment,
// not an answer awaited for the probe's whole budget; the breaker opens
// again and the next probe comes an open period later.
func TestStreamedProbeThatFallsSilentIsAStall(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a := newStub(status(500), withBody(200, firstThenSilent(firstEvent)), status(200))
	r := build(t, clk, ev, []AliasSpec{{Name: "solo", BackgroundProbe: true, Retry: retry.Policy{Attempts: 1},
		Breaker: breaker.Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second},
		Budgets: Budgets{TTFB: 4 * time.Second, Idle: 30 * time.Second, SuspectAfter: time.Second},
		Targets: []TargetSpec{{Provider: "a", Model: "m"}}}},
		ProviderSpec{Name: "a", Upstream: a})
	if res := await(t, goNext(t.Context(), start(t, r, "solo", nil))); res.err == nil {
		t.Fatalf("Next: %+v; want the 500 to fail", res.a)
	}
	target(t, r, "a/m").streamFailAt.Store(r.now() + 1) // its streams stalled just now
	clk.Advance(5 * time.Second)                        // the probe goes out and sends its first event
	clk.WaitForTimers(2)                                // the probe's budget and its silence
	clk.Advance(time.Second - time.Millisecond)
	select {
	case v := <-ev.probed:
		t.Fatalf("probe decided %v before its stream had been silent 1s", v)
	default:
	}
	clk.Advance(time.Millisecond)
	if v := recv(t, ev.probed, "probe"); v.Sub != aierr.StreamStalled || v.Code != "probe_stream_stalled" {
		t.Fatalf("probe verdict %v; want the stream's stall", v)
	}
	if c, _ := a.call(1); !c.Stream {
		t.Errorf("the probe was not streamed: %+v", c)
	}
	state(t, r, breaker.StateOpen)
}

// A half-open breaker whose probe a client request took, and left
// undecided (the client went away), is not left half-open for ever: the
// background probe that found the probe taken looks again shortly, and
// its own probe decides.
func TestBackgroundProbeLooksAgainWhileTheProbeIsTaken(t *testing.T) {
	clk := clocktest.New(time.Time{})
	ev := newEvents()
	a := newStub(status(500), status(200))
	r := build(t, clk, ev, []AliasSpec{{Name: "solo", Retry: retry.Policy{Attempts: 1},
		Breaker: breaker.Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second},
		Targets: []TargetSpec{{Provider: "a", Model: "m"}}}},
		ProviderSpec{Name: "a", Upstream: a})
	if res := await(t, goNext(t.Context(), start(t, r, "solo", nil))); res.err == nil {
		t.Fatalf("Next: %+v; want the 500 to fail", res.a)
	}
	clk.Advance(5 * time.Second)
	tg := target(t, r, "a/m")
	client, err := tg.Breaker().Allow() // a client's request takes the probe
	if err != nil || tg.Breaker().State() != breaker.StateHalfOpen {
		t.Fatalf("Allow: %v, state %v; want the half-open probe", err, tg.Breaker().State())
	}
	r.probeTarget(tg) // finds it taken
	if a.n() != 1 {
		t.Fatalf("a called %d times; the probe was taken, want no background probe yet", a.n())
	}
	client.Ignore() // the client left: nothing learned
	clk.Advance(probeRecheck)
	if v := recv(t, ev.probed, "probe"); v.Kind != aierr.Success {
		t.Fatalf("probe verdict %v; want success", v)
	}
	checkProbe(t, a, 1)
	state(t, r, breaker.StateClosed)
}
