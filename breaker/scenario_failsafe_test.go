package breaker

import (
	"testing"
	"time"
)

// Scenarios from failsafe-go/failsafe-go.

// Origin: test/circuitbreaker_test.go,
// TestSthouldSupportTimeBasedFailureThresholding (2 failures within 200 ms,
// at least 3 executions, no delay). Results roll off after the period; the
// 2nd failure within it trips. Differences: our MinCalls gates only the
// rate rules, not FailureThreshold (here the window holds 3 calls anyway);
// OpenDuration 0 means the default, so a 1 ns open period stands in for
// "no delay"; and any probe failure reopens.
func TestScenario_Failsafe_TimeBasedFailureThresholding(t *testing.T) {
	b, clk := newTest(t, Config{Window: 200 * time.Millisecond, FailureThreshold: 2, OpenDuration: 1})
	run(t, b, clk, seq(
		one(step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
		one(step{210 * time.Millisecond, opFailure, StateClosed}), // the first two rolled off
		one(step{0, opSuccess, StateClosed}),
		one(step{50 * time.Millisecond, opNone, StateClosed}),
		one(step{0, opFailure, StateOpen}),
		one(step{1, opFailure, StateOpen}), // probe fails: open again
		one(step{1, opSuccess, StateClosed}),
	))
}

// Origin: test/circuitbreaker_test.go,
// TestShouldSupportTimeBasedFailureRateThresholding (50% of at least 3
// executions within 200 ms). F S, roll off, F S, then S (1 of 3) stays
// closed; F makes 2 of 4 and trips.
func TestScenario_Failsafe_TimeBasedFailureRateThresholding(t *testing.T) {
	b, clk := newTest(t, Config{Window: 200 * time.Millisecond, FailureRate: 0.5, MinCalls: 3, OpenDuration: 1})
	run(t, b, clk, seq(
		one(step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
		one(step{210 * time.Millisecond, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
		one(step{50 * time.Millisecond, opSuccess, StateClosed}),
		one(step{0, opFailure, StateOpen}),
		one(step{1, opFailure, StateOpen}),
		one(step{1, opSuccess, StateClosed}),
	))
}

// Origin: circuitbreaker/timedcircuitstats_test.go, TestTimedStats. Four
// buckets of 1 s: counts as buckets fill, then as time skips buckets (which
// must count as empty), then after the whole window has passed. The breaker
// is disabled so the window records without tripping.
func TestScenario_Failsafe_TimedStats(t *testing.T) {
	b, clk := newTest(t, Config{Window: 4 * time.Second, Buckets: 4, FailureRate: 0.5})
	b.Disable()
	record := func(n int, failed func(i int) bool) {
		for i := range n {
			p := mustAllow(t, b)
			if failed(i) {
				p.Failure()
			} else {
				p.Success()
			}
		}
	}
	every5thSucceeds := func(i int) bool { return i%5 != 0 }
	succeed := func(int) bool { return false }
	fail := func(int) bool { return true }
	at := func(ms int) { clk.Set(clocktestStart().Add(time.Duration(ms) * time.Millisecond)) }

	record(50, every5thSucceeds) // t=0, bucket 0
	wantWindow(t, b, 50, 40)
	at(1000)
	record(10, succeed)
	wantWindow(t, b, 60, 40)
	at(2500)
	record(20, fail)
	wantWindow(t, b, 80, 60)
	at(3100)
	record(25, every5thSucceeds)
	wantWindow(t, b, 105, 80)
	at(5400) // buckets 0 and 1 gone, 4 skipped
	record(8, succeed)
	wantWindow(t, b, 53, 40)
	at(7300) // 2 and 3 gone, 6 skipped
	record(5, fail)
	wantWindow(t, b, 13, 5)
	at(22500) // everything gone
	wantWindow(t, b, 0, 0)
	if s := b.Snapshot(); s.FailureRate != 0 || s.State != StateDisabled {
		t.Fatalf("empty window: %+v", s)
	}
}

// Origins: circuitbreaker/halfopenstate_test.go,
// TestHalfOpenSuccessWithSuccessThreshold and
// TestHalfOpenFailureWithSuccessThreshold. With a success threshold of 3,
// three successes close a half-open breaker; a success then a failure
// reopens it. Difference: failsafe can also apply failure thresholds and
// ratios inside half-open (TestHalfOpenFailureWithFailureThreshold etc.);
// ours reopens on the first failure.
func TestScenario_Failsafe_HalfOpenSuccessThreshold(t *testing.T) {
	cfg := Config{ConsecutiveFailures: 1, OpenDuration: time.Second, HalfOpenSuccesses: 3}
	b, clk := newTest(t, cfg)
	run(t, b, clk, seq(
		one(step{0, opFailure, StateOpen}),
		one(step{time.Second, opSuccess, StateHalfOpen}),
		one(step{0, opSuccess, StateHalfOpen}),
		one(step{0, opSuccess, StateClosed}),
	))
	b2, clk2 := newTest(t, cfg)
	run(t, b2, clk2, seq(
		one(step{0, opFailure, StateOpen}),
		one(step{time.Second, opSuccess, StateHalfOpen}),
		one(step{0, opFailure, StateOpen}),
	))
}

// Origin: test/circuitbreaker_test.go,
// TestShouldRejectExcessiveAttemptsWhenBreakerHalfOpen. With a success
// threshold of 3, three probes may run at once; further calls are refused
// while they are out.
func TestScenario_Failsafe_RejectExcessiveAttemptsWhenHalfOpen(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, HalfOpenSuccesses: 3})
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opNone, StateHalfOpen})))
	for range 3 {
		mustAllow(t, b) // out for a long time
	}
	for range 5 {
		mustRefuse(t, b)
	}
}

// Origin: circuitbreaker/halfopenstate_test.go,
// TestRemainingDelayInHalfOpenState. A half-open breaker has no remaining
// delay: Snapshot says 0, and so does a refusal for full probe slots.
func TestScenario_Failsafe_RemainingDelayInHalfOpenState(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second})
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opNone, StateHalfOpen})))
	if s := b.Snapshot(); s.RetryAfter != 0 || !s.OpenUntil.IsZero() {
		t.Fatalf("half-open snapshot: RetryAfter %v, OpenUntil %v", s.RetryAfter, s.OpenUntil)
	}
	mustAllow(t, b)
	if oe := mustRefuse(t, b); oe.RetryAfter() != 0 || !oe.Until.IsZero() {
		t.Fatalf("half-open refusal %+v", oe)
	}
}

// Origins: circuitbreaker/closedstate_test.go,
// TestClosedStateFailureWithFailureThreshold,
// TestClosedStateFailureWithFailureRatio and
// TestClosedStateSuccessWithFailureRatio. A threshold of 3 in a row; 2
// failures of the last 3; 3 of the last 4 never reached by alternating
// outcomes.
func TestScenario_Failsafe_ClosedStateThresholds(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 3})
	run(t, b, clk, seq(
		one(step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
		repeat(2, step{0, opFailure, StateClosed}),
		one(step{0, opFailure, StateOpen}),
	))
	b2, clk2 := newTest(t, Config{WindowCalls: 3, FailureThreshold: 2})
	run(t, b2, clk2, seq(
		one(step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
		one(step{0, opFailure, StateOpen}),
	))
	b3, clk3 := newTest(t, Config{WindowCalls: 4, FailureThreshold: 3})
	for range 20 {
		run(t, b3, clk3, seq(one(step{0, opSuccess, StateClosed}), one(step{0, opFailure, StateClosed})))
	}
}
