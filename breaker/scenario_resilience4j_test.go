package breaker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Scenarios from resilience4j/resilience4j,
// resilience4j-circuitbreaker/src/test/java/io/github/resilience4j/circuitbreaker/internal/CircuitBreakerStateMachineTest.java
// unless noted. Their fixture: failure rate 50%, slow calls from 4 s at a
// 50% rate, 4 calls in half-open, open for 5 s, one exception type ignored.
//
// Differences throughout: resilience4j decides a half-open period by the
// failure (and slow-call) rate of all its permitted calls; ours reopens on
// the first failed (or, with a slow-call rule, slow) probe and closes after
// HalfOpenSuccesses successes. A call is slow, in both, when it takes
// longer than the threshold (TestSlowCallBoundary).

// r4jConfig is the fixture with a count window of 5 calls (the older
// version of the fixture; the newer one uses a time window, see
// ...ThresholdExceeded2).
func r4jConfig() Config {
	return Config{Name: "testName", WindowCalls: 5, MinCalls: 5, FailureRate: 0.5,
		SlowCallDuration: 4 * time.Second, SlowCallRate: 0.5,
		HalfOpenProbes: 4, OpenDuration: 5 * time.Second}
}

var errIgnored = errors.New("number format") // stands in for NumberFormatException

func r4jClassify(err error) Outcome {
	if errors.Is(err, errIgnored) {
		return Outcome{Result: Ignored}
	}
	return DefaultClassify(err)
}

// r4jHalfOpen makes a breaker from cfg, trips it with one failure and
// waits out the open period: it is half-open, no probe taken.
func r4jHalfOpen(t *testing.T, cfg Config) (*Breaker, *clocktest.Clock) {
	t.Helper()
	cfg.ConsecutiveFailures = 1
	b, clk := newTest(t, cfg)
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{cfg.OpenDuration, opNone, StateHalfOpen})))
	return b, clk
}

