package breaker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// op is what a step does.
type op int

const (
	opSuccess op = iota // an admitted call that succeeds
	opFailure           // an admitted call that fails
	opIgnore            // an admitted call whose outcome is ignored
	opSlow              // an admitted call that succeeds slowly (1 h)
	opRefused           // a call that must be refused
	opNone              // no call: only advance and check
)

func (o op) String() string {
	return [...]string{"success", "failure", "ignore", "slow", "refused", "none"}[o]
}

// step advances the fake clock, makes a call and checks the state after it.
type step struct {
	advance time.Duration
	op      op
	want    State
}

// repeat returns n copies of s.
func repeat(n int, s step) []step {
	out := make([]step, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func seq(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func one(s step) []step { return []step{s} }

func newTest(t *testing.T, cfg Config) (*Breaker, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	cfg.Clock = clk
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b, clk
}

func run(t *testing.T, b *Breaker, clk *clocktest.Clock, steps []step) {
	t.Helper()
	for i, s := range steps {
		clk.Advance(s.advance)
		if s.op != opNone {
			p, err := b.Allow()
			switch {
			case s.op == opRefused && err == nil:
				t.Fatalf("step %d (%v): Allow admitted the call; want refused (state %v)", i, s.op, b.State())
			case s.op == opRefused && !errors.Is(err, ErrOpen):
				t.Fatalf("step %d: Allow error %v; want ErrOpen", i, err)
			case s.op != opRefused && err != nil:
				t.Fatalf("step %d (%v): Allow = %v; want admitted", i, s.op, err)
			}
			switch s.op {
			case opSuccess:
				p.Success()
			case opFailure:
				p.Failure()
			case opIgnore:
				p.Ignore()
			case opSlow:
				p.Report(Outcome{Result: Success, Duration: time.Hour})
			}
		}
		if got := b.State(); got != s.want {
			t.Fatalf("step %d (advance %v, %v): state %v; want %v", i, s.advance, s.op, got, s.want)
		}
	}
}

// Policy 1: 5 failures within a 60 s sliding window → open 30 s; the next
// call after that is a single trial; trial failure reopens, trial success
// closes and forgets old failures.
func TestPolicyFailuresInWindow(t *testing.T) {
	cfg := Config{Window: 60 * time.Second, FailureThreshold: 5, OpenDuration: 30 * time.Second, HalfOpenProbes: 1}
	b, clk := newTest(t, cfg)
	run(t, b, clk, seq(
		repeat(4, step{time.Second, opFailure, StateClosed}),
		repeat(20, step{time.Second, opSuccess, StateClosed}), // successes do not dilute a count rule
		one(step{time.Second, opFailure, StateOpen}),          // the 5th within 60 s
		one(step{29 * time.Second, opRefused, StateOpen}),
		one(step{time.Second, opNone, StateHalfOpen}),
		// a single trial: the second concurrent call is refused
	))
	p, err := b.Allow()
	if err != nil {
		t.Fatalf("trial refused: %v", err)
	}
	if _, err := b.Allow(); !errors.Is(err, ErrOpen) {
		t.Fatalf("second call during trial: %v; want ErrOpen", err)
	}
	p.Failure()
	run(t, b, clk, seq(
		one(step{0, opRefused, StateOpen}),
		one(step{30 * time.Second, opSuccess, StateClosed}),
		// the old failures are forgotten: four more do not trip
		repeat(4, step{time.Second, opFailure, StateClosed}),
		one(step{time.Second, opFailure, StateOpen}),
	))
}

// Failures older than the window do not count.
func TestWindowForgetsOldFailures(t *testing.T) {
	b, clk := newTest(t, Config{Window: 60 * time.Second, FailureThreshold: 5})
	run(t, b, clk, seq(
		repeat(4, step{time.Second, opFailure, StateClosed}), // at 1..4 s
		one(step{62 * time.Second, opFailure, StateClosed}),  // 66 s: the first four have left
		repeat(3, step{time.Second, opFailure, StateClosed}),
		one(step{time.Second, opFailure, StateOpen}),
	))
}

// A bucket boundary: with 10 buckets of 6 s, outcomes leave the window a
// whole bucket at a time.
func TestWindowExpiryAtBucketBoundary(t *testing.T) {
	b, clk := newTest(t, Config{Window: 60 * time.Second, Buckets: 10, FailureThreshold: 2})
	clk.Advance(6 * time.Second) // start of bucket 1
	run(t, b, clk, one(step{0, opFailure, StateClosed}))
	// bucket 1 is in the window until bucket 11 begins, at 66 s
	run(t, b, clk, one(step{59*time.Second + 999*time.Millisecond, opNone, StateClosed}))
	if s := b.Snapshot(); s.Failures != 1 {
		t.Fatalf("at 65.999 s window holds %d failures; want 1", s.Failures)
	}
	clk.Advance(time.Millisecond) // 66 s
	if s := b.Snapshot(); s.Failures != 0 {
		t.Fatalf("at 66 s window holds %d failures; want 0", s.Failures)
	}
	run(t, b, clk, one(step{0, opFailure, StateClosed}))
}

// Policy 2: 5 consecutive failures → open 30 s; half-open allows 3 probes;
// 2 successes close.
func TestPolicyConsecutiveThreeProbes(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 5, OpenDuration: 30 * time.Second, HalfOpenProbes: 3, HalfOpenSuccesses: 2})
	run(t, b, clk, seq(
		repeat(4, step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}), // breaks the run
		repeat(4, step{0, opFailure, StateClosed}),
		one(step{0, opFailure, StateOpen}),
		one(step{30 * time.Second, opNone, StateHalfOpen}),
	))
	var ps []Permit
	for i := range 3 {
		p, err := b.Allow()
		if err != nil {
			t.Fatalf("probe %d refused: %v", i, err)
		}
		ps = append(ps, p)
	}
	if _, err := b.Allow(); !errors.Is(err, ErrOpen) {
		t.Fatalf("4th probe: %v; want refused", err)
	}
	ps[0].Success()
	if s := b.State(); s != StateHalfOpen {
		t.Fatalf("after 1 probe success: %v", s)
	}
	ps[1].Success()
	if s := b.State(); s != StateClosed {
		t.Fatalf("after 2 probe successes: %v; want closed", s)
	}
	ps[2].Failure() // a probe of the finished half-open period: dropped
	if s := b.State(); s != StateClosed {
		t.Fatalf("late probe failure reopened the breaker: %v", s)
	}
	if got := b.Snapshot().Totals.Dropped; got != 1 {
		t.Fatalf("Dropped = %d; want 1", got)
	}
}

