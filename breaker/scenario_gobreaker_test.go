package breaker

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Scenarios from sony/gobreaker, v2/gobreaker_test.go.

// Origin: TestDefaultCircuitBreaker and TestTwoStepCircuitBreaker. A default
// breaker counts consecutive failures (a success breaks the run), opens,
// refuses until its timeout has passed to the nanosecond, lets one probe
// through, reopens on a failed probe and closes on a good one with its
// counts cleared. Ours trips on the 5th consecutive failure (gobreaker: on
// the 6th, "more than 5") and stays open 30 s (gobreaker: 60 s).
func TestScenario_Gobreaker_DefaultCircuitBreaker(t *testing.T) {
	b, clk := newTest(t, Config{})
	run(t, b, clk, seq(
		repeat(4, step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
		one(step{0, opFailure, StateClosed}),
		repeat(3, step{0, opFailure, StateClosed}),
		one(step{0, opFailure, StateOpen}), // 5 in a row
		repeat(2, step{0, opRefused, StateOpen}),
		one(step{DefaultOpenDuration - 1, opNone, StateOpen}),
		one(step{1, opNone, StateHalfOpen}),
		one(step{0, opFailure, StateOpen}),
		one(step{DefaultOpenDuration, opSuccess, StateClosed}),
	))
	if s := b.Snapshot(); s.ConsecutiveFailures != 0 || s.Totals.Rejected != 2 {
		t.Fatalf("after closing: %d consecutive failures, %d rejected; want 0, 2", s.ConsecutiveFailures, s.Totals.Rejected)
	}
}

// Origin: TestCustomCircuitBreaker. Trip on a failure ratio of at least 0.6
// once 3 calls are counted, over 30 s; 3 probes, all must succeed; a 4th
// call while the 3rd probe is out is refused; closing clears the counts.
// Difference: gobreaker's Interval clears the counts every 30 s (fixed
// windows), ours slides, so a success 1 s before the boundary still counts
// after it and one more failure is needed to trip.
func TestScenario_Gobreaker_CustomCircuitBreaker(t *testing.T) {
	var events transitions
	b, clk := newTest(t, Config{Name: "cb", Window: 30 * time.Second, FailureRate: 0.6, MinCalls: 3,
		OpenDuration: 90 * time.Second, HalfOpenProbes: 3, HalfOpenSuccesses: 3, OnStateChange: events.add})
	var steps []step
	for range 5 {
		steps = append(steps, step{0, opSuccess, StateClosed}, step{0, opFailure, StateClosed})
	}
	run(t, b, clk, steps)
	wantWindow(t, b, 10, 5)
	run(t, b, clk, one(step{29 * time.Second, opSuccess, StateClosed}))
	wantWindow(t, b, 11, 5)
	run(t, b, clk, one(step{time.Second, opFailure, StateClosed})) // the first 10 have left
	wantWindow(t, b, 2, 1)
	run(t, b, clk, seq(
		one(step{0, opSuccess, StateClosed}), // 1/3
		one(step{0, opFailure, StateClosed}), // 2/4: gobreaker, without the success at 29 s, trips here
		one(step{0, opFailure, StateOpen}),   // 3/5
	))
	if tr := events.last(); tr.From != StateClosed || tr.To != StateOpen || tr.Reason != ReasonFailureRate || tr.Name != "cb" {
		t.Fatalf("trip event %+v", tr)
	}
	run(t, b, clk, seq(
		one(step{90 * time.Second, opNone, StateHalfOpen}),
		repeat(2, step{0, opSuccess, StateHalfOpen}),
	))
	if s := b.Snapshot(); s.ProbeSuccesses != 2 {
		t.Fatalf("probe successes %d; want 2", s.ProbeSuccesses)
	}
	third := mustAllow(t, b)
	if oe := mustRefuse(t, b); oe.State != StateHalfOpen {
		t.Fatalf("over the probe limit: refused by %v; want half-open", oe.State)
	}
	third.Success()
	wantState(t, b, StateClosed)
	wantWindow(t, b, 0, 0)
	if tr := events.last(); tr.From != StateHalfOpen || tr.To != StateClosed {
		t.Fatalf("close event %+v", tr)
	}
}

// Origin: TestRollingWindowCircuitBreaker. A 30 s window in 10 buckets of
// 3 s: outcomes leave a bucket at a time, the trip comes exactly when the
// ratio first reaches 0.6 (14 failures of 23 calls).
func TestScenario_Gobreaker_RollingWindow(t *testing.T) {
	b, clk := newTest(t, Config{Name: "rw", Window: 30 * time.Second, Buckets: 10, FailureRate: 0.6, MinCalls: 3,
		OpenDuration: 90 * time.Second})
	var steps []step
	for range 5 {
		steps = append(steps, step{0, opSuccess, StateClosed}, step{0, opFailure, StateClosed})
	}
	run(t, b, clk, steps)
	wantWindow(t, b, 10, 5)
	for _, s := range []struct {
		advance        time.Duration
		o              op
		calls, failure int64
	}{
		{3 * time.Second, opSuccess, 11, 5}, // t=3 s, bucket 1
		{2 * time.Second, opSuccess, 12, 5}, // t=5 s, still bucket 1
		{2 * time.Second, opSuccess, 13, 5}, // t=7 s, bucket 2
		{2 * time.Second, opFailure, 14, 6}, // t=9 s, bucket 3
	} {
		run(t, b, clk, one(step{s.advance, s.o, StateClosed}))
		wantWindow(t, b, s.calls, s.failure)
	}
	for i := range int64(6) { // t=12..27 s: every bucket in use
		run(t, b, clk, seq(one(step{3 * time.Second, opSuccess, StateClosed}), one(step{0, opFailure, StateClosed})))
		wantWindow(t, b, 16+2*i, 7+i)
	}
	run(t, b, clk, one(step{3 * time.Second, opFailure, StateClosed})) // t=30 s: bucket 0 leaves
	wantWindow(t, b, 17, 8)
	for i := range int64(5) {
		run(t, b, clk, one(step{0, opFailure, StateClosed}))
		wantWindow(t, b, 18+i, 9+i) // up to 13/22 < 0.6
	}
	run(t, b, clk, one(step{0, opFailure, StateOpen})) // 14/23 >= 0.6
}

// Origin: TestGeneration. A call that began before a state change reports
// into nothing: its failure neither counts in the new closed period nor
// reopens it. Difference: gobreaker also starts a generation when its
// Interval clears the counts; our window slides and has no generations of
// its own, so a closed-era call counts, at the time it reports, for as long
// as the breaker stays closed.
func TestScenario_Gobreaker_Generation(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 2, OpenDuration: 10 * time.Second})
	old := mustAllow(t, b)
	run(t, b, clk, seq(
		one(step{0, opFailure, StateClosed}),
		one(step{0, opFailure, StateOpen}),
		one(step{10 * time.Second, opSuccess, StateClosed}),
		one(step{0, opFailure, StateClosed}), // one failure of the new period
	))
	old.Failure() // would be the second in a row if it counted
	wantState(t, b, StateClosed)
	if s := b.Snapshot(); s.ConsecutiveFailures != 1 || s.Totals.Dropped != 1 {
		t.Fatalf("consecutive %d, dropped %d; want 1, 1", s.ConsecutiveFailures, s.Totals.Dropped)
	}
}