// Origin: shouldOpenAfterFailureRateThresholdExceeded. Three failures then
// two successes: the 5th call fills the window at 60% and trips, though it
// succeeded; the next call is refused and counted as not permitted.
func TestScenario_Resilience4j_OpenAfterFailureRateThresholdExceeded(t *testing.T) {
	var events transitions
	cfg := r4jConfig()
	cfg.OnStateChange = events.add
	b, clk := newTest(t, cfg)
	run(t, b, clk, seq(
		repeat(3, step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
		one(step{0, opSuccess, StateOpen}),
	))
	s := b.Snapshot()
	if s.Calls != 5 || s.Failures != 3 || s.FailureRate != 0.6 || events.last().Reason != ReasonFailureRate {
		t.Fatalf("snapshot %+v, event %+v; want 5 calls, 3 failures, rate 0.6, failure-rate trip", s, events.last())
	}
	mustRefuse(t, b)
	if got := b.Snapshot().Totals.Rejected; got != 1 {
		t.Fatalf("Rejected = %d; want 1", got)
	}
}

// Origin: shouldOpenAfterFailureRateThresholdExceeded2 (time-based window
// of 20 s, at least 5 calls). 3 successes and 2 failures a second apart stay
// under 50%; a 3rd failure a second later makes 3 of 6 and trips.
func TestScenario_Resilience4j_OpenAfterFailureRateThresholdExceeded2(t *testing.T) {
	b, clk := newTest(t, Config{Window: 20 * time.Second, MinCalls: 5, FailureRate: 0.5})
	run(t, b, clk, seq(
		repeat(3, step{time.Second, opSuccess, StateClosed}),
		repeat(2, step{time.Second, opFailure, StateClosed}),
		one(step{time.Second, opNone, StateClosed}),
		one(step{0, opFailure, StateOpen}),
	))
}

// Origin: shouldOpenAfterSlowCallRateThresholdExceeded. Slow failure, slow
// success, fast failure, fast success, slow success: 3 of 5 slow trips on
// the slow-call rule although failures are only 40%.
func TestScenario_Resilience4j_SlowCallRateAboveThreshold(t *testing.T) {
	var events transitions
	cfg := r4jConfig()
	cfg.OnStateChange = events.add
	b, _ := newTest(t, cfg)
	for _, o := range []Outcome{
		{Result: Failure, Duration: 5 * time.Second},
		{Result: Success, Duration: 5 * time.Second},
		{Result: Failure, Duration: 100 * time.Millisecond},
		{Result: Success, Duration: 100 * time.Millisecond},
		{Result: Success, Duration: 5 * time.Second},
	} {
		wantState(t, b, StateClosed)
		mustAllow(t, b).Report(o)
	}
	wantState(t, b, StateOpen)
	s := b.Snapshot()
	if s.SlowCalls != 3 || s.SlowCallRate != 0.6 || s.FailureRate != 0.4 || events.last().Reason != ReasonSlowCallRate {
		t.Fatalf("snapshot %+v, reason %v; want 3 slow (0.6), failure rate 0.4, slow-call-rate trip", s, events.last().Reason)
	}
}

// Origin: shouldOpenAfterSlowCallRateThresholdExceededUsingMockClock. The
// duration is measured: the protected call advances the fake clock.
func TestScenario_Resilience4j_SlowCallRateMeasuredOnClock(t *testing.T) {
	b, clk := newTest(t, r4jConfig())
	for i, d := range []time.Duration{5 * time.Second, 5 * time.Second, time.Second, time.Second, 5 * time.Second} {
		wantState(t, b, StateClosed)
		_ = b.Execute(t.Context(), func(context.Context) error { clk.Advance(d); return nil })
		wantSlow := []int64{1, 2, 2, 2, 3}[i]
		if s := b.Snapshot(); s.Calls != int64(i+1) || s.SlowCalls != wantSlow {
			t.Fatalf("call %d: %d calls, %d slow; want %d, %d", i, s.Calls, s.SlowCalls, i+1, wantSlow)
		}
	}
	wantState(t, b, StateOpen)
}

// Origin: shouldTransitionToHalfOpenAfterWaitDuration. Open for 5 s:
// refused at once and after 3 s; after 6 s the next call is admitted and
// the breaker is half-open. Ours moves to half-open lazily, on that call.
func TestScenario_Resilience4j_TransitionToHalfOpenAfterWaitDuration(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second})
	run(t, b, clk, seq(
		one(step{0, opFailure, StateOpen}),
		one(step{0, opRefused, StateOpen}),
		one(step{3 * time.Second, opRefused, StateOpen}),
	))
	if got := b.Snapshot().Totals.Rejected; got != 2 {
		t.Fatalf("Rejected = %d; want 2", got)
	}
	clk.Advance(3 * time.Second)
	p := mustAllow(t, b)
	wantState(t, b, StateHalfOpen)
	p.Success()
}

// Origin: shouldOnlyPermitFourCallsInHalfOpenState and
// shouldThrowCallNotPermittedExceptionWhenNotFurtherTestCallsArePermitted.
// Four probes pass, the 5th and 6th are refused by the half-open state; the
// next half-open period has four fresh slots (the old probes' late reports
// are dropped).
func TestScenario_Resilience4j_OnlyPermitFourCallsInHalfOpenState(t *testing.T) {
	cfg := r4jConfig()
	b, clk := r4jHalfOpen(t, cfg)
	var probes []Permit
	for range 4 {
		probes = append(probes, mustAllow(t, b))
	}
	for range 2 {
		if oe := mustRefuse(t, b); oe.State != StateHalfOpen || oe.RetryAfter() != 0 {
			t.Fatalf("refusal %+v; want by half-open, no retry time", oe)
		}
	}
	probes[0].Failure()
	wantState(t, b, StateOpen)
	clk.Advance(cfg.OpenDuration)
	for _, p := range probes[1:] {
		p.Success() // from the previous half-open period
	}
	for range 4 {
		mustAllow(t, b)
	}
	mustRefuse(t, b)
	if s := b.Snapshot(); s.Totals.Dropped != 3 || s.ProbeSuccesses != 0 || s.Probes != 4 {
		t.Fatalf("snapshot %+v; want 3 dropped, 0 probe successes, 4 probes", s)
	}
}

