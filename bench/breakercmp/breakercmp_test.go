package breakercmp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/sony/gobreaker/v2"
)

// Every benchmark has one sub-benchmark per library, named after it. The
// loops are written out per library, without a shared interface or func
// value, so no library pays for an indirection the others avoid. Each
// iteration checks that the call was admitted (or, for the refusal
// benchmarks, refused without running the function), so a misconfigured
// breaker fails the benchmark instead of measuring a no-op.
//
// Configurations, the same rule in each library's terms:
//
//   - consecutive: trip after 5 consecutive failures.
//     fusebox Config{ConsecutiveFailures: 5}; gobreaker ReadyToTrip
//     ConsecutiveFailures > 4; failsafe WithFailureThreshold(5), which is
//     "5 failures out of the last 5".
//   - time window: failure rate >= 50% over 10 s, at least 20 calls, in
//     1 s buckets. fusebox Config{Window: 10s, FailureRate: 0.5,
//     MinCalls: 20} (10 buckets by default); gobreaker Interval 10s,
//     BucketPeriod 1s, ReadyToTrip on Requests >= 20 and the ratio;
//     failsafe WithFailureRateThreshold(0.5, 20, 10s) (10 buckets).
//   - count window: failure rate >= 50% over the last 100 calls, at least
//     20. fusebox Config{WindowCalls: 100, FailureRate: 0.5, MinCalls: 20};
//     failsafe WithFailureThresholdRatio(50, 100), its only count-window
//     rule: 50 failures among the last 100 calls, which has no separate
//     minimum (a rate threshold with a minimum is time-window only there);
//     the per-call work, a 100-slot ring, is the same. gobreaker has no
//     count window, so it has no sub-benchmark there.
//
// Refusal benchmarks use an open period of one hour and trip the breaker
// before the timer starts.

const openFor = time.Hour

var errBoom = errors.New("boom")

// Configurations.

func fuseboxConsecutive() breaker.Config {
	return breaker.Config{ConsecutiveFailures: 5, OpenDuration: openFor}
}

func gobreakerConsecutive() gobreaker.Settings {
	return gobreaker.Settings{
		Timeout:     openFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures > 4 },
	}
}

func failsafeConsecutive() circuitbreaker.CircuitBreaker[any] {
	return circuitbreaker.NewBuilder[any]().WithFailureThreshold(5).WithDelay(openFor).Build()
}

// Constructors and trippers.

func newFusebox(b *testing.B, cfg breaker.Config) *breaker.Breaker {
	b.Helper()
	br, err := breaker.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return br
}

func tripFusebox(b *testing.B, br *breaker.Breaker) {
	b.Helper()
	for range 5 {
		p, err := br.Allow()
		if err != nil {
			b.Fatal(err)
		}
		p.Failure()
	}
	if s := br.State(); s != breaker.StateOpen {
		b.Fatalf("fusebox: state %v after 5 failures; want open", s)
	}
}

func tripGobreaker(b *testing.B, cb *gobreaker.CircuitBreaker[any]) {
	b.Helper()
	for range 5 {
		cb.Execute(func() (any, error) { return nil, errBoom })
	}
	if s := cb.State(); s != gobreaker.StateOpen {
		b.Fatalf("gobreaker: state %v after 5 failures; want open", s)
	}
}

func tripGobreakerTwoStep(b *testing.B, cb *gobreaker.TwoStepCircuitBreaker[any]) {
	b.Helper()
	for range 5 {
		done, err := cb.Allow()
		if err != nil {
			b.Fatal(err)
		}
		done(errBoom)
	}
	if s := cb.State(); s != gobreaker.StateOpen {
		b.Fatalf("gobreaker: state %v after 5 failures; want open", s)
	}
}

