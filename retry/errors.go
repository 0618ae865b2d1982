package retry

import (
	"errors"
	"strconv"
	"time"
)

// Conditions matched by the *Error that Policy.Do returns, with errors.Is.
var (
	// ErrExhausted: every allowed attempt failed.
	ErrExhausted = errors.New("retry: attempts exhausted")
	// ErrBudgetExhausted: the retry budget refused the retry.
	ErrBudgetExhausted = errors.New("retry: budget exhausted")
	// ErrDeadline: the wait before the next attempt would not end before the
	// context's deadline, so the policy gave up early instead of sleeping.
	ErrDeadline = errors.New("retry: wait exceeds deadline")
	// ErrHintTooLong: the server asked for a wait longer than Policy.MaxWait.
	ErrHintTooLong = errors.New("retry: server wait hint too long")
)

// Error is what Policy.Do returns when it stops without success. It says why
// (Reason), after how many calls of the function (Attempts), and holds the
// last error the function returned (Last).
//
// errors.Is and errors.As see through it to both the condition and Last:
// errors.Is(err, ErrExhausted) is true when the attempts ran out, and
// errors.Is(err, breaker.ErrOpen) when the last attempt was refused by a
// breaker. When the context ended, errors.Is(err, context.Canceled) (or
// context.DeadlineExceeded) is true.
type Error struct {
	// Reason says why no further attempt was made; never ReasonNone.
	Reason Reason
	// Attempts is the number of times the function was called.
	Attempts int
	// Wait is the wait that was refused: the hint or backoff that was too long
	// (ReasonHintTooLong, ReasonDeadline) or would have been spent
	// (ReasonBudget); otherwise 0.
	Wait time.Duration
	// Last is the last error the function returned; nil only when the context
	// ended before the first attempt.
	Last error

	cause error // the condition: a sentinel, or the context's error
}

// Error implements error. The text is built only when asked for.
func (e *Error) Error() string {
	s := "retry: " + e.Reason.String() + " after " + strconv.Itoa(e.Attempts) + " attempt"
	if e.Attempts != 1 {
		s += "s"
	}
	if e.Last != nil {
		s += ": " + e.Last.Error()
	}
	return s
}

// Unwrap returns the condition (ErrExhausted, ErrBudgetExhausted,
// ErrDeadline, ErrHintTooLong or the context's error, when one applies) and
// Last, so errors.Is and errors.As look at both.
func (e *Error) Unwrap() []error {
	switch {
	case e.cause != nil && e.Last != nil:
		return []error{e.cause, e.Last}
	case e.cause != nil:
		return []error{e.cause}
	case e.Last != nil:
		return []error{e.Last}
	}
	return nil
}
