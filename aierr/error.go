package aierr

import (
	"errors"
	"time"
)

// Error is a Verdict as an error, for code that passes errors around. It
// has the two methods the retry package looks for: RetryAfter (the wait
// hint) and Retryable (may the call be retried on the same target).
type Error struct {
	// Verdict is what the answer meant.
	Verdict Verdict
	// Err is the underlying error, if any (a transport error); nil for an
	// HTTP answer.
	Err error
}

// Err returns the verdict as an error: nil for Success, an *Error otherwise.
func (v Verdict) Err() error {
	if v.Kind == Success {
		return nil
	}
	return &Error{Verdict: v}
}

// WrapError classifies err with a zero Classifier and returns it as an
// *Error wrapping it. See Classifier.WrapError.
func WrapError(err error) error {
	var c Classifier
	return c.WrapError(err)
}

// WrapError classifies a transport error with ClassifyError and returns an
// *Error that wraps it, so errors.Is(err, context.Canceled) still holds.
// nil stays nil; an error that already holds an *Error is returned as is.
func (c *Classifier) WrapError(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Verdict: c.ClassifyError(err), Err: err}
}

// Error describes the verdict and, if any, the underlying error.
func (e *Error) Error() string {
	s := "aierr: " + e.Verdict.String()
	if e.Verdict.Message != "" {
		s += ": " + e.Verdict.Message
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// RetryAfter returns how long the provider asked to wait (Verdict.Wait); 0
// means no hint, use backoff.
func (e *Error) RetryAfter() time.Duration { return e.Verdict.Wait }

// Retryable reports whether the call may be retried on the same target
// (Verdict.SameTarget).
func (e *Error) Retryable() bool { return e.Verdict.SameTarget }

// FromError returns the Verdict held by an *Error in err's chain.
func FromError(err error) (Verdict, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Verdict, true
	}
	return Verdict{}, false
}