// Origin: shouldIncreaseCounterOnReleasePermission. With every probe slot
// taken, giving one back (our Ignore) lets exactly one more call through.
func TestScenario_Resilience4j_ReleasePermission(t *testing.T) {
	b, _ := r4jHalfOpen(t, r4jConfig())
	var probes []Permit
	for range 4 {
		probes = append(probes, mustAllow(t, b))
	}
	mustRefuse(t, b)
	probes[3].Ignore()
	mustAllow(t, b)
	mustRefuse(t, b)
}

// Origin: shouldReleasePermissionWhenExceptionIgnored. Three probe
// successes, an ignored exception (slot released, nothing counted), then a
// 5th probe. Difference: resilience4j closes when that probe fails (1 of 4
// failed, under 50%); ours reopens on any failed probe, and closes when it
// succeeds.
func TestScenario_Resilience4j_ReleasePermissionWhenExceptionIgnored(t *testing.T) {
	for _, tc := range []struct {
		last error
		want State
	}{{errBoom, StateOpen}, {nil, StateClosed}} {
		cfg := r4jConfig()
		cfg.Classify = r4jClassify
		b, _ := r4jHalfOpen(t, cfg)
		for range 3 {
			_ = b.Execute(t.Context(), func(context.Context) error { return nil })
			wantState(t, b, StateHalfOpen)
		}
		_ = b.Execute(t.Context(), func(context.Context) error { return errIgnored })
		wantState(t, b, StateHalfOpen)
		if s := b.Snapshot(); s.ProbeSuccesses != 3 || s.Totals.Ignored != 1 {
			t.Fatalf("after the ignored probe: %+v", s)
		}
		_ = b.Execute(t.Context(), func(context.Context) error { return tc.last })
		wantState(t, b, tc.want)
	}
}

// Origin: shouldIgnoreExceptionsAndThenTransitionToClosed. Four ignored
// probes change nothing and take no slot; four successes then close the
// breaker with empty metrics.
func TestScenario_Resilience4j_IgnoreExceptionsThenClose(t *testing.T) {
	cfg := r4jConfig()
	cfg.Classify = r4jClassify
	b, _ := r4jHalfOpen(t, cfg)
	for range 4 {
		_ = b.Execute(t.Context(), func(context.Context) error { return errIgnored })
		wantState(t, b, StateHalfOpen)
	}
	if s := b.Snapshot(); s.Probes != 0 || s.ProbeSuccesses != 0 || s.Totals.Ignored != 4 {
		t.Fatalf("after 4 ignored probes: %+v", s)
	}
	for range 3 {
		_ = b.Execute(t.Context(), func(context.Context) error { return nil })
		wantState(t, b, StateHalfOpen)
	}
	_ = b.Execute(t.Context(), func(context.Context) error { return nil })
	wantState(t, b, StateClosed)
	wantWindow(t, b, 0, 0)
}

