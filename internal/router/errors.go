package router

import (
	"strings"
	"time"
)

// Skip is one target passed over or failed, and why, for the caller's 503
// and response headers.
type Skip struct {
	Target string
	// Reason is a short phrase: "breaker open", "rate limited", "503
	// server_error", "no usable key".
	Reason string
}

// NoTargetError is what a walk ends with when no target could answer. The
// gateway answers 503 with it, and Retry-After set to RetryAfter.
type NoTargetError struct {
	Alias string
	Skips []Skip
	// RetryAfter is when to come back: the soonest a skipped target may
	// take a request again (a breaker's next probe, a key's return), else
	// as the package doc's "Coming back" says; never less than a second.
	RetryAfter time.Duration
	// Unservable, when every target was passed over because it cannot
	// serve the request's fields (none was sent it or skipped for another
	// reason), is the first target's refusal: the request, not the
	// targets' health, is the problem.
	Unservable *Unservable
}

func (e *NoTargetError) Error() string {
	var b strings.Builder
	b.WriteString("no target of model " + e.Alias + " could answer")
	for i, s := range e.Skips {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(s.Target + " " + s.Reason)
	}
	return b.String()
}
