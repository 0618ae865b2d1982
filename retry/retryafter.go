package retry

import (
	"errors"
	"time"
)

// hinter is an error that carries a wait hint, such as one made from a
// Retry-After header.
type hinter interface {
	error
	RetryAfter() time.Duration
}

// retryabler is an error that says whether it is worth retrying.
type retryabler interface {
	error
	Retryable() bool
}

// Hint returns the wait hint of the first error in err's tree (as errors.As
// walks it) that has a RetryAfter() time.Duration method. A negative hint
// reads as 0. ok is false when no error has the method.
//
// Hint does not treat breaker refusals specially: *breaker.OpenError has a
// RetryAfter method too, and Policy checks for breaker.ErrOpen first.
func Hint(err error) (d time.Duration, ok bool) {
	h, ok := errors.AsType[hinter](err)
	if !ok {
		return 0, false
	}
	return max(h.RetryAfter(), 0), true
}

// Retryable reports what the first error in err's tree with a Retryable()
// bool method says; true when none has it. It looks at nothing else.
func Retryable(err error) bool {
	r, ok := errors.AsType[retryabler](err)
	return !ok || r.Retryable()
}
