package transport

import (
	"errors"
	"strings"
	"time"
)

// ErrKeyDisabled is why an endpoint is skipped while its key is out of the
// rotation after an Auth or Quota answer.
var ErrKeyDisabled = errors.New("transport: endpoint key disabled after an auth or quota refusal")

// UnavailableError is returned when no endpoint could be tried: every one
// was skipped by its breaker, its limits or a disabled key. It unwraps to
// each skip's error, so errors.Is(err, breaker.ErrOpen) holds when a breaker
// refused, and errors.As finds the *breaker.OpenError.
type UnavailableError struct {
	// Skips holds each endpoint's name and why it was skipped.
	Skips []Skip
	// Wait is the soonest time an endpoint may take a request again; 0 if
	// not known.
	Wait time.Duration
}

// Skip is one endpoint passed over.
type Skip struct {
	Endpoint string
	Err      error
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	b.WriteString("transport: no endpoint available")
	for i, s := range e.Skips {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(s.Endpoint + ": " + s.Err.Error())
	}
	return b.String()
}

// Unwrap returns the skip errors.
func (e *UnavailableError) Unwrap() []error {
	errs := make([]error, len(e.Skips))
	for i, s := range e.Skips {
		errs[i] = s.Err
	}
	return errs
}

// RetryAfter returns Wait, so retry policies wait as long as the soonest
// endpoint needs.
func (e *UnavailableError) RetryAfter() time.Duration { return e.Wait }
