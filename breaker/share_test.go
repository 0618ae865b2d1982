package breaker

import (
	"testing"
	"time"
)

// The new reasons come after the old ones, whose numbers (in stored
// metrics and messages) do not move.
func TestRemoteReasons(t *testing.T) {
	for _, tc := range []struct {
		r    Reason
		n    uint8
		name string
	}{
		{ReasonManual, 9, "manual"}, {ReasonRemote, 10, "remote"}, {ReasonExternal, 11, "external"},
		{ReasonExternal + 1, 12, "unknown"},
	} {
		if uint8(tc.r) != tc.n || tc.r.String() != tc.name {
			t.Errorf("reason %d %q; want %d %q", uint8(tc.r), tc.r, tc.n, tc.name)
		}
	}
}

// wantEvent checks the last transition delivered.
func wantEvent(t *testing.T, events transitions, n int, from, to State, reason Reason) {
	t.Helper()
	if len(events) != n {
		t.Fatalf("%d transitions %+v; want %d", len(events), events, n)
	}
	if e := events.last(); e.From != from || e.To != to || e.Reason != reason {
		t.Fatalf("last transition %v -> %v (%v); want %v -> %v (%v)", e.From, e.To, e.Reason, from, to, reason)
	}
}

func TestTrip(t *testing.T) {
	var events transitions
	b, clk := newTest(t, Config{ConsecutiveFailures: 3, OpenDuration: time.Second, OpenBackoff: 2, OnStateChange: events.add})
	inFlight := mustAllow(t, b)
	b.Trip(ReasonExternal)
	wantEvent(t, events, 1, StateClosed, StateOpen, ReasonExternal)
	if got := events.last().OpenUntil; !got.Equal(clk.Now().Add(time.Second)) {
		t.Fatalf("OpenUntil %v; want OpenDuration from now", got)
	}
	inFlight.Failure() // admitted before: dropped
	if s := b.Snapshot(); s.Totals.Dropped != 1 || s.RetryAfter != time.Second {
		t.Fatalf("snapshot %+v; want the earlier call dropped, open 1s", s)
	}

	b.Trip(ReasonExternal) // already open: nothing
	wantEvent(t, events, 1, StateClosed, StateOpen, ReasonExternal)

	clk.Advance(time.Second) // due; Trip first ends the period, then reopens
	b.Trip(ReasonNone)       // ReasonNone stands for ReasonExternal
	wantEvent(t, events, 3, StateHalfOpen, StateOpen, ReasonExternal)
	if s := b.Snapshot(); s.Reopens != 1 || s.RetryAfter != 2*time.Second {
		t.Fatalf("tripped from half-open: %d reopens, open %v; want 1, 2s (OpenBackoff)", s.Reopens, s.RetryAfter)
	}

	for _, manual := range []func(){b.ForceOpen, b.ForceClosed, b.Disable} {
		manual()
		n := len(events)
		b.Trip(ReasonExternal)
		if len(events) != n || b.State() == StateOpen {
			t.Fatalf("Trip moved a breaker in a manual state: %+v", events.last())
		}
	}
}

