package retry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func TestDoSucceedsFirstTime(t *testing.T) {
	fake := clocktest.New(start)
	calls := 0
	err, waits := drive(t, context.Background(), &Policy{}, fake, failing(&calls, nil))
	if err != nil || calls != 1 || len(waits) != 0 || !fake.Now().Equal(start) {
		t.Fatalf("err %v, calls %d, waits %v, time moved %v; want nil, 1, none, 0", err, calls, waits, fake.Now().Sub(start))
	}
}

func TestDoExactWaits(t *testing.T) {
	fake := clocktest.New(start)
	calls := 0
	p := &Policy{Attempts: 4, Base: time.Second, Multiplier: 3, Rand: half}
	err, waits := drive(t, context.Background(), p, fake, failing(&calls, errFail, errFail, nil))
	if err != nil {
		t.Fatalf("Do = %v; want nil", err)
	}
	want := []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond}
	if calls != 3 || !slices.Equal(waits, want) {
		t.Fatalf("calls %d, waits %v; want 3, %v", calls, waits, want)
	}
	if got := fake.Now().Sub(start); got != 2*time.Second {
		t.Fatalf("clock moved %v; want 2s", got)
	}
}

func TestDoSeededRand(t *testing.T) {
	// The same seed gives the same waits, each within its ceiling.
	run := func() []time.Duration {
		fake := clocktest.New(start)
		calls := 0
		p := &Policy{Attempts: 6, Rand: seeded(42)}
		err, waits := drive(t, context.Background(), p, fake, failing(&calls, errFail))
		if !errors.Is(err, ErrExhausted) || calls != 6 {
			t.Fatalf("Do = %v after %d calls; want ErrExhausted after 6", err, calls)
		}
		return waits
	}
	a, b := run(), run()
	if !slices.Equal(a, b) || len(a) != 5 {
		t.Fatalf("waits %v and %v; want 5 equal waits", a, b)
	}
	for i, w := range a {
		if c := (&Policy{}).Ceiling(i + 1); w < 0 || w >= c {
			t.Errorf("wait %d = %v; want in [0, %v)", i+1, w, c)
		}
	}
}

func TestDoExhausted(t *testing.T) {
	fake := clocktest.New(start)
	calls := 0
	err, _ := drive(t, context.Background(), &Policy{Rand: half}, fake, failing(&calls, errFail))
	var re *Error
	if !errors.As(err, &re) || re.Reason != ReasonExhausted || re.Attempts != 3 || re.Last != errFail {
		t.Fatalf("Do = %#v; want *Error{ReasonExhausted, 3 attempts, errFail}", err)
	}
	if !errors.Is(err, ErrExhausted) || !errors.Is(err, errFail) || errors.Is(err, ErrDeadline) {
		t.Fatalf("errors.Is on %v: wrong conditions", err)
	}
	if want := "retry: attempts exhausted after 3 attempts: upstream failed"; err.Error() != want {
		t.Fatalf("Error() = %q; want %q", err.Error(), want)
	}
	if calls != 3 {
		t.Fatalf("calls = %d; want 3", calls)
	}
}

func TestDoHonoursHint(t *testing.T) {
	fake := clocktest.New(start)
	calls := 0
	p := &Policy{Rand: half}
	err, waits := drive(t, context.Background(), p, fake, failing(&calls, hintErr{7 * time.Second}, nil))
	if err != nil || calls != 2 || !slices.Equal(waits, []time.Duration{7 * time.Second}) {
		t.Fatalf("Do = %v, calls %d, waits %v; want nil, 2, [7s]", err, calls, waits)
	}
	if got := fake.Now().Sub(start); got != 7*time.Second {
		t.Fatalf("clock moved %v; want exactly the 7s hint", got)
	}
}