// Policy 3: failure rate ≥ 40% over a 10 s window with at least 20 calls →
// open 8 s; 2 probes; plus 5 consecutive failures trip below 20 calls.
func TestPolicyFailureRateWithShortcut(t *testing.T) {
	cfg := Config{Window: 10 * time.Second, FailureRate: 0.4, MinCalls: 20, ConsecutiveFailures: 5,
		OpenDuration: 8 * time.Second, HalfOpenProbes: 2}
	b, clk := newTest(t, cfg)
	// 19 calls at 47% failure: below MinCalls, no trip
	var steps []step
	for i := range 19 {
		o := opSuccess
		if i%2 == 1 {
			o = opFailure
		}
		steps = append(steps, step{100 * time.Millisecond, o, StateClosed})
	}
	run(t, b, clk, steps)
	// the 20th call, a success: 9/20 = 45% ≥ 40% → trips on a success
	run(t, b, clk, one(step{100 * time.Millisecond, opSuccess, StateOpen}))
	if tr := b.Snapshot(); tr.RetryAfter != 8*time.Second {
		t.Fatalf("RetryAfter = %v; want 8s", tr.RetryAfter)
	}
	run(t, b, clk, seq(
		one(step{8 * time.Second, opSuccess, StateHalfOpen}),
		one(step{0, opSuccess, StateClosed}),
	))

	// the shortcut: 5 consecutive failures, only 5 calls in the window
	b2, clk2 := newTest(t, cfg)
	run(t, b2, clk2, seq(
		repeat(4, step{time.Millisecond, opFailure, StateClosed}),
		one(step{time.Millisecond, opFailure, StateOpen}),
	))
	if r := b2.Snapshot().Calls; r >= 20 {
		t.Fatalf("window holds %d calls", r)
	}
}

// Exactly at the rate threshold trips; one below does not.
func TestFailureRateThresholdEdges(t *testing.T) {
	for _, tc := range []struct {
		failures int
		want     State
	}{{3, StateClosed}, {4, StateOpen}} { // 3/10 < 40% <= 4/10
		b, clk := newTest(t, Config{WindowCalls: 10, FailureRate: 0.4, MinCalls: 10})
		var steps []step
		for i := range 10 {
			o, want := opSuccess, StateClosed
			if i < tc.failures {
				o = opFailure
			}
			if i == 9 {
				want = tc.want
			}
			steps = append(steps, step{0, o, want})
		}
		run(t, b, clk, steps)
	}
}

