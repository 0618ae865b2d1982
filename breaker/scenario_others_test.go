package breaker

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Scenarios from eapache/go-resiliency, mercari/go-circuitbreaker,
// rubyist/circuitbreaker, App-vNext/Polly and afex/hystrix-go.

// Origin: eapache/go-resiliency breaker/breaker_test.go,
// TestBreakerStateTransitions (3 errors, 2 successes, 10 ms). Three errors
// open it; refusals while open; after the timeout one success is not enough
// and an error reopens it; after the next timeout two successes close it for
// good, and a single error then does not reopen it.
func TestScenario_GoResiliency_BreakerStateTransitions(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 3, HalfOpenSuccesses: 2, OpenDuration: 10 * time.Millisecond})
	run(t, b, clk, seq(
		repeat(2, step{0, opFailure, StateClosed}),
		one(step{0, opFailure, StateOpen}),
		repeat(5, step{0, opRefused, StateOpen}),
		one(step{20 * time.Millisecond, opSuccess, StateHalfOpen}),
		one(step{0, opFailure, StateOpen}),
		one(step{0, opRefused, StateOpen}),
		one(step{20 * time.Millisecond, opSuccess, StateHalfOpen}),
		one(step{0, opSuccess, StateClosed}),
		one(step{0, opFailure, StateClosed}),
		one(step{0, opSuccess, StateClosed}),
	))
}

// Origin: eapache/go-resiliency breaker/breaker_test.go,
// TestBreakerErrorExpiry (2 errors within 10 ms). Errors a full period apart
// never add up to a trip.
func TestScenario_GoResiliency_BreakerErrorExpiry(t *testing.T) {
	b, clk := newTest(t, Config{Window: 10 * time.Millisecond, FailureThreshold: 2})
	run(t, b, clk, repeat(6, step{10 * time.Millisecond, opFailure, StateClosed}))
	run(t, b, clk, one(step{9 * time.Millisecond, opFailure, StateOpen})) // two within 10 ms
}

// Origin: mercari/go-circuitbreaker state_test.go, TestStateOpen
// "OpenBackOff" (exponential, from 1 s, ×2, at most 5 s). Each failed probe
// doubles the open period up to the cap, to the nanosecond; a probe that
// succeeds closes the breaker and the next trip is back to 1 s.
func TestScenario_Mercari_OpenBackOff(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, OpenBackoff: 2, MaxOpenDuration: 5 * time.Second})
	run(t, b, clk, one(step{0, opFailure, StateOpen}))
	for i, after := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		clk.Advance(after - 1)
		if s := b.State(); s != StateOpen {
			t.Fatalf("period %d: %v before %v", i, s, after)
		}
		clk.Advance(1)
		if s := b.State(); s != StateHalfOpen {
			t.Fatalf("period %d: %v at %v", i, s, after)
		}
		run(t, b, clk, one(step{0, opFailure, StateOpen}))
	}
	run(t, b, clk, seq(
		one(step{5 * time.Second, opSuccess, StateClosed}),
		one(step{0, opFailure, StateOpen}),
		one(step{time.Second - 1, opNone, StateOpen}),
		one(step{1, opNone, StateHalfOpen}),
	))
}

// Origin: mercari/go-circuitbreaker state_test.go,
// TestCircuitBreakerStateTransitions (3 failures, open 1 s, 4 half-open
// successes), repeated ten times: the cycle is stable.
func TestScenario_Mercari_StateTransitions(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 3, OpenDuration: time.Second, HalfOpenSuccesses: 4})
	for range 10 {
		run(t, b, clk, seq(
			repeat(2, step{0, opFailure, StateClosed}),
			one(step{0, opFailure, StateOpen}),
			one(step{time.Second - 1, opNone, StateOpen}),
			one(step{1, opNone, StateHalfOpen}),
			one(step{0, opFailure, StateOpen}),
			one(step{time.Second, opNone, StateHalfOpen}),
			repeat(3, step{0, opSuccess, StateHalfOpen}),
			one(step{0, opSuccess, StateClosed}),
		))
	}
}

// Origin: rubyist/circuitbreaker circuitbreaker_test.go,
// TestTrippableBreakerManualBreak. A manually broken breaker stays broken
// past the timeout; after Reset, an automatic trip is ready again after it.
func TestScenario_Rubyist_TrippableBreakerManualBreak(t *testing.T) {
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second})
	b.ForceOpen()
	run(t, b, clk, one(step{time.Hour, opRefused, StateForcedOpen}))
	b.Reset()
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opSuccess, StateClosed})))
}