// stopsAtOnce runs Do without driving the clock: it must return having made
// one call, with no timer ever set and the fake time unchanged.
func stopsAtOnce(t *testing.T, ctx context.Context, p *Policy, fnErr error) *Error {
	t.Helper()
	fake := clocktest.New(start)
	p.Clock = fake
	calls := 0
	err := p.Do(ctx, failing(&calls, fnErr))
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("Do = %v; want *Error", err)
	}
	if calls != 1 || re.Attempts != 1 || fake.Pending() != 0 || !fake.Now().Equal(start) {
		t.Fatalf("calls %d, Attempts %d, pending timers %d, clock moved %v; want 1, 1, 0, 0",
			calls, re.Attempts, fake.Pending(), fake.Now().Sub(start))
	}
	if !errors.Is(err, fnErr) {
		t.Fatalf("Do = %v; does not wrap %v", err, fnErr)
	}
	return re
}

func TestDoHintBeyondDeadlineGivesUpAtOnce(t *testing.T) {
	fake := clocktest.New(start)
	ctx := withDeadline(t, fake, 5*time.Second)
	re := stopsAtOnce(t, ctx, &Policy{Rand: half}, hintErr{6 * time.Second})
	if re.Reason != ReasonDeadline || re.Wait != 6*time.Second || !errors.Is(re, ErrDeadline) {
		t.Fatalf("Do = %v (reason %v, wait %v); want ReasonDeadline with wait 6s", re, re.Reason, re.Wait)
	}
}

func TestDoBackoffBeyondDeadlineGivesUpAtOnce(t *testing.T) {
	fake := clocktest.New(start)
	ctx := withDeadline(t, fake, 100*time.Millisecond)
	re := stopsAtOnce(t, ctx, &Policy{Base: time.Second, Rand: half}, errFail)
	if re.Reason != ReasonDeadline || re.Wait != 500*time.Millisecond {
		t.Fatalf("Do = %v; want ReasonDeadline with wait 500ms", re)
	}
}

func TestDoHintTooLong(t *testing.T) {
	re := stopsAtOnce(t, context.Background(), &Policy{MaxWait: time.Second}, hintErr{2 * time.Second})
	if re.Reason != ReasonHintTooLong || re.Wait != 2*time.Second || !errors.Is(re, ErrHintTooLong) {
		t.Fatalf("Do = %v; want ReasonHintTooLong with wait 2s", re)
	}
}

func TestDoBreakerOpenStopsAtOnce(t *testing.T) {
	open := &breaker.OpenError{Name: "openai", State: breaker.StateOpen, Until: time.Now().Add(time.Minute)}
	re := stopsAtOnce(t, context.Background(), &Policy{}, fmt.Errorf("target openai: %w", open))
	if re.Reason != ReasonBreakerOpen || !errors.Is(re, breaker.ErrOpen) {
		t.Fatalf("Do = %v; want ReasonBreakerOpen matching breaker.ErrOpen", re)
	}
	var oe *breaker.OpenError
	if !errors.As(re, &oe) || oe.Name != "openai" {
		t.Fatalf("errors.As(*breaker.OpenError) failed on %v", re)
	}
}

func TestDoNotRetryableStops(t *testing.T) {
	re := stopsAtOnce(t, context.Background(), &Policy{}, verdictErr{false})
	if re.Reason != ReasonNotRetryable {
		t.Fatalf("Do = %v; want ReasonNotRetryable", re)
	}
}

func TestDoClassifyStops(t *testing.T) {
	p := &Policy{Classify: func(err error) Decision {
		if errors.Is(err, errFail) {
			return Decision{Action: Stop}
		}
		return Decision{}
	}}
	if re := stopsAtOnce(t, context.Background(), p, errFail); re.Reason != ReasonNotRetryable {
		t.Fatalf("Do = %v; want ReasonNotRetryable", re)
	}
}

