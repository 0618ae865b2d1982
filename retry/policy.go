package retry

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
)

// Defaults for a Policy's zero fields.
const (
	DefaultAttempts   = 3
	DefaultBase       = 100 * time.Millisecond
	DefaultMax        = 10 * time.Second
	DefaultMultiplier = 2.0
	DefaultMaxWait    = 30 * time.Second
)

// NoDeadline is the remaining time to pass to Policy.Next when there is no
// deadline. Remaining returns it for a context without one.
const NoDeadline = time.Duration(math.MaxInt64)

// Policy says how to retry. Its zero value is usable and means the defaults
// below; a nil *Policy behaves as the zero Policy. A Policy must not be
// changed while in use; it is then safe for concurrent use, as long as Rand,
// Classify and OnRetry are.
type Policy struct {
	// Attempts is the most calls of the function, the first included.
	// 0: DefaultAttempts (3). 1: no retries. Negative: no limit; the
	// deadline, the budget and the errors still end the loop.
	Attempts int

	// Base is the backoff ceiling after the first failure; the ceiling after
	// attempt n is min(Max, Base × Multiplier^(n-1)).
	// Zero or negative: DefaultBase (100ms).
	Base time.Duration
	// Max caps the backoff ceiling. Zero or negative: DefaultMax (10s).
	Max time.Duration
	// Multiplier grows the ceiling after each failure.
	// 0: DefaultMultiplier (2). Below 1 (or NaN): 1, a constant ceiling.
	Multiplier float64

	// MaxWait is the longest server wait hint honoured. A longer hint stops
	// at once (ReasonHintTooLong) so the caller can fail over rather than
	// wait. 0: DefaultMaxWait (30s). Negative: any positive hint stops.
	MaxWait time.Duration

	// Budget, when set, must grant every retry (Budget.TryRetry) and is told
	// of every call to Do (Budget.Request). Share one Budget among all the
	// policies that send to the same upstream. nil: no budget.
	Budget *Budget

	// Classify, when set, decides about an error before the error contract
	// does; returning the zero Decision defers to it. It is not asked about
	// breaker refusals (breaker.ErrOpen) or context.Canceled, which always
	// stop. nil: the error contract alone decides.
	Classify func(error) Decision

	// Clock times the waits and reads the time for the deadline.
	// nil: the system clock.
	Clock clock.Clock

	// Rand returns a number in [0, 1) for the jitter. nil: math/rand/v2's
	// Float64. Values outside [0, 1) are clamped.
	Rand func() float64

	// OnRetry, when set, is called before each wait, from the goroutine
	// running Do, with the attempt that failed and the wait to come.
	OnRetry func(Attempt)
}

// Attempt describes a failed attempt that will be retried, for OnRetry.
type Attempt struct {
	// N is the attempt's number, from 1.
	N int
	// Err is the error it returned.
	Err error
	// Wait is how long the policy waits before attempt N+1.
	Wait time.Duration
}

// settings are a Policy's fields with the defaults filled in.
type settings struct {
	attempts   int // < 0: no limit
	base, max  time.Duration
	multiplier float64
	maxWait    time.Duration // < 0: every positive hint is too long
	rand       func() float64
}

// resolve fills in the defaults. It does not allocate.
func (p *Policy) resolve() settings {
	var q Policy
	if p != nil {
		q = *p
	}
	s := settings{
		attempts: q.Attempts, base: q.Base, max: q.Max,
		multiplier: q.Multiplier, maxWait: q.MaxWait, rand: q.Rand,
	}
	if s.attempts == 0 {
		s.attempts = DefaultAttempts
	}
	if s.base <= 0 {
		s.base = DefaultBase
	}
	if s.max <= 0 {
		s.max = DefaultMax
	}
	switch {
	case s.multiplier == 0:
		s.multiplier = DefaultMultiplier
	case !(s.multiplier >= 1): // below 1, or NaN
		s.multiplier = 1
	}
	if s.maxWait == 0 {
		s.maxWait = DefaultMaxWait
	}
	return s
}

// Remaining returns how long ctx has left at now: its deadline minus now
// (possibly negative), or NoDeadline when it has none.
func Remaining(ctx context.Context, now time.Time) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return NoDeadline
	}
	return d.Sub(now)
}

// Next decides what follows a failed attempt: attempt is its number (from 1),
// err the non-nil error it returned, and remaining the time left before the
// deadline (Remaining gives it; NoDeadline for none). It returns ReasonNone
// and the wait before the next attempt, or the reason to stop (with the
// refused wait, if a wait was the reason).
//
// Next is the step that Do takes after each failure, for callers running
// their own loop. It reads no clock and changes no state; the only
// randomness is the jitter. It does not consult the Budget: a caller with
// one calls Budget.TryRetry when Next says to retry.
//
// The rules, in order:
//
//  1. errors.Is(err, breaker.ErrOpen): stop (ReasonBreakerOpen), ignoring
//     the breaker's own RetryAfter.
//  2. errors.Is(err, context.Canceled): stop (ReasonCanceled).
//  3. Classify, when set and not deferring: Stop stops
//     (ReasonNotRetryable); Again retries with After as the hint.
//  4. Otherwise the error contract: Retryable() false stops
//     (ReasonNotRetryable); RetryAfter() gives the hint.
//  5. attempt is the last allowed: stop (ReasonExhausted).
//  6. A hint above MaxWait: stop (ReasonHintTooLong).
//  7. The wait is max(hint, Backoff(attempt)): the server's hint is never
//     cut short, and a tiny hint does not undo the backoff's spreading.
//  8. A wait of remaining or more: stop (ReasonDeadline) rather than sleep
//     until the deadline.
func (p *Policy) Next(attempt int, err error, remaining time.Duration) (time.Duration, Reason) {
	s := p.resolve()
	return s.next(p.classifier(), attempt, err, remaining)
}

func (p *Policy) classifier() func(error) Decision {
	if p == nil {
		return nil
	}
	return p.Classify
}

// next is Next with the settings resolved.
func (s *settings) next(classify func(error) Decision, attempt int, err error, remaining time.Duration) (time.Duration, Reason) {
	hint, reason := classifyErr(classify, err)
	if reason != ReasonNone {
		return 0, reason
	}
	if s.attempts > 0 && attempt >= s.attempts {
		return 0, ReasonExhausted
	}
	if hint > 0 && (s.maxWait < 0 || hint > s.maxWait) {
		return hint, ReasonHintTooLong
	}
	wait := max(hint, s.backoff(attempt))
	if wait >= remaining {
		return wait, ReasonDeadline
	}
	return wait, ReasonNone
}

// classifyErr applies rules 1 to 4 of Next: a stop reason, or the hint (0
// when none) and ReasonNone.
func classifyErr(classify func(error) Decision, err error) (time.Duration, Reason) {
	switch {
	case err == nil:
		return 0, ReasonNotRetryable // nothing to retry
	case errors.Is(err, breaker.ErrOpen):
		return 0, ReasonBreakerOpen
	case errors.Is(err, context.Canceled):
		return 0, ReasonCanceled
	}
	if classify != nil {
		switch d := classify(err); d.Action {
		case Stop:
			return 0, ReasonNotRetryable
		case Again:
			return max(d.After, 0), ReasonNone
		}
	}
	if !Retryable(err) {
		return 0, ReasonNotRetryable
	}
	hint, _ := Hint(err)
	return hint, ReasonNone
}