func TestOpenUntil(t *testing.T) {
	var events transitions
	b, clk := newTest(t, Config{ConsecutiveFailures: 3, OpenDuration: 5 * time.Second, OnStateChange: events.add})
	start := clk.Now()
	inFlight := mustAllow(t, b)
	if !b.OpenUntil(start.Add(20 * time.Second)) {
		t.Fatal("OpenUntil on a closed breaker reported no change")
	}
	wantEvent(t, events, 1, StateClosed, StateOpen, ReasonRemote)
	if got := events.last().OpenUntil; !got.Equal(start.Add(20 * time.Second)) {
		t.Fatalf("transition open until %v; want the remote deadline", got)
	}
	inFlight.Success()
	if oe := mustRefuse(t, b); !oe.Until.Equal(start.Add(20*time.Second)) || b.Snapshot().Totals.Dropped != 1 {
		t.Fatalf("refusal until %v, totals %+v; want the remote deadline, the earlier call dropped", oe.Until, b.Snapshot().Totals)
	}

	// Open: only a later deadline counts, without a transition.
	if b.OpenUntil(start.Add(10 * time.Second)) {
		t.Fatal("an earlier deadline reported a change")
	}
	if !b.OpenUntil(start.Add(30 * time.Second)) {
		t.Fatal("a later deadline reported no change")
	}
	wantEvent(t, events, 1, StateClosed, StateOpen, ReasonRemote)
	if s := b.Snapshot(); s.RetryAfter != 30*time.Second || !mustRefuse(t, b).Until.Equal(start.Add(30*time.Second)) {
		t.Fatalf("after moving the deadline: retry after %v; want 30s", s.RetryAfter)
	}
	// One open timer, re-armed for the new deadline.
	gen := genOf(b.word.Load())
	if n := clk.Pending(); n != 1 {
		t.Fatalf("%d timers pending; want the one open timer", n)
	}
	clk.Advance(20 * time.Second)
	if b.openDue.Load() == gen {
		t.Fatal("the old deadline's timer marked the period due")
	}
	mustRefuse(t, b)
	clk.Advance(10*time.Second - 1)
	mustRefuse(t, b)
	clk.Advance(1)
	if b.openDue.Load() != gen {
		t.Fatal("the new deadline's timer did not mark the period due")
	}
	wantState(t, b, StateHalfOpen)

	// Half-open: a future deadline reopens (a failed half-open period);
	// one already past changes nothing.
	if b.OpenUntil(clk.Now()) || len(events) != 2 {
		t.Fatalf("a deadline of now moved a half-open breaker: %+v", events.last())
	}
	if !b.OpenUntil(clk.Now().Add(time.Second)) {
		t.Fatal("OpenUntil on a half-open breaker reported no change")
	}
	wantEvent(t, events, 3, StateHalfOpen, StateOpen, ReasonRemote)
	if s := b.Snapshot(); s.Reopens != 1 {
		t.Fatalf("%d reopens; want 1", s.Reopens)
	}
	if b.OpenUntil(clk.Now().Add(-time.Hour)) {
		t.Fatal("a past deadline moved an open breaker")
	}

	// Manual states ignore it.
	b.ForceOpen()
	if b.OpenUntil(clk.Now().Add(time.Hour)) || b.State() != StateForcedOpen {
		t.Fatal("OpenUntil moved a forced-open breaker")
	}
}

// The old open timer has already fired (the period is due, nobody looked
// yet) when the deadline moves: the breaker stays open until the new one.
func TestOpenUntilAfterTimerFired(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second})
	mustAllow(t, b).Failure()
	clk.Advance(5 * time.Second)
	gen := genOf(b.word.Load())
	if b.openDue.Load() != gen {
		t.Fatal("open timer did not fire")
	}
	if !b.OpenUntil(clk.Now().Add(10 * time.Second)) {
		t.Fatal("a later deadline for a due breaker reported no change")
	}
	if b.openDue.Load() == gen {
		t.Fatal("the period is still marked due")
	}
	clk.Advance(10*time.Second - 1)
	mustRefuse(t, b)
	wantState(t, b, StateOpen)
	clk.Advance(1)
	wantState(t, b, StateHalfOpen)
}

// A deadline already past opens a closed breaker with its period over: the
// next call probes.
func TestOpenUntilPast(t *testing.T) {
	var events transitions
	b, clk := newTest(t, Config{ConsecutiveFailures: 3, OpenDuration: 5 * time.Second, OnStateChange: events.add})
	if !b.OpenUntil(clk.Now().Add(-time.Minute)) {
		t.Fatal("a past deadline on a closed breaker reported no change")
	}
	wantEvent(t, events, 1, StateClosed, StateOpen, ReasonRemote)
	if got := events.last().OpenUntil; !got.Equal(clk.Now()) {
		t.Fatalf("open until %v; want now", got)
	}
	probe := mustAllow(t, b)
	wantEvent(t, events, 2, StateOpen, StateHalfOpen, ReasonOpenElapsed)
	probe.Success()
	wantState(t, b, StateClosed)
}

// A deadline is capped at MaxOpenDuration from now.
func TestOpenUntilCapped(t *testing.T) {
	b, clk := newTest(t, Config{OpenDuration: time.Second, MaxOpenDuration: time.Minute})
	b.OpenUntil(clk.Now().Add(24 * time.Hour))
	if got := b.Snapshot().RetryAfter; got != time.Minute {
		t.Fatalf("open for %v; want the 1m cap", got)
	}
}