// Origins: shouldTransitionBackToOpenStateWhenFailureRateIsAboveThreshold
// and shouldTransitionBackToClosedStateWhenFailureIsBelowThreshold.
// Difference: resilience4j waits for all 4 probes and compares their
// failure rate (F F S F reopens, F S S S closes); ours reopens on the first
// failure, and the probes still out are dropped when they report.
func TestScenario_Resilience4j_HalfOpenFailureReopens(t *testing.T) {
	for _, outcomes := range [][]op{{opFailure, opFailure, opSuccess, opFailure}, {opFailure, opSuccess, opSuccess, opSuccess}} {
		b, _ := r4jHalfOpen(t, r4jConfig())
		var probes []Permit
		for range 4 {
			probes = append(probes, mustAllow(t, b))
		}
		for i, o := range outcomes {
			if o == opFailure {
				probes[i].Failure()
			} else {
				probes[i].Success()
			}
			wantState(t, b, StateOpen) // from the first failure on
		}
		if s := b.Snapshot(); s.Totals.Dropped != 3 {
			t.Fatalf("%v: %d dropped; want the 3 probes after the failure", outcomes, s.Totals.Dropped)
		}
	}
}

// Origin: shouldTransitionBackToOpenStateWhenSlowCallRateIsAboveThreshold.
// With a slow-call rule, a slow probe counts against recovery even though
// it succeeded: ours reopens on the first one.
func TestScenario_Resilience4j_HalfOpenSlowProbeReopens(t *testing.T) {
	var events transitions
	cfg := r4jConfig()
	cfg.OnStateChange = events.add
	b, _ := r4jHalfOpen(t, cfg)
	mustAllow(t, b).Report(Outcome{Result: Success, Duration: 5 * time.Second})
	wantState(t, b, StateOpen)
	s := b.Snapshot()
	if events.last().Reason != ReasonProbeFailed || s.Totals.Slow != 1 || s.Totals.Succeeded != 1 {
		t.Fatalf("reason %v, totals %+v; want probe-failed, 1 slow success", events.last().Reason, s.Totals)
	}
}

// Origins: shouldResetMetrics, shouldResetToClosedState,
// shouldResetClosedState. Reset closes the breaker and empties the window.
// Difference: our Totals count since the breaker was made and survive Reset.
func TestScenario_Resilience4j_ResetMetrics(t *testing.T) {
	b, clk := newTest(t, r4jConfig())
	run(t, b, clk, seq(one(step{0, opSuccess, StateClosed}), one(step{0, opFailure, StateClosed})))
	wantWindow(t, b, 2, 1)
	b.Reset()
	wantState(t, b, StateClosed)
	wantWindow(t, b, 0, 0)
	if s := b.Snapshot(); s.Totals.Succeeded != 1 || s.Totals.Failed != 1 {
		t.Fatalf("totals after Reset %+v; want kept", s.Totals)
	}
	b2, clk2 := newTest(t, Config{ConsecutiveFailures: 1})
	run(t, b2, clk2, one(step{0, opFailure, StateOpen}))
	b2.Reset()
	run(t, b2, clk2, one(step{0, opSuccess, StateClosed}))
}

// Origin: shouldDisableCircuitBreaker. resilience4j's DISABLED state admits
// everything and records nothing; that is our ForceClosed (outcomes reach
// only the totals). Naming difference: our Disable records into the window,
// like resilience4j's METRICS_ONLY (next scenario).
func TestScenario_Resilience4j_DisabledIsOurForceClosed(t *testing.T) {
	b, clk := newTest(t, r4jConfig())
	b.ForceClosed()
	run(t, b, clk, seq(one(step{0, opSuccess, StateForcedClosed}), repeat(4, step{0, opFailure, StateForcedClosed})))
	wantWindow(t, b, 0, 0)
	if s := b.Snapshot(); s.Totals.Allowed != 5 || s.Totals.Failed != 4 {
		t.Fatalf("totals %+v", s.Totals)
	}
}

