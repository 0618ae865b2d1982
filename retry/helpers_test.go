package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start is far in the future, so a real context deadline set relative to the
// fake clock's time never expires during a test: only the policy's own
// arithmetic on the fake time decides.
var start = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

var errFail = errors.New("upstream failed")

// hintErr carries a server wait hint.
type hintErr struct{ d time.Duration }

func (e hintErr) Error() string             { return "throttled" }
func (e hintErr) RetryAfter() time.Duration { return e.d }

// verdictErr says whether it is retryable.
type verdictErr struct{ ok bool }

func (e verdictErr) Error() string   { return "verdict" }
func (e verdictErr) Retryable() bool { return e.ok }

// half is a Rand that always draws 0.5, so every wait is half its ceiling.
func half() float64 { return 0.5 }

// failing returns a function that fails with errs in turn (the last one
// repeating; nil means success) and counts its calls.
func failing(calls *int, errs ...error) func(context.Context, int) error {
	return func(_ context.Context, attempt int) error {
		*calls++
		if attempt > len(errs) {
			return errs[len(errs)-1]
		}
		return errs[attempt-1]
	}
}

// drive runs p.Do in a goroutine and advances the fake clock by each wait it
// announces through OnRetry (which it takes over), until Do returns. It
// returns Do's error and the waits in order.
func drive(t *testing.T, ctx context.Context, p *Policy, fake *clocktest.Clock, fn func(context.Context, int) error) (error, []time.Duration) {
	t.Helper()
	announced := make(chan time.Duration)
	p.OnRetry = func(a Attempt) { announced <- a.Wait }
	p.Clock = fake
	done := make(chan error, 1)
	go func() { done <- p.Do(ctx, fn) }()
	var waits []time.Duration
	for {
		select {
		case w := <-announced:
			waits = append(waits, w)
			if w > 0 {
				fake.WaitForTimers(1)
				fake.Advance(w)
			}
		case err := <-done:
			return err, waits
		}
	}
}

// withDeadline returns a context whose deadline is d after the fake clock's
// time (in the far future in real time, so it never fires by itself).
func withDeadline(t *testing.T, fake *clocktest.Clock, d time.Duration) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), fake.Now().Add(d))
	t.Cleanup(cancel)
	return ctx
}

// seeded returns a deterministic Rand.
func seeded(seed uint64) func() float64 {
	return rand.New(rand.NewPCG(seed, seed)).Float64
}
