package retry

import (
	"context"
	"testing"
	"time"
)

func BenchmarkBackoff(b *testing.B) {
	b.ReportAllocs()
	p := &Policy{}
	for i := 0; b.Loop(); i++ {
		_ = p.Backoff(i%8 + 1)
	}
}

func BenchmarkNext(b *testing.B) {
	b.ReportAllocs()
	p := &Policy{Attempts: -1}
	var err error = hintErr{time.Millisecond} // boxed once, not per call
	for i := 0; b.Loop(); i++ {
		_, _ = p.Next(i%8+1, err, NoDeadline)
	}
}

func BenchmarkNextParallel(b *testing.B) {
	b.ReportAllocs()
	p := &Policy{Attempts: -1}
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			_, _ = p.Next(i%8+1, errFail, NoDeadline)
		}
	})
}

// Do with two failures and zero waits: the per-attempt cost of the loop.
func BenchmarkDoTwoRetries(b *testing.B) {
	b.ReportAllocs()
	p := &Policy{Rand: func() float64 { return 0 }}
	ctx := context.Background()
	fn := func(_ context.Context, attempt int) error {
		if attempt < 3 {
			return errFail
		}
		return nil
	}
	for b.Loop() {
		if err := p.Do(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBudgetTryRetry(b *testing.B) {
	b.ReportAllocs()
	budget, _ := NewBudget(BudgetConfig{})
	for b.Loop() {
		budget.Request()
		budget.TryRetry()
	}
}

func BenchmarkBudgetTryRetryParallel(b *testing.B) {
	b.ReportAllocs()
	budget, _ := NewBudget(BudgetConfig{})
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			budget.Request()
			budget.TryRetry()
		}
	})
}
