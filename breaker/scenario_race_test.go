package breaker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Origins: sony/gobreaker TestCircuitBreakerInParallel, mercari/go-circuitbreaker
// state_test.go TestRace, afex/hystrix-go TestReportEventMultiThreaded: many
// goroutines through one breaker while an operator flips it by hand. Run
// with -race. Once every call has returned, every admitted call is in
// exactly one of the outcome totals and every call was either admitted or
// rejected.
func TestScenario_Race_ExecuteWithManualControl(t *testing.T) {
	const workers, callsEach = 64, 1000
	clk := clocktest.New(time.Time{})
	var changes atomic.Int64
	var b *Breaker
	b, err := New(Config{
		Clock: clk, Window: time.Second, FailureRate: 0.5, MinCalls: 10, ConsecutiveFailures: 5,
		SlowCallDuration: 5 * time.Millisecond, SlowCallRate: 0.9,
		OpenDuration: 2 * time.Millisecond, OpenBackoff: 2, MaxOpenDuration: 20 * time.Millisecond,
		HalfOpenProbes: 3, HalfOpenSuccesses: 2, HalfOpenMaxWait: 30 * time.Millisecond,
		OnStateChange: func(Transition) { changes.Add(1); _ = b.State() },
	})
	if err != nil {
		t.Fatal(err)
	}

	var made, ran, refused atomic.Uint64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range callsEach {
				made.Add(1)
				err := b.Execute(context.Background(), func(context.Context) error {
					ran.Add(1)
					switch (w + i) % 7 {
					case 0, 1, 2:
						return errBoom
					case 3:
						return fmt.Errorf("caller gave up: %w", context.Canceled) // ignored
					case 4:
						clk.Advance(time.Millisecond) // a slow call, and time moves on
					}
					return nil
				})
				if errors.Is(err, ErrOpen) {
					refused.Add(1)
				}
			}
		})
	}
	stop := make(chan struct{})
	var operator sync.WaitGroup
	operator.Go(func() {
		ops := []func(){b.ForceOpen, b.Reset, b.Disable, b.Reset, b.ForceClosed, b.Reset,
			func() { _ = b.Snapshot() }, func() { clk.Advance(3 * time.Millisecond) }}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ops[i%len(ops)]()
		}
	})
	wg.Wait()
	close(stop)
	operator.Wait()

	tot := b.Snapshot().Totals
	if got := tot.Allowed + tot.Rejected; got != made.Load() {
		t.Errorf("Allowed %d + Rejected %d = %d; want the %d calls made", tot.Allowed, tot.Rejected, got, made.Load())
	}
	if tot.Allowed != ran.Load() || tot.Rejected != refused.Load() {
		t.Errorf("Allowed %d, Rejected %d; want %d run, %d refused", tot.Allowed, tot.Rejected, ran.Load(), refused.Load())
	}
	if sum := tot.Succeeded + tot.Failed + tot.Ignored + tot.Dropped; tot.Allowed != sum {
		t.Errorf("Allowed %d; Succeeded+Failed+Ignored+Dropped = %d (%+v)", tot.Allowed, sum, tot)
	}
	if tot.Slow > tot.Succeeded+tot.Failed {
		t.Errorf("Slow %d exceeds Succeeded+Failed", tot.Slow)
	}
	if changes.Load() == 0 || tot.Dropped == 0 || tot.Rejected == 0 {
		t.Logf("weak run: %d changes, totals %+v", changes.Load(), tot)
	}
}
