package retry

import "time"

// Action is what a Classify hook wants done with an error.
type Action uint8

// The actions.
const (
	// Defer leaves the error to the default rules (the error contract).
	Defer Action = iota
	// Again retries, waiting at least Decision.After.
	Again
	// Stop does not retry.
	Stop
)

// Decision is a Classify hook's verdict on one error. The zero Decision
// defers to the default rules.
type Decision struct {
	// Action says whether to retry.
	Action Action
	// After is the least wait before the retry, used like a server's hint
	// (capped by Policy.MaxWait); 0 means none. Only read for Again.
	After time.Duration
}

// Reason says why a policy does not retry. Its zero value, ReasonNone, means
// it does.
type Reason uint8

// The reasons.
const (
	// ReasonNone: retry.
	ReasonNone Reason = iota
	// ReasonExhausted: the attempt was the last one allowed.
	ReasonExhausted
	// ReasonNotRetryable: the error (its Retryable method, or Classify) says
	// not to retry.
	ReasonNotRetryable
	// ReasonBreakerOpen: a circuit breaker refused the call (breaker.ErrOpen).
	// Its wait hint is ignored: the caller should move to another target.
	ReasonBreakerOpen
	// ReasonHintTooLong: the server's wait hint exceeds Policy.MaxWait.
	ReasonHintTooLong
	// ReasonDeadline: the wait would not end before the deadline.
	ReasonDeadline
	// ReasonBudget: the retry budget refused the retry.
	ReasonBudget
	// ReasonCanceled: the context ended (canceled or past its deadline), or
	// the error is context.Canceled.
	ReasonCanceled
)

// String returns the reason in words, as used in error messages and logs.
func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "retry"
	case ReasonExhausted:
		return "attempts exhausted"
	case ReasonNotRetryable:
		return "not retryable"
	case ReasonBreakerOpen:
		return "breaker open"
	case ReasonHintTooLong:
		return "server wait hint too long"
	case ReasonDeadline:
		return "wait exceeds deadline"
	case ReasonBudget:
		return "budget exhausted"
	case ReasonCanceled:
		return "canceled"
	}
	return "unknown"
}

// sentinel returns the condition that errors.Is matches for r, if any.
func (r Reason) sentinel() error {
	switch r {
	case ReasonExhausted:
		return ErrExhausted
	case ReasonHintTooLong:
		return ErrHintTooLong
	case ReasonDeadline:
		return ErrDeadline
	case ReasonBudget:
		return ErrBudgetExhausted
	}
	return nil
}
