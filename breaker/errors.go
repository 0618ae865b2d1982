package breaker

import (
	"errors"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// ErrOpen is the condition of a breaker refusing a call: it is open, forced
// open, or half-open with all its probe slots taken. Every refusal error
// matches it with errors.Is.
var ErrOpen = errors.New("breaker: open")

// OpenError is the error a refused call gets. It matches ErrOpen with
// errors.Is; errors.As gives access to the details.
//
// One OpenError is made per open period and shared by every call refused in
// it, so a refusal does not allocate; treat it as read-only.
type OpenError struct {
	// Name is the breaker's name (Config.Name).
	Name string
	// State is the state that refused the call: StateOpen, StateForcedOpen or
	// StateHalfOpen (all probe slots taken).
	State State
	// Until is when the breaker will next admit a probe; zero when not known
	// (forced open, or half-open waiting for its probes).
	Until time.Time

	clock clock.Clock
}

// Error implements error.
func (e *OpenError) Error() string {
	switch e.State {
	case StateHalfOpen:
		return "breaker " + e.Name + ": half-open, all probe slots in use"
	case StateForcedOpen:
		return "breaker " + e.Name + ": forced open"
	}
	return "breaker " + e.Name + ": open, next probe in " + e.RetryAfter().Round(time.Millisecond).String()
}

// Is makes errors.Is(err, ErrOpen) true.
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// RetryAfter returns how long from now until the breaker admits a probe; 0
// when that time has come or is not known.
func (e *OpenError) RetryAfter() time.Duration {
	if e.Until.IsZero() {
		return 0
	}
	if d := e.Until.Sub(clock.Or(e.clock).Now()); d > 0 {
		return d
	}
	return 0
}
