// Package breaker is a circuit breaker: it stops calls to an upstream that is
// failing, so callers fail fast (or go elsewhere) instead of piling onto it,
// and lets a few probe calls through to find out when it has recovered.
//
// # States
//
// Closed: calls pass and their outcomes are recorded. When a trip rule fires
// the breaker opens. Open: calls are refused at once with an *OpenError that
// says when the next probe is allowed. When the open period ends the breaker
// is half-open: up to HalfOpenProbes probe calls pass, calls beyond them are
// refused (no queueing); HalfOpenSuccesses successes close it with an empty
// window, any failure reopens it, possibly for longer (OpenBackoff). If a
// probe does not report within HalfOpenMaxWait of its admission, it reopens.
//
// # Trip rules
//
// Each is off when zero and all combine (see Config): failures within a time
// window (Window, FailureThreshold), a failure rate over a time or count
// window (FailureRate, MinCalls, WindowCalls), consecutive failures
// (ConsecutiveFailures), and a slow-call rate (SlowCallDuration,
// SlowCallRate). Rules are evaluated on every recorded outcome.
//
// # Calls
//
// Execute runs a function. Proxies and streams use the two-step form: Allow
// returns a Permit, and the Permit's Report (or Success, Failure, Ignore,
// Done) records the outcome whenever the call ends. Ignored outcomes (a
// throttle, the caller's own error) count toward nothing. An outcome that
// arrives after the breaker changed state belongs to an earlier generation
// and is dropped.
//
// # Events
//
// Config.OnStateChange hears of every state change, in the order the changes
// were made and one call at a time (each Transition's From is the previous
// one's To), never with the breaker's lock held. Under concurrency a change
// may be delivered by another goroutine, after the call that made it has
// returned.
//
// # Sharing a breaker across processes
//
// Processes that front the same upstream can keep their breakers in step
// through a store of their choosing; the breaker knows nothing of it. Each
// publishes its own transitions from OnStateChange and applies the others'
// with OpenUntil and CloseRemote (ReasonRemote); ProbeGate shares the probe
// slots; OnRecord hands the caller each counted outcome, so a rule over the
// whole fleet can Trip the breaker (ReasonExternal).
//
// # Cost
//
// A call through a closed breaker takes no lock and allocates nothing; a
// refusal allocates nothing either (the OpenError of an open period is
// shared). See docs/BENCHMARKS.md for the figures.
//
// The package uses only the standard library and package clock.
package breaker