// Origins: rubyist/circuitbreaker circuitbreaker_test.go,
// TestRateBreakerTripping, TestRateBreakerSampleSize and
// TestRateBreakerResets. At 50% over at least 4 samples, S S F F trips; with
// a minimum of 100 samples one failure does not; a tripped rate breaker
// recovers with one good call after the timeout.
func TestScenario_Rubyist_RateBreaker(t *testing.T) {
	b, clk := newTest(t, Config{Window: 10 * time.Second, FailureRate: 0.5, MinCalls: 4, OpenDuration: time.Second})
	run(t, b, clk, seq(
		repeat(2, step{0, opSuccess, StateClosed}),
		one(step{0, opFailure, StateClosed}),
		one(step{0, opFailure, StateOpen}),
	))
	if s := b.Snapshot(); s.FailureRate != 0.5 {
		t.Fatalf("failure rate %v; want 0.5", s.FailureRate)
	}
	run(t, b, clk, one(step{time.Second, opSuccess, StateClosed}))

	b2, clk2 := newTest(t, Config{Window: 10 * time.Second, FailureRate: 0.5, MinCalls: 100})
	run(t, b2, clk2, one(step{0, opFailure, StateClosed}))
}

// Origin: App-vNext/Polly
// test/Polly.Core.Tests/CircuitBreaker/Controller/CircuitStateControllerTests.cs,
// OnActionPreExecute_HalfOpen. After the break, the first call is let
// through and the half-open listener runs; a second call while it is out is
// refused.
func TestScenario_Polly_HalfOpenAdmitsOneProbe(t *testing.T) {
	var events transitions
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second, OnStateChange: events.add})
	run(t, b, clk, one(step{0, opFailure, StateOpen}))
	clk.Advance(5 * time.Second)
	p := mustAllow(t, b)
	if oe := mustRefuse(t, b); oe.State != StateHalfOpen {
		t.Fatalf("second call refused by %v; want half-open", oe.State)
	}
	if tr := events.last(); tr.To != StateHalfOpen {
		t.Fatalf("last event %+v; want the change to half-open", tr)
	}
	p.Success()
	wantState(t, b, StateClosed)
}

// Origins: App-vNext/Polly test/Polly.Specs/CircuitBreaker/
// AdvancedCircuitBreakerAsyncSpecs.cs,
// Should_be_able_to_handle_a_duration_of_timespan_maxvalue, and
// CircuitStateControllerTests.cs,
// OnActionFailureAsync_EnsureBreakDurationNotOverflow. A break of the
// longest representable duration (or a century) means "open until reset",
// never an overflow into "already over". Before the fix in config.go and
// breaker.go, 10 × OpenDuration wrapped negative and the breaker went
// half-open at once.
func TestScenario_Polly_BreakDurationMaxValue(t *testing.T) {
	for _, d := range []time.Duration{math.MaxInt64, 100 * 365 * 24 * time.Hour} {
		b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: d, OpenJitter: 0.5, Rand: func() float64 { return 0.999 }})
		run(t, b, clk, seq(
			one(step{time.Hour, opFailure, StateOpen}),
			one(step{50 * 365 * 24 * time.Hour, opRefused, StateOpen}),
		))
		if s := b.Snapshot(); s.RetryAfter <= 0 {
			t.Fatalf("OpenDuration %v: RetryAfter %v", d, s.RetryAfter)
		}
	}
	// A hint and a half-open wait of the longest duration do not wrap either.
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, MaxOpenDuration: math.MaxInt64, HalfOpenMaxWait: math.MaxInt64})
	clk.Advance(time.Hour)
	mustAllow(t, b).Report(Outcome{Result: Failure, RetryAfter: math.MaxInt64})
	run(t, b, clk, one(step{100 * 365 * 24 * time.Hour, opRefused, StateOpen}))
	b.Reset()
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opNone, StateHalfOpen})))
	mustAllow(t, b) // the probe, hung
	run(t, b, clk, one(step{100 * 365 * 24 * time.Hour, opRefused, StateHalfOpen}))
}

// Origin: afex/hystrix-go hystrix/circuit_test.go,
// TestMultithreadedGetCircuit. 100 goroutines asking for the same circuit at
// once get one breaker between them.
func TestScenario_Hystrix_MultithreadedGetCircuit(t *testing.T) {
	var made atomic.Int32
	g := NewGroup(func(key string) Config {
		made.Add(1)
		return Config{Name: key}
	})
	var start, done sync.WaitGroup
	start.Add(1)
	got := make([]*Breaker, 100)
	for i := range got {
		done.Go(func() {
			start.Wait()
			b, err := g.Get("foo")
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	start.Done()
	done.Wait()
	if made.Load() != 1 {
		t.Fatalf("config called %d times; want 1", made.Load())
	}
	for i, b := range got {
		if b != got[0] {
			t.Fatalf("goroutine %d got a different breaker", i)
		}
	}
}