func TestDoCancelWhileWaiting(t *testing.T) {
	fake := clocktest.New(start)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &Policy{Clock: fake, Base: time.Hour, Max: time.Hour, Rand: half}
	calls := 0
	done := make(chan error, 1)
	go func() { done <- p.Do(ctx, failing(&calls, errFail)) }()
	fake.WaitForTimers(1) // parked in the 30-minute wait
	cancel()
	err := <-done // returns without the clock moving
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errFail) {
		t.Fatalf("Do = %v; want context.Canceled wrapping errFail", err)
	}
	var re *Error
	if !errors.As(err, &re) || re.Reason != ReasonCanceled || re.Attempts != 1 {
		t.Fatalf("Do = %v; want ReasonCanceled after 1 attempt", err)
	}
	if fake.Pending() != 0 || !fake.Now().Equal(start) {
		t.Fatalf("pending timers %d, clock moved %v; want 0, 0", fake.Pending(), fake.Now().Sub(start))
	}
}

func TestDoCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := (&Policy{}).Do(ctx, failing(&calls, nil))
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Fatalf("Do = %v after %d calls; want context.Canceled after 0", err, calls)
	}
	if want := "retry: canceled after 0 attempts"; err.Error() != want {
		t.Fatalf("Error() = %q; want %q", err.Error(), want)
	}
}

func TestDoContextEndsDuringAttempt(t *testing.T) {
	fake := clocktest.New(start)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := (&Policy{Clock: fake}).Do(ctx, func(ctx context.Context, _ int) error {
		cancel()
		return ctx.Err()
	})
	var re *Error
	if !errors.As(err, &re) || re.Reason != ReasonCanceled || re.Attempts != 1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v; want ReasonCanceled after 1 attempt", err)
	}
}

func TestDoNilPolicy(t *testing.T) {
	var p *Policy
	calls := 0
	if err := p.Do(context.Background(), failing(&calls, nil)); err != nil || calls != 1 {
		t.Fatalf("nil Policy: Do = %v after %d calls; want nil after 1", err, calls)
	}
}

func TestDoBudgetRefuses(t *testing.T) {
	fake := clocktest.New(start)
	budget, err := NewBudget(BudgetConfig{Ratio: 0.5, MinPerSecond: -1, Clock: fake})
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Budget: budget, Rand: func() float64 { return 0 }, Clock: fake}
	// Each Do is one request; with ratio 0.5 every second Do may retry once.
	var reasons []Reason
	for range 4 {
		calls := 0
		var re *Error
		errors.As(p.Do(context.Background(), failing(&calls, errFail, nil)), &re)
		if re == nil {
			reasons = append(reasons, ReasonNone)
		} else {
			reasons = append(reasons, re.Reason)
		}
	}
	want := []Reason{ReasonBudget, ReasonNone, ReasonBudget, ReasonNone}
	if !slices.Equal(reasons, want) {
		t.Fatalf("reasons %v; want %v", reasons, want)
	}
	if req, ret := budget.Counts(); req != 4 || ret != 2 {
		t.Fatalf("budget counts %d requests, %d retries; want 4, 2", req, ret)
	}
}

func TestDoOutageWithBudget(t *testing.T) {
	// 1000 calls against a dead upstream: without a budget that is 3000
	// upstream attempts; with 20% it is at most 1000 + 200 + the floor.
	fake := clocktest.New(start)
	budget, _ := NewBudget(BudgetConfig{Ratio: 0.2, MinPerSecond: 1, Clock: fake})
	p := &Policy{Budget: budget, Rand: func() float64 { return 0 }, Clock: fake}
	attempts := 0
	for range 1000 {
		p.Do(context.Background(), func(context.Context, int) error { attempts++; return errFail })
	}
	const floor = 1 * 10 // MinPerSecond × 10s window
	if attempts > 1000+200+floor {
		t.Fatalf("%d upstream attempts; want at most %d", attempts, 1000+200+floor)
	}
	if attempts < 1000+200 {
		t.Fatalf("%d upstream attempts; the budget should allow 200 retries", attempts)
	}
}
