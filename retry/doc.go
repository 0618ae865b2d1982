// Package retry tries a failed call again without making things worse.
//
// A Policy is a plain struct whose zero value is usable: exponential backoff
// with full jitter (Base, Multiplier, capped at Max), a maximum number of
// attempts, and the deadline of the caller's context. On top of that it
//
//   - honours a server's wait hint: an error with a RetryAfter() method (for
//     example from a Retry-After header) is never retried sooner than the hint
//     says; a hint longer than MaxWait, or longer than what is left of the
//     deadline, stops at once so the caller can fail over elsewhere;
//   - stops at once, without waiting, when a circuit breaker refuses the call
//     (errors.Is(err, breaker.ErrOpen)), when the error says it is not
//     retryable (a Retryable() method returning false), or when the caller's
//     context ends;
//   - draws retries from an optional shared Budget, which allows retries only
//     up to a fraction of recent requests (plus a small floor), so an outage
//     cannot multiply the traffic sent to a struggling upstream.
//
// Policy.Do runs the whole loop. Callers that run their own loop (a failover
// walk over targets, an http.RoundTripper) use the same rules one step at a
// time through Policy.Next, and Budget.TryRetry if they use a budget.
//
// # The error contract
//
// Other packages tell retry about an error through two optional methods,
// found anywhere in the error's wrap chain:
//
//	RetryAfter() time.Duration // the least wait before trying again
//	Retryable() bool           // false: do not try again
//
// Policy.Classify may override both for any error except breaker refusals and
// cancellations, which always stop.
//
// # Time
//
// Every wait goes through Policy.Clock (nil: the system clock), so tests use
// the fake from package clocktest and advance it instead of sleeping. The
// context's deadline is compared with Clock's time: a fake clock should read
// a time consistent with the deadline.
package retry
