package transport

import (
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
)

// Next says what the transport did after an attempt.
type Next uint8

const (
	// Return: the attempt's answer went back to the caller.
	Return Next = iota
	// Retry: the same endpoint is tried again after Attempt.Wait.
	Retry
	// Failover: the next endpoint is tried at once.
	Failover
)

// String returns the step's name.
func (n Next) String() string {
	switch n {
	case Return:
		return "return"
	case Retry:
		return "retry"
	case Failover:
		return "failover"
	}
	return "unknown"
}

// Attempt reports one attempt, or one endpoint skipped without an attempt,
// to Config.OnAttempt.
type Attempt struct {
	// Endpoint is the endpoint's name; Model the model sent to it.
	Endpoint, Model string
	// N numbers the attempts of one request from 1; 0 for a skip.
	N int
	// Skipped, for a skip, says why: a *breaker.OpenError, a
	// *limit.LimitedError, limit.ErrBulkheadFull, or ErrKeyDisabled.
	Skipped error
	// Verdict is what the answer meant; Err the transport error, if any.
	Verdict aierr.Verdict
	Err     error
	// Duration is from sending the request to its response headers (and,
	// with a FirstByte budget or a streamed Idle one, its first body byte).
	Duration time.Duration
	// Next is what followed; Wait the pause before a Retry.
	Next Next
	Wait time.Duration
	// Breaker is the endpoint's breaker state after the attempt.
	Breaker breaker.State
}
