package breaker

import (
	"context"
	"errors"
	"time"
)

// Result is what a call's outcome means to the breaker.
type Result uint8

const (
	// Success counts as a successful call.
	Success Result = iota
	// Failure counts as a failed call and may trip the breaker.
	Failure
	// Ignored counts toward nothing but the Ignored total: a throttle, a
	// caller's own error or cancellation. An ignored probe frees its slot.
	Ignored
)

// String returns the result's name.
func (r Result) String() string {
	switch r {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Ignored:
		return "ignored"
	}
	return "unknown"
}

// Outcome is how a call ended, as reported to its Permit.
type Outcome struct {
	Result Result
	// Duration is how long the call took, compared with
	// Config.SlowCallDuration. 0: measured from Allow to the report.
	Duration time.Duration
	// RetryAfter is a wait hint from the upstream (its Retry-After). If this
	// outcome trips or reopens the breaker, the open period lasts at least
	// this long (up to MaxOpenDuration).
	RetryAfter time.Duration
}

// DefaultClassify is the classifier Execute uses when Config.Classify is nil:
// nil is a Success, context.Canceled is Ignored, anything else (including
// context.DeadlineExceeded: a timeout is the upstream's failure) is a
// Failure. An error with a RetryAfter() time.Duration method anywhere in its
// chain passes that hint on.
func DefaultClassify(err error) Outcome {
	switch {
	case err == nil:
		return Outcome{Result: Success}
	case errors.Is(err, context.Canceled):
		return Outcome{Result: Ignored}
	}
	return Outcome{Result: Failure, RetryAfter: retryAfterOf(err)}
}

func retryAfterOf(err error) time.Duration {
	var h interface{ RetryAfter() time.Duration }
	if errors.As(err, &h) {
		return h.RetryAfter()
	}
	return 0
}