func TestCloseRemote(t *testing.T) {
	var events transitions
	b, clk := newTest(t, Config{WindowCalls: 10, FailureThreshold: 3, OpenDuration: 5 * time.Second, OpenBackoff: 2,
		HalfOpenProbes: 2, OnStateChange: events.add})
	if b.CloseRemote() || len(events) != 0 {
		t.Fatal("CloseRemote on a closed breaker changed something")
	}
	run(t, b, clk, seq(repeat(2, step{0, opFailure, StateClosed}), one(step{0, opFailure, StateOpen}),
		one(step{5 * time.Second, opFailure, StateOpen})))
	if s := b.Snapshot(); s.Reopens != 1 || s.RetryAfter != 10*time.Second {
		t.Fatalf("before: %d reopens, open %v; want 1, 10s", s.Reopens, s.RetryAfter)
	}
	if !b.CloseRemote() {
		t.Fatal("CloseRemote on an open breaker reported no change")
	}
	wantEvent(t, events, 4, StateOpen, StateClosed, ReasonRemote)
	if s := b.Snapshot(); s.Calls != 0 || s.Reopens != 0 || s.ConsecutiveFailures != 0 {
		t.Fatalf("after: %+v; want an empty window, no reopens", s)
	}
	// The next trip owes nothing to the open period CloseRemote ended.
	run(t, b, clk, seq(repeat(2, step{0, opFailure, StateClosed}), one(step{0, opFailure, StateOpen})))
	if got := b.Snapshot().RetryAfter; got != 5*time.Second {
		t.Fatalf("next trip open for %v; want OpenDuration", got)
	}

	clk.Advance(5 * time.Second)
	probe := mustAllow(t, b)
	if !b.CloseRemote() {
		t.Fatal("CloseRemote on a half-open breaker reported no change")
	}
	wantEvent(t, events, 7, StateHalfOpen, StateClosed, ReasonRemote)
	probe.Failure() // from the half-open period: dropped
	if s := b.Snapshot(); s.State != StateClosed || s.Failures != 0 || s.Totals.Dropped != 1 {
		t.Fatalf("after a dropped probe: %+v", s)
	}

	b.ForceOpen()
	if b.CloseRemote() || b.State() != StateForcedOpen {
		t.Fatal("CloseRemote moved a forced-open breaker")
	}
}

// OnRecord sees every outcome the closed-state rules count, and nothing
// else, without the breaker's lock held and before the rules act on it.
func TestOnRecord(t *testing.T) {
	type rec struct{ failed, slow bool }
	var got []rec
	var b *Breaker
	b, clk := newTest(t, Config{ConsecutiveFailures: 2, OpenDuration: time.Second, SlowCallDuration: time.Second,
		OnRecord: func(failed, slow bool) {
			if !b.mu.TryLock() {
				t.Error("OnRecord called with the breaker's lock held")
			} else {
				b.mu.Unlock()
			}
			if st := stateOf(b.word.Load()); st != StateClosed {
				t.Errorf("OnRecord called in %v; want before the rules see the outcome, while closed", st)
			}
			got = append(got, rec{failed, slow})
		}})
	want := func(step string, w ...rec) {
		t.Helper()
		if len(got) != len(w) {
			t.Fatalf("%s: recorded %v; want %v", step, got, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("%s: recorded %v; want %v", step, got, w)
			}
		}
		got = nil
	}
	mustAllow(t, b).Success()
	mustAllow(t, b).Report(Outcome{Result: Success, Duration: 2 * time.Second})
	mustAllow(t, b).Ignore()
	mustAllow(t, b).Failure()
	want("closed", rec{false, false}, rec{false, true}, rec{true, false})

	late := mustAllow(t, b)
	mustAllow(t, b).Failure() // trips, after OnRecord
	want("the tripping failure", rec{true, false})
	wantState(t, b, StateOpen)
	late.Failure() // dropped
	clk.Advance(time.Second)
	mustAllow(t, b).Success() // a probe
	want("dropped and probe outcomes")

	b.ForceClosed()
	mustAllow(t, b).Failure()
	b.Disable()
	mustAllow(t, b).Failure()
	want("manual states")
}