func tripFailsafe(b *testing.B, cb circuitbreaker.CircuitBreaker[any]) {
	b.Helper()
	for range 5 {
		if !cb.TryAcquirePermit() {
			b.Fatal("failsafe: refused while closed")
		}
		cb.RecordFailure()
	}
	if !cb.IsOpen() {
		b.Fatalf("failsafe: state %v after 5 failures; want open", cb.State())
	}
}

// One successful call through a closed breaker, closure API.

func BenchmarkClosedSuccess(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		benchFuseboxExecute(b, newFusebox(b, fuseboxConsecutive()))
	})
	b.Run("gobreaker", func(b *testing.B) {
		benchGobreakerExecute(b, gobreaker.NewCircuitBreaker[any](gobreakerConsecutive()))
	})
	b.Run("failsafe", func(b *testing.B) {
		benchFailsafeRun(b, failsafeConsecutive())
	})
}

func benchFuseboxExecute(b *testing.B, br *breaker.Breaker) {
	ctx := context.Background()
	ran := false
	fn := func(context.Context) error { ran = true; return nil }
	b.ReportAllocs()
	for b.Loop() {
		ran = false
		if err := br.Execute(ctx, fn); err != nil || !ran {
			b.Fatalf("fusebox: call not admitted: err=%v ran=%v", err, ran)
		}
	}
}

func benchGobreakerExecute(b *testing.B, cb *gobreaker.CircuitBreaker[any]) {
	ran := false
	fn := func() (any, error) { ran = true; return nil, nil }
	b.ReportAllocs()
	for b.Loop() {
		ran = false
		if _, err := cb.Execute(fn); err != nil || !ran {
			b.Fatalf("gobreaker: call not admitted: err=%v ran=%v", err, ran)
		}
	}
}

func benchFailsafeRun(b *testing.B, cb circuitbreaker.CircuitBreaker[any]) {
	ex := failsafe.With(cb) // made once, as a caller would
	ran := false
	fn := func() error { ran = true; return nil }
	b.ReportAllocs()
	for b.Loop() {
		ran = false
		if err := ex.Run(fn); err != nil || !ran {
			b.Fatalf("failsafe: call not admitted: err=%v ran=%v", err, ran)
		}
	}
}

// One successful call through a closed breaker, two-step API.

func BenchmarkClosedSuccessTwoStep(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		br := newFusebox(b, fuseboxConsecutive())
		b.ReportAllocs()
		for b.Loop() {
			p, err := br.Allow()
			if err != nil {
				b.Fatalf("fusebox: call not admitted: %v", err)
			}
			p.Success()
		}
	})
	b.Run("gobreaker", func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[any](gobreakerConsecutive())
		b.ReportAllocs()
		for b.Loop() {
			done, err := cb.Allow()
			if err != nil {
				b.Fatalf("gobreaker: call not admitted: %v", err)
			}
			done(nil)
		}
	})
	b.Run("failsafe", func(b *testing.B) {
		cb := failsafeConsecutive()
		b.ReportAllocs()
		for b.Loop() {
			if !cb.TryAcquirePermit() {
				b.Fatal("failsafe: call not admitted")
			}
			cb.RecordSuccess()
		}
	})
}

// The same two, from GOMAXPROCS goroutines at once. A failed check uses
// b.Error (b.Fatal must not be called from RunParallel's goroutines).

func BenchmarkClosedSuccessParallel(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		br := newFusebox(b, fuseboxConsecutive())
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ran := false
			fn := func(context.Context) error { ran = true; return nil }
			for pb.Next() {
				ran = false
				if err := br.Execute(ctx, fn); err != nil || !ran {
					b.Errorf("fusebox: call not admitted: err=%v ran=%v", err, ran)
					return
				}
			}
		})
	})
	b.Run("gobreaker", func(b *testing.B) {
		cb := gobreaker.NewCircuitBreaker[any](gobreakerConsecutive())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ran := false
			fn := func() (any, error) { ran = true; return nil, nil }
			for pb.Next() {
				ran = false
				if _, err := cb.Execute(fn); err != nil || !ran {
					b.Errorf("gobreaker: call not admitted: err=%v ran=%v", err, ran)
					return
				}
			}
		})
	})
	b.Run("failsafe", func(b *testing.B) {
		ex := failsafe.With(failsafeConsecutive())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ran := false
			fn := func() error { ran = true; return nil }
			for pb.Next() {
				ran = false
				if err := ex.Run(fn); err != nil || !ran {
					b.Errorf("failsafe: call not admitted: err=%v ran=%v", err, ran)
					return
				}
			}
		})
	})
}