// Origin: shouldRecordMetricsInMetricsOnlyState. Our Disable: outcomes are
// recorded, the window shows the 60% that would trip, and no transition
// happens. Difference: resilience4j empties the metrics on entering the
// state (shouldResetMetricsAfterMetricsOnlyStateTransition); ours keeps the
// window as it was.
func TestScenario_Resilience4j_MetricsOnlyIsOurDisable(t *testing.T) {
	var events transitions
	cfg := r4jConfig()
	cfg.OnStateChange = events.add
	b, clk := newTest(t, cfg)
	b.Disable()
	run(t, b, clk, seq(
		repeat(3, step{0, opFailure, StateDisabled}),
		repeat(2, step{0, opSuccess, StateDisabled}),
	))
	if s := b.Snapshot(); s.Calls != 5 || s.Failures != 3 || s.FailureRate != 0.6 {
		t.Fatalf("snapshot %+v; want 5 calls, 3 failures", s)
	}
	run(t, b, clk, one(step{0, opFailure, StateDisabled}))
	if len(events) != 1 || events[0].To != StateDisabled {
		t.Fatalf("events %+v; want only the change to disabled", events)
	}
}

// Origin: shouldForceOpenCircuitBreaker. Forced open refuses calls and does
// not go half-open when the open period would have ended.
func TestScenario_Resilience4j_ForceOpen(t *testing.T) {
	b, clk := newTest(t, r4jConfig())
	b.ForceOpen()
	run(t, b, clk, seq(one(step{0, opRefused, StateForcedOpen}), one(step{6 * time.Second, opRefused, StateForcedOpen})))
	if oe := mustRefuse(t, b); oe.State != StateForcedOpen || oe.RetryAfter() != 0 {
		t.Fatalf("refusal %+v", oe)
	}
	if got := b.Snapshot().Totals.Rejected; got != 3 {
		t.Fatalf("Rejected = %d; want 3", got)
	}
}

// Origin: shouldForceCloseCircuitBreaker. Forced closed admits everything;
// a success and a failure are both counted (in our totals).
func TestScenario_Resilience4j_ForceClose(t *testing.T) {
	b, clk := newTest(t, r4jConfig())
	b.ForceClosed()
	run(t, b, clk, seq(one(step{0, opSuccess, StateForcedClosed}), one(step{0, opFailure, StateForcedClosed})))
	if s := b.Snapshot(); s.Totals.Succeeded != 1 || s.Totals.Failed != 1 {
		t.Fatalf("totals %+v", s.Totals)
	}
}

// Origin: circuitBreakerDoesNotPublishStateTransitionEventsForInternalTransitions.
// Asking for the state the breaker is already in publishes nothing, and does
// not drop the outcome of a call in flight.
func TestScenario_Resilience4j_NoEventForSameStateTransition(t *testing.T) {
	var events transitions
	b, _ := newTest(t, Config{WindowCalls: 10, FailureRate: 0.5, OnStateChange: events.add})
	for _, set := range []func(){b.ForceOpen, b.Disable, b.ForceClosed} {
		set()
		set()
	}
	if len(events) != 3 {
		t.Fatalf("%d events %+v; want 3", len(events), events)
	}
	b.Disable()
	p := mustAllow(t, b)
	b.Disable()
	p.Failure()
	if s := b.Snapshot(); s.Failures != 1 || s.Totals.Dropped != 0 {
		t.Fatalf("repeated Disable dropped the call in flight: %+v", s)
	}
}

// Origin: circuitBreakerTransitionsToOpenAfterWaitDurationInHalfOpenState
// (maxWaitDurationInHalfOpenState 1 s). A probe that does not report within
// the wait sends the breaker back to open. Difference: resilience4j reopens
// after the wait even with no probe taken; ours stays half-open while no
// probe is out, since the next call will be the probe, and bounds each
// probe by the wait from its own admission (TestHalfOpenMaxWaitBoundsEveryProbe).
func TestScenario_Resilience4j_MaxWaitDurationInHalfOpenState(t *testing.T) {
	cfg := r4jConfig()
	cfg.HalfOpenProbes = 1
	cfg.HalfOpenMaxWait = time.Second
	b, clk := r4jHalfOpen(t, cfg)
	clk.Advance(2 * time.Second)
	wantState(t, b, StateHalfOpen) // no probe out: nothing to wait for
	lost := mustAllow(t, b)
	clk.Advance(time.Second - 1)
	wantState(t, b, StateHalfOpen)
	clk.Advance(1)
	wantState(t, b, StateOpen)
	lost.Success()
	wantState(t, b, StateOpen)
}