// Origins: gobreaker TestPanicInRequest, and eapache/go-resiliency
// breaker/breaker_test.go TestBreakerPanicsCountAsErrors. A panicking call
// is a failure; the panic reaches the caller; three of them open the breaker
// and the function is not run again while it is open.
func TestScenario_Gobreaker_PanicInRequest(t *testing.T) {
	b, _ := newTest(t, Config{ConsecutiveFailures: 3, OpenDuration: time.Second})
	for i := range 3 {
		func() {
			defer func() {
				if r := recover(); r != "oops" {
					t.Fatalf("call %d: recovered %v; want the call's panic", i, r)
				}
			}()
			_ = b.Execute(t.Context(), func(context.Context) error { panic("oops") })
		}()
	}
	wantState(t, b, StateOpen)
	ran := false
	if err := b.Execute(t.Context(), func(context.Context) error { ran = true; return nil }); !isOpen(err) || ran {
		t.Fatalf("Execute on the open breaker = %v, ran %v", err, ran)
	}
	if s := b.Snapshot(); s.Totals.Failed != 3 {
		t.Fatalf("Failed = %d; want 3", s.Totals.Failed)
	}
}

// Origin: TestCustomIsSuccessful. A classifier that calls every error a
// success keeps the breaker closed; the default one counts errors.
func TestScenario_Gobreaker_CustomIsSuccessful(t *testing.T) {
	b, _ := newTest(t, Config{Classify: func(error) Outcome { return Outcome{Result: Success} }})
	for range 10 {
		_ = b.Execute(t.Context(), func(context.Context) error { return errBoom })
	}
	wantState(t, b, StateClosed)
	if s := b.Snapshot(); s.Totals.Succeeded != 10 || s.Totals.Failed != 0 {
		t.Fatalf("totals %+v; want 10 succeeded", s.Totals)
	}
	b2, _ := newTest(t, Config{})
	for range 5 {
		_ = b2.Execute(t.Context(), func(context.Context) error { return errBoom })
	}
	wantState(t, b2, StateOpen)
}

// Origin: TestCircuitBreakerInParallel and
// TestRollingWindowCircuitBreakerInParallel. Successes from 10 goroutines
// are all counted, in the totals and in the time window.
func TestScenario_Gobreaker_CircuitBreakerInParallel(t *testing.T) {
	b, _ := newTest(t, Config{Window: 30 * time.Second, FailureRate: 0.6, MinCalls: 3})
	const goroutines, calls = 10, 1000
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				if err := b.Execute(context.Background(), func(context.Context) error { return nil }); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	s := b.Snapshot()
	if s.State != StateClosed || s.Totals.Allowed != goroutines*calls || s.Totals.Succeeded != goroutines*calls || s.Calls != goroutines*calls {
		t.Fatalf("snapshot %+v; want %d calls all succeeded and in the window", s, goroutines*calls)
	}
}