// Policy 4: slow-call threshold 10 s; ≥ 50% slow calls over the window trip,
// though every call succeeds.
func TestPolicySlowCalls(t *testing.T) {
	b, clk := newTest(t, Config{Window: time.Minute, SlowCallDuration: 10 * time.Second, SlowCallRate: 0.5, MinCalls: 10})
	run(t, b, clk, seq(
		repeat(5, step{time.Second, opSuccess, StateClosed}),
		repeat(4, step{time.Second, opSlow, StateClosed}),
		one(step{time.Second, opSlow, StateOpen}), // 5/10 slow
	))
	s := b.Snapshot()
	if s.Totals.Failed != 0 || s.Totals.Slow != 5 {
		t.Fatalf("totals %+v; want 0 failed, 5 slow", s.Totals)
	}
}

// A call is slow only when it takes longer than SlowCallDuration
// (resilience4j's reading): exactly the duration is not slow, one
// nanosecond more is, whether measured on the clock or reported.
func TestSlowCallBoundary(t *testing.T) {
	const limit = 10 * time.Second
	for _, tc := range []struct {
		d    time.Duration
		slow bool
	}{{limit - 1, false}, {limit, false}, {limit + 1, true}} {
		b, clk := newTest(t, Config{WindowCalls: 2, SlowCallDuration: limit, SlowCallRate: 1, MinCalls: 2})
		measured := mustAllow(t, b)
		clk.Advance(tc.d)
		measured.Success()
		mustAllow(t, b).Report(Outcome{Result: Failure, Duration: tc.d})
		want := int64(0)
		if tc.slow {
			want = 2
		}
		if s := b.Snapshot(); s.SlowCalls != want || s.Totals.Slow != uint64(want) {
			t.Errorf("%v calls (measured, reported): %d slow in the window, %d in the totals; want %d", tc.d, s.SlowCalls, s.Totals.Slow, want)
		}
	}
}

// Policy 5: 3 consecutive failures → open 5 s; 2 consecutive successes in
// half-open close.
func TestPolicyConsecutiveTwoSuccesses(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 3, OpenDuration: 5 * time.Second, HalfOpenSuccesses: 2})
	run(t, b, clk, seq(
		repeat(2, step{0, opFailure, StateClosed}),
		one(step{0, opFailure, StateOpen}),
		one(step{5 * time.Second, opSuccess, StateHalfOpen}),
		one(step{0, opFailure, StateOpen}), // any failure reopens
		one(step{5 * time.Second, opSuccess, StateHalfOpen}),
		one(step{0, opSuccess, StateClosed}),
	))
}

func TestDefaultRuleIsFiveConsecutive(t *testing.T) {
	b, clk := newTest(t, Config{})
	run(t, b, clk, seq(repeat(4, step{0, opFailure, StateClosed}), one(step{0, opFailure, StateOpen})))
}

func TestIgnoredCountsForNothingAndFreesProbe(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 2, OpenDuration: time.Second})
	run(t, b, clk, seq(
		one(step{0, opFailure, StateClosed}),
		repeat(10, step{0, opIgnore, StateClosed}), // does not break the run
		one(step{0, opFailure, StateOpen}),
		one(step{time.Second, opIgnore, StateHalfOpen}), // probe ignored: slot free again
		one(step{0, opIgnore, StateHalfOpen}),
		one(step{0, opSuccess, StateClosed}),
	))
	if got := b.Snapshot().Totals.Ignored; got != 12 {
		t.Fatalf("Ignored = %d; want 12", got)
	}
}

// A success that began while closed and reports after the breaker opened
// and went half-open must not close it.
func TestLateOutcomeFromEarlierGenerationDropped(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second})
	slow, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	run(t, b, clk, seq(
		one(step{0, opFailure, StateOpen}),
		one(step{time.Second, opNone, StateHalfOpen}),
	))
	slow.Success()
	if s := b.State(); s != StateHalfOpen {
		t.Fatalf("closed-era success moved half-open breaker to %v", s)
	}
	slow.Failure() // reports are dropped however many times they come
	if s := b.State(); s != StateHalfOpen {
		t.Fatalf("closed-era failure moved half-open breaker to %v", s)
	}
}

