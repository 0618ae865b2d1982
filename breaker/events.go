package breaker

import "time"

// Reason says why a breaker changed state.
type Reason uint8

// The reasons for a transition.
const (
	ReasonNone                Reason = iota
	ReasonFailureThreshold           // failures in the window reached FailureThreshold
	ReasonFailureRate                // failure rate reached FailureRate
	ReasonConsecutiveFailures        // ConsecutiveFailures in a row
	ReasonSlowCallRate               // slow-call rate reached SlowCallRate
	ReasonOpenElapsed                // the open period ended: probing
	ReasonProbeFailed                // a half-open probe failed
	ReasonProbesSucceeded            // HalfOpenSuccesses probes succeeded
	ReasonHalfOpenTimeout            // probes did not decide within HalfOpenMaxWait
	ReasonManual                     // ForceOpen, ForceClosed, Disable or Reset
	ReasonRemote                     // set to match another process's breaker (OpenUntil, CloseRemote)
	ReasonExternal                   // tripped by the caller (Trip), e.g. by a rule over several processes' outcomes
)

// String returns the reason in words, as used in logs and metrics labels.
func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonFailureThreshold:
		return "failure-threshold"
	case ReasonFailureRate:
		return "failure-rate"
	case ReasonConsecutiveFailures:
		return "consecutive-failures"
	case ReasonSlowCallRate:
		return "slow-call-rate"
	case ReasonOpenElapsed:
		return "open-elapsed"
	case ReasonProbeFailed:
		return "probe-failed"
	case ReasonProbesSucceeded:
		return "probes-succeeded"
	case ReasonHalfOpenTimeout:
		return "half-open-timeout"
	case ReasonManual:
		return "manual"
	case ReasonRemote:
		return "remote"
	case ReasonExternal:
		return "external"
	}
	return "unknown"
}

// Transition describes one state change, as passed to Config.OnStateChange.
type Transition struct {
	Name   string
	From   State
	To     State
	Reason Reason
	At     time.Time
	// OpenUntil is when the breaker will admit probes, for a change to
	// StateOpen; zero otherwise.
	OpenUntil time.Time
}