func BenchmarkClosedSuccessTwoStepParallel(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		br := newFusebox(b, fuseboxConsecutive())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, err := br.Allow()
				if err != nil {
					b.Errorf("fusebox: call not admitted: %v", err)
					return
				}
				p.Success()
			}
		})
	})
	b.Run("gobreaker", func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[any](gobreakerConsecutive())
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				done, err := cb.Allow()
				if err != nil {
					b.Errorf("gobreaker: call not admitted: %v", err)
					return
				}
				done(nil)
			}
		})
	})
	b.Run("failsafe", func(b *testing.B) {
		cb := failsafeConsecutive()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !cb.TryAcquirePermit() {
					b.Error("failsafe: call not admitted")
					return
				}
				cb.RecordSuccess()
			}
		})
	})
}

// A call refused by an open breaker. The closure API checks that an error
// came back and the function did not run; the two-step API that Allow
// refused. Before timing, each checks once that the error is the library's
// open-breaker error.

func BenchmarkRefused(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		br := newFusebox(b, fuseboxConsecutive())
		tripFusebox(b, br)
		ctx := context.Background()
		ran := false
		fn := func(context.Context) error { ran = true; return nil }
		if err := br.Execute(ctx, fn); !errors.Is(err, breaker.ErrOpen) {
			b.Fatalf("fusebox: err=%v; want ErrOpen", err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Execute(ctx, fn); err == nil || ran {
				b.Fatalf("fusebox: call not refused: err=%v ran=%v", err, ran)
			}
		}
	})
	b.Run("gobreaker", func(b *testing.B) {
		cb := gobreaker.NewCircuitBreaker[any](gobreakerConsecutive())
		tripGobreaker(b, cb)
		ran := false
		fn := func() (any, error) { ran = true; return nil, nil }
		if _, err := cb.Execute(fn); !errors.Is(err, gobreaker.ErrOpenState) {
			b.Fatalf("gobreaker: err=%v; want ErrOpenState", err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(fn); err == nil || ran {
				b.Fatalf("gobreaker: call not refused: err=%v ran=%v", err, ran)
			}
		}
	})
	b.Run("failsafe", func(b *testing.B) {
		cb := failsafeConsecutive()
		tripFailsafe(b, cb)
		ex := failsafe.With(cb)
		ran := false
		fn := func() error { ran = true; return nil }
		if err := ex.Run(fn); !errors.Is(err, circuitbreaker.ErrOpen) {
			b.Fatalf("failsafe: err=%v; want ErrOpen", err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := ex.Run(fn); err == nil || ran {
				b.Fatalf("failsafe: call not refused: err=%v ran=%v", err, ran)
			}
		}
	})
}

func BenchmarkRefusedTwoStep(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		br := newFusebox(b, fuseboxConsecutive())
		tripFusebox(b, br)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := br.Allow(); err == nil {
				b.Fatal("fusebox: call not refused")
			}
		}
	})
	b.Run("gobreaker", func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[any](gobreakerConsecutive())
		tripGobreakerTwoStep(b, cb)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Allow(); err == nil {
				b.Fatal("gobreaker: call not refused")
			}
		}
	})
	b.Run("failsafe", func(b *testing.B) {
		cb := failsafeConsecutive()
		tripFailsafe(b, cb)
		b.ReportAllocs()
		for b.Loop() {
			if cb.TryAcquirePermit() {
				b.Fatal("failsafe: call not refused")
			}
		}
	})
}