// Probes in flight when a probe failure reopens the breaker are dropped.
func TestProbesInFlightWhenReopened(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, HalfOpenProbes: 2})
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opNone, StateHalfOpen})))
	p1, _ := b.Allow()
	p2, _ := b.Allow()
	p1.Failure()
	if s := b.State(); s != StateOpen {
		t.Fatalf("after probe failure: %v", s)
	}
	clk.Advance(time.Second)
	p2.Success() // from the previous half-open period
	s := b.Snapshot()
	if s.State != StateHalfOpen || s.ProbeSuccesses != 0 {
		t.Fatalf("stale probe counted: state %v, probe successes %d", s.State, s.ProbeSuccesses)
	}
}

// A probe that never reports does not leave the breaker stuck half-open.
func TestHalfOpenMaxWait(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, HalfOpenMaxWait: 10 * time.Second})
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opNone, StateHalfOpen})))
	lost, _ := b.Allow()
	run(t, b, clk, seq(
		one(step{9 * time.Second, opRefused, StateHalfOpen}),
		one(step{time.Second, opRefused, StateOpen}), // max wait reached: reopened
		one(step{time.Second, opSuccess, StateClosed}),
	))
	lost.Failure() // too late to matter
	if s := b.State(); s != StateClosed {
		t.Fatalf("lost probe's late failure: %v", s)
	}
}

func TestOpenBackoffGrowsAndCaps(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, OpenBackoff: 2, MaxOpenDuration: 5 * time.Second})
	run(t, b, clk, one(step{0, opFailure, StateOpen}))
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if got := b.Snapshot().RetryAfter; got != want {
			t.Fatalf("open period %d: %v; want %v", i, got, want)
		}
		run(t, b, clk, one(step{want, opFailure, StateOpen}))
	}
	run(t, b, clk, seq(one(step{5 * time.Second, opSuccess, StateClosed}), one(step{0, opFailure, StateOpen})))
	if got := b.Snapshot().RetryAfter; got != time.Second {
		t.Fatalf("after closing, open period %v; want back to 1s", got)
	}
}

func TestOpenJitterStaysInBounds(t *testing.T) {
	for _, r := range []float64{0, 0.5, 0.999} {
		b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: 10 * time.Second, OpenJitter: 0.2, Rand: func() float64 { return r }})
		run(t, b, clk, one(step{0, opFailure, StateOpen}))
		got := b.Snapshot().RetryAfter
		want := time.Duration(float64(10*time.Second) * (1 + 0.2*(2*r-1)))
		if got != want || got < 8*time.Second || got > 12*time.Second {
			t.Fatalf("rand %v: open %v; want %v within [8s, 12s]", r, got, want)
		}
	}
}

type hinted struct{ d time.Duration }

func (h hinted) Error() string             { return "throttled" }
func (h hinted) RetryAfter() time.Duration { return h.d }

func TestRetryAfterHintLengthensOpenPeriod(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second, MaxOpenDuration: time.Minute})
	p, _ := b.Allow()
	p.Report(Outcome{Result: Failure, RetryAfter: 20 * time.Second})
	if got := b.Snapshot().RetryAfter; got != 20*time.Second {
		t.Fatalf("open for %v; want the 20s hint", got)
	}
	_, err := b.Allow()
	var oe *OpenError
	if !errors.As(err, &oe) || oe.RetryAfter() != 20*time.Second {
		t.Fatalf("refusal %v; want *OpenError with RetryAfter 20s", err)
	}
	clk.Advance(5 * time.Second)
	if got := oe.RetryAfter(); got != 15*time.Second {
		t.Fatalf("RetryAfter after 5s = %v; want 15s", got)
	}
	// a shorter hint never shortens; a hint above the cap is capped
	clk.Advance(15 * time.Second)
	p, _ = b.Allow()
	p.Report(Outcome{Result: Failure, RetryAfter: time.Hour})
	if got := b.Snapshot().RetryAfter; got != time.Minute {
		t.Fatalf("hint of 1h opened for %v; want the 1m cap", got)
	}
	// through Execute, a hint on the error is used
	b2, _ := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second})
	_ = b2.Execute(t.Context(), func(context.Context) error { return hinted{7 * time.Second} })
	if got := b2.Snapshot().RetryAfter; got != 7*time.Second {
		t.Fatalf("Execute with a 7s hint opened for %v", got)
	}
}