// Origin: shouldTransitionToHalfOpenAfterWaitInterval (exponential
// interval function from 5 s). After a failed half-open period the open
// period grows by the multiplier: 5 s, then 7.5 s.
func TestScenario_Resilience4j_WaitIntervalFunctionInOpenState(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second, OpenBackoff: 1.5})
	run(t, b, clk, seq(
		one(step{0, opFailure, StateOpen}),
		one(step{3 * time.Second, opRefused, StateOpen}),
		one(step{2 * time.Second, opFailure, StateOpen}), // the probe fails
		one(step{6 * time.Second, opRefused, StateOpen}),
		one(step{1500*time.Millisecond - 1, opRefused, StateOpen}),
		one(step{1, opNone, StateHalfOpen}),
	))
}

// Origin: sliding window of N calls at its boundaries (count-based
// windows, slidingWindowSize 5). The 6th outcome pushes out the 1st, so a
// trip depends on exactly which 5 calls are in the window.
func TestScenario_Resilience4j_CountWindowSlidesAtBoundary(t *testing.T) {
	b, clk := newTest(t, Config{WindowCalls: 5, MinCalls: 5, FailureRate: 0.5})
	run(t, b, clk, seq(
		repeat(2, step{0, opFailure, StateClosed}),
		repeat(3, step{0, opSuccess, StateClosed}), // F F S S S: 2/5
		one(step{0, opFailure, StateClosed}),       // F S S S F: 2/5
		one(step{0, opFailure, StateClosed}),       // S S S F F: 2/5
	))
	wantWindow(t, b, 5, 2)
	run(t, b, clk, one(step{0, opFailure, StateOpen})) // S S F F F: 3/5
}

// Origin: minimumNumberOfCalls (CircuitBreakerConfig: for a count-based
// window a larger minimum is cut to the window size). Below the minimum no
// rate trips, however bad; at it, the rate is judged.
func TestScenario_Resilience4j_MinimumNumberOfCalls(t *testing.T) {
	b, clk := newTest(t, Config{WindowCalls: 10, MinCalls: 5, FailureRate: 0.5})
	run(t, b, clk, seq(repeat(4, step{0, opFailure, StateClosed}), one(step{0, opFailure, StateOpen})))

	capped, clk2 := newTest(t, Config{WindowCalls: 5, MinCalls: 100, FailureRate: 0.5})
	run(t, capped, clk2, seq(repeat(4, step{0, opFailure, StateClosed}), one(step{0, opFailure, StateOpen})))
}

// Origin: CircuitBreakerAutoTransitionStateMachineTest.java (automatic
// transition from open to half-open). Difference: resilience4j schedules the
// transition and publishes it when the wait ends; ours has no goroutine per
// breaker and makes it on the next call, State or Snapshot, publishing it
// then, once.
func TestScenario_Resilience4j_AutomaticTransitionIsLazy(t *testing.T) {
	var events transitions
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second, OnStateChange: events.add})
	run(t, b, clk, one(step{0, opFailure, StateOpen}))
	clk.Advance(time.Minute)
	if len(events) != 1 {
		t.Fatalf("events before anyone looked: %+v; want only the trip", events)
	}
	if s := b.Snapshot(); s.State != StateHalfOpen || s.InState != 0 {
		t.Fatalf("snapshot %+v; want half-open from now", s)
	}
	wantState(t, b, StateHalfOpen)
	if len(events) != 2 || events[1].To != StateHalfOpen || events[1].Reason != ReasonOpenElapsed {
		t.Fatalf("events %+v; want one change to half-open", events)
	}
}
