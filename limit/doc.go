// Package limit paces and bounds calls to AI provider APIs.
//
// It has three parts, each safe for concurrent use:
//
//   - Pacer keeps a caller under a provider's requests-per-minute and
//     tokens-per-minute limits at once. A call reserves one request and an
//     estimate of its tokens before it is sent; the Reservation is settled
//     with the real usage afterwards, refunding an overestimate or debiting
//     an underestimate (a debit may drive the token bucket below zero, so
//     later calls wait). Callers either Wait, bounded by a context, or ask
//     Allow for an immediate answer and the time until it would be allowed.
//     SetLimits changes the rates live (adaptive pacing, config reloads) and
//     Block pauses admission until a provider's Retry-After has passed.
//   - Bulkhead admits at most N calls in flight, with a bounded queue of
//     waiters, and refuses with ErrBulkheadFull when the queue is full. The
//     queue is fair across flows (clients, tenants, API keys): AcquireFlow
//     names the caller's flow and weight, and while several flows wait, each
//     is served in proportion to its weight, FIFO within the flow. A flow
//     back from a quiet spell is served promptly but banks no credit for it.
//   - Adaptive is an AIMD controller for a Bulkhead's limit: it halves the
//     limit on throttle and capacity signals, at most once per cooldown, and
//     adds one after a run of successes.
//
// Like golang.org/x/time/rate, every decision is a function of the state and
// an instant: the methods ending in At take the time as a parameter, and the
// friendly forms read the injected clock (package clock) once. Blocking waits
// use the clock's timers, so tests drive them with clocktest instead of
// sleeping. Zero settings mean "no limit" or a documented default.
//
// The package depends only on the standard library and package clock.
package limit