func TestForcedStatesAndReset(t *testing.T) {
	var events []Transition
	b, clk := newTest(t, Config{ConsecutiveFailures: 2, OnStateChange: func(tr Transition) { events = append(events, tr) }})
	b.ForceOpen()
	run(t, b, clk, one(step{time.Hour, opRefused, StateForcedOpen}))
	_, err := b.Allow()
	var oe *OpenError
	if !errors.As(err, &oe) || oe.State != StateForcedOpen || oe.RetryAfter() != 0 {
		t.Fatalf("forced-open refusal = %v", err)
	}
	b.ForceClosed()
	run(t, b, clk, repeat(10, step{0, opFailure, StateForcedClosed}))
	if s := b.Snapshot(); s.ConsecutiveFailures != 0 || s.Totals.Failed != 10 {
		t.Fatalf("forced closed recorded into rules: %+v", s)
	}
	b.Disable()
	run(t, b, clk, repeat(10, step{0, opFailure, StateDisabled}))
	if s := b.Snapshot(); s.ConsecutiveFailures != 10 {
		t.Fatalf("disabled did not record: consecutive %d", s.ConsecutiveFailures)
	}
	b.Reset()
	run(t, b, clk, seq(one(step{0, opFailure, StateClosed}), one(step{0, opFailure, StateOpen})))
	b.Reset()
	run(t, b, clk, one(step{0, opSuccess, StateClosed}))
	want := []State{StateForcedOpen, StateForcedClosed, StateDisabled, StateClosed, StateOpen, StateClosed}
	if len(events) != len(want) {
		t.Fatalf("events %v; want %d", events, len(want))
	}
	for i, e := range events {
		if e.To != want[i] {
			t.Fatalf("event %d to %v; want %v", i, e.To, want[i])
		}
	}
	if events[4].Reason != ReasonConsecutiveFailures || events[5].Reason != ReasonManual {
		t.Fatalf("reasons %v, %v", events[4].Reason, events[5].Reason)
	}
}

// The listener runs without the breaker's lock: it may call the breaker.
func TestListenerMayCallBreaker(t *testing.T) {
	var b *Breaker
	var seen []State
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, OnStateChange: func(tr Transition) {
		seen = append(seen, b.State())
		_ = b.Snapshot()
	}})
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opSuccess, StateClosed})))
	if len(seen) != 3 {
		t.Fatalf("listener saw %v", seen)
	}
}

func TestEventsCarryReasonsAndTimes(t *testing.T) {
	var events []Transition
	b, clk := newTest(t, Config{Name: "openai/gpt", WindowCalls: 4, FailureRate: 0.5, MinCalls: 4, OpenDuration: 3 * time.Second,
		OnStateChange: func(tr Transition) { events = append(events, tr) }})
	run(t, b, clk, seq(
		repeat(2, step{0, opSuccess, StateClosed}),
		one(step{0, opFailure, StateClosed}),
		one(step{time.Second, opFailure, StateOpen}),
		one(step{3 * time.Second, opFailure, StateOpen}),
	))
	start := clocktest.New(time.Time{}).Now()
	want := []Transition{
		{Name: "openai/gpt", From: StateClosed, To: StateOpen, Reason: ReasonFailureRate, At: start.Add(time.Second), OpenUntil: start.Add(4 * time.Second)},
		{Name: "openai/gpt", From: StateOpen, To: StateHalfOpen, Reason: ReasonOpenElapsed, At: start.Add(4 * time.Second)},
		{Name: "openai/gpt", From: StateHalfOpen, To: StateOpen, Reason: ReasonProbeFailed, At: start.Add(4 * time.Second), OpenUntil: start.Add(7 * time.Second)},
	}
	if len(events) != len(want) {
		t.Fatalf("got %d events %+v", len(events), events)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Errorf("event %d = %+v; want %+v", i, events[i], want[i])
		}
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{FailureRate: 1.5, Window: time.Second}, "FailureRate"},
		{Config{FailureThreshold: 3}, "needs a window"},
		{Config{Window: time.Second, WindowCalls: 5}, "not both"},
		{Config{SlowCallRate: 0.5, WindowCalls: 5}, "needs SlowCallDuration"},
		{Config{HalfOpenProbes: 1, HalfOpenSuccesses: 2}, "HalfOpenSuccesses"},
		{Config{OpenDuration: -time.Second}, "OpenDuration"},
		{Config{OpenJitter: 1}, "OpenJitter"},
		{Config{OpenDuration: time.Minute, MaxOpenDuration: time.Second}, "MaxOpenDuration"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error naming %q", tc.cfg, err, tc.want)
		}
	}
}
