package limit

import (
	"errors"
	"fmt"
	"time"
)

// ErrLimited is the condition of a call that would have to wait longer than
// allowed (the Pacer's MaxWait or the context's deadline). Every such error
// matches it with errors.Is; errors.As with *LimitedError gives the wait.
var ErrLimited = errors.New("limit: rate limited")

// ErrBulkheadFull is returned by Bulkhead.Acquire when all slots are in use
// and the wait queue is full (or waiting is disabled).
var ErrBulkheadFull = errors.New("limit: bulkhead full")

// ErrBulkheadTimeout is returned by Bulkhead.Acquire when a waiter has waited
// the bulkhead's MaxWait without getting a slot. It matches ErrBulkheadFull
// with errors.Is, so callers that shed load on a full bulkhead need only
// check that.
var ErrBulkheadTimeout = fmt.Errorf("%w: waited past MaxWait", ErrBulkheadFull)

// LimitedError is the error of a Wait that gave up because the call could not
// be admitted in the time allowed. It matches ErrLimited with errors.Is.
type LimitedError struct {
	// RetryAfter is how long after the refusal the call would have been
	// admitted, had it waited.
	RetryAfter time.Duration
}

// Error implements error.
func (e *LimitedError) Error() string {
	return "limit: rate limited, retry in " + e.RetryAfter.String()
}

// Is makes errors.Is(err, ErrLimited) true.
func (e *LimitedError) Is(target error) bool { return target == ErrLimited }
