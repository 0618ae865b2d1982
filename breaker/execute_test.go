package breaker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestExecuteClassifies(t *testing.T) {
	b, _ := newTest(t, Config{ConsecutiveFailures: 2})
	boom := errors.New("boom")
	ctx := t.Context()
	if err := b.Execute(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := b.Execute(ctx, func(context.Context) error { return boom }); err != boom {
		t.Fatalf("Execute returned %v; want the call's error", err)
	}
	// a timeout is the upstream's failure
	_ = b.Execute(ctx, func(context.Context) error { return fmt.Errorf("read: %w", context.DeadlineExceeded) })
	if s := b.State(); s != StateOpen {
		t.Fatalf("after 2 failures: %v", s)
	}
	err := b.Execute(ctx, func(context.Context) error { t.Fatal("ran while open"); return nil })
	if !errors.Is(err, ErrOpen) {
		t.Fatalf("Execute on open breaker = %v", err)
	}
	s := b.Snapshot()
	if s.Totals.Succeeded != 1 || s.Totals.Failed != 2 || s.Totals.Rejected != 1 {
		t.Fatalf("totals %+v", s.Totals)
	}
}

func TestExecuteCallerCancellationIgnored(t *testing.T) {
	b, _ := newTest(t, Config{ConsecutiveFailures: 1})
	ctx, cancel := context.WithCancel(t.Context())
	err := b.Execute(ctx, func(ctx context.Context) error {
		cancel()
		return errors.New("upstream read aborted") // not wrapping Canceled
	})
	if err == nil {
		t.Fatal("want the call's error")
	}
	if s := b.Snapshot(); s.State != StateClosed || s.Totals.Ignored != 1 {
		t.Fatalf("caller cancellation counted: %+v", s)
	}
	// a context already done: fn does not run, nothing is recorded
	if err := b.Execute(ctx, func(context.Context) error { t.Fatal("ran"); return nil }); err != context.Canceled {
		t.Fatalf("Execute with a done context = %v", err)
	}
	if s := b.Snapshot(); s.Totals.Allowed != 1 {
		t.Fatalf("done context asked the breaker: %+v", s.Totals)
	}
}

func TestExecuteCountCanceled(t *testing.T) {
	b, _ := newTest(t, Config{ConsecutiveFailures: 1, CountCanceled: true, Classify: func(err error) Outcome {
		if err == nil {
			return Outcome{}
		}
		return Outcome{Result: Failure}
	}})
	ctx, cancel := context.WithCancel(t.Context())
	_ = b.Execute(ctx, func(context.Context) error { cancel(); return context.Canceled })
	if s := b.State(); s != StateOpen {
		t.Fatalf("CountCanceled: %v", s)
	}
}

func TestExecutePanicCountsAsFailure(t *testing.T) {
	b, _ := newTest(t, Config{ConsecutiveFailures: 1})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic swallowed")
			}
		}()
		_ = b.Execute(t.Context(), func(context.Context) error { panic("bad") })
	}()
	if s := b.State(); s != StateOpen {
		t.Fatalf("after a panic: %v", s)
	}
}

func TestDoneUsesClassifier(t *testing.T) {
	b, _ := newTest(t, Config{ConsecutiveFailures: 1, Classify: func(err error) Outcome {
		if err != nil && err.Error() == "429" {
			return Outcome{Result: Ignored}
		}
		return DefaultClassify(err)
	}})
	p, _ := b.Allow()
	p.Done(errors.New("429"))
	if s := b.Snapshot(); s.State != StateClosed || s.Totals.Ignored != 1 {
		t.Fatalf("%+v", s)
	}
	p, _ = b.Allow()
	p.Done(errors.New("503"))
	if b.State() != StateOpen {
		t.Fatal("503 did not trip")
	}
	var zero Permit
	zero.Success() // no-op, no panic
}

func TestOpenErrorMessage(t *testing.T) {
	b, clk := newTest(t, Config{Name: "anthropic/opus", ConsecutiveFailures: 1, OpenDuration: 1500 * time.Millisecond})
	p, _ := b.Allow()
	p.Failure()
	clk.Advance(500 * time.Millisecond)
	_, err := b.Allow()
	if got, want := err.Error(), "breaker anthropic/opus: open, next probe in 1s"; got != want {
		t.Fatalf("Error() = %q; want %q", got, want)
	}
}