func BenchmarkRefusedParallel(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		br := newFusebox(b, fuseboxConsecutive())
		tripFusebox(b, br)
		ctx := context.Background()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ran := false
			fn := func(context.Context) error { ran = true; return nil }
			for pb.Next() {
				if err := br.Execute(ctx, fn); err == nil || ran {
					b.Errorf("fusebox: call not refused: err=%v ran=%v", err, ran)
					return
				}
			}
		})
	})
	b.Run("gobreaker", func(b *testing.B) {
		cb := gobreaker.NewCircuitBreaker[any](gobreakerConsecutive())
		tripGobreaker(b, cb)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ran := false
			fn := func() (any, error) { ran = true; return nil, nil }
			for pb.Next() {
				if _, err := cb.Execute(fn); err == nil || ran {
					b.Errorf("gobreaker: call not refused: err=%v ran=%v", err, ran)
					return
				}
			}
		})
	})
	b.Run("failsafe", func(b *testing.B) {
		cb := failsafeConsecutive()
		tripFailsafe(b, cb)
		ex := failsafe.With(cb)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			ran := false
			fn := func() error { ran = true; return nil }
			for pb.Next() {
				if err := ex.Run(fn); err == nil || ran {
					b.Errorf("failsafe: call not refused: err=%v ran=%v", err, ran)
					return
				}
			}
		})
	})
}

func BenchmarkRefusedTwoStepParallel(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		br := newFusebox(b, fuseboxConsecutive())
		tripFusebox(b, br)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := br.Allow(); err == nil {
					b.Error("fusebox: call not refused")
					return
				}
			}
		})
	})
	b.Run("gobreaker", func(b *testing.B) {
		cb := gobreaker.NewTwoStepCircuitBreaker[any](gobreakerConsecutive())
		tripGobreakerTwoStep(b, cb)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := cb.Allow(); err == nil {
					b.Error("gobreaker: call not refused")
					return
				}
			}
		})
	})
	b.Run("failsafe", func(b *testing.B) {
		cb := failsafeConsecutive()
		tripFailsafe(b, cb)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if cb.TryAcquirePermit() {
					b.Error("failsafe: call not refused")
					return
				}
			}
		})
	})
}

// One successful call, closure API, through a breaker whose rule is a
// failure rate over a window.

func BenchmarkClosedSuccessTimeWindow(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		benchFuseboxExecute(b, newFusebox(b, breaker.Config{
			Window: 10 * time.Second, FailureRate: 0.5, MinCalls: 20, OpenDuration: openFor,
		}))
	})
	b.Run("gobreaker", func(b *testing.B) {
		benchGobreakerExecute(b, gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
			Interval:     10 * time.Second,
			BucketPeriod: time.Second,
			Timeout:      openFor,
			ReadyToTrip: func(c gobreaker.Counts) bool {
				return c.Requests >= 20 && float64(c.TotalFailures) >= 0.5*float64(c.Requests)
			},
		}))
	})
	b.Run("failsafe", func(b *testing.B) {
		benchFailsafeRun(b, circuitbreaker.NewBuilder[any]().
			WithFailureRateThreshold(0.5, 20, 10*time.Second).
			WithDelay(openFor).
			Build())
	})
}

func BenchmarkClosedSuccessCountWindow(b *testing.B) {
	b.Run("fusebox", func(b *testing.B) {
		benchFuseboxExecute(b, newFusebox(b, breaker.Config{
			WindowCalls: 100, FailureRate: 0.5, MinCalls: 20, OpenDuration: openFor,
		}))
	})
	// gobreaker: no count-based window (only Interval/BucketPeriod in time).
	b.Run("failsafe", func(b *testing.B) {
		benchFailsafeRun(b, circuitbreaker.NewBuilder[any]().
			WithFailureThresholdRatio(50, 100).
			WithDelay(openFor).
			Build())
	})
}
