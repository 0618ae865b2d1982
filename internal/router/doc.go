// Package router holds the gateway's targets and walks a request down the
// ladder of a model alias until one answers.
//
// A target is a (provider, model) with its own breaker, pacer, bulkhead and
// health figures; its provider's API keys rotate, and a throttle or an auth
// refusal on one key affects that key only. An alias orders its targets by a
// strategy (fallback, weighted, least-latency, cheapest-healthy); the walk
// skips targets whose breaker refuses or whose limits cannot admit in time,
// classifies every answer with aierr, fails over on outages and capacity
// refusals, waits out short throttles, retries on the last target under the
// retry budget, and returns client errors as they are.
//
// The walk is an iterator (Walk.Next) so the gateway can look at a streamed
// answer before it commits to it: a stream that fails before its first
// content is reported with Attempt.Fail and the walk goes on.
//
// # Slow, silent and half-broken answers
//
// Every attempt has watchdogs on the router's clock (watch.go): time to
// first content, idle between chunks, total, and for streams a pace:
// past its first content a stream's k-th event is due rateSlack (2 s) +
// k / floor after it, at most max_tokens of them, so the whole answer is
// bounded by 2 s + max_tokens / floor. The floor is Budgets.MinRate, or
// with AutoRate a third of the target's own recent pace when that is
// higher. A stream that falls behind is cut with an outage verdict of
// sub-kind stream_stalled and code stream_too_slow: its breaker counts
// it, and it takes a stall's road (failover before commit, Broke and
// continuation after).
//
// Every attempt reports one outcome. A hedge's loser that a later
// attempt beat is reported as a first-byte timeout (its silence sent the
// hedge), so a target that hangs opens its breaker under hedging; a
// hedge the first attempt beat is canceled. An attempt abandoned, or
// failed as its request ended, past one of its budgets is reported as
// the watchdog would have reported it. Walk.HedgeWait and
// Attempt.HedgeWait are the time spent waiting for losers before the
// winner was sent: upstream time, not the gateway's.
//
// A target whose mature streams are all silent is suspect: new requests
// skip it while a later target exists. Once at least two of them are
// silent (one may be a pause of its own), or when its breaker opens, its
// streams silent for suspect_after are cut at once with a stall verdict,
// and the suspicion holds after they are gone. A suspect target lets one
// request through per period, the breaker's open period growing by its
// open backoff up to its max open; with background probes none, a cheap
// probe is sent instead. Suspicion ends when its breaker closes, a probe
// or an answer on it succeeds, or a stream on it flows for suspect_after.
//
// # Coming back
//
// A walk that ends with no answer tells the client when to come back
// (NoTargetError.RetryAfter, the 503's Retry-After), streamed or not, and
// it always names a time, the first of these that is known:
//
//  1. the soonest a target it passed over takes requests again: a
//     breaker's next probe, a throttled key's return, a rate limit's slot;
//  2. the soonest a breaker its own failures opened admits again;
//  3. the wait the last failed upstream announced (Retry-After,
//     retry-after-ms, a rate-limit reset);
//  4. the shortest open period of its targets' breakers (the breaker's
//     default when their settings leave it zero). The targets have just
//     failed and no breaker has opened yet: that is how long the gateway
//     itself leaves a target alone once it calls its failures an outage,
//     and a client that comes back sooner most likely meets the same
//     outage.
//
// The wait is never under a second, Retry-After's unit: a time already
// past (a key rested until a moment ago) still says "wait a little".
//
// # Header-safe text
//
// Skip reasons go into the gateway's X-Fusebox-Tried header, logs and
// metric labels, and part of them comes from outside (an upstream's error
// code, a request field a target cannot serve): every reason and target
// name is recorded as printable ASCII, anything else replaced by '?', and
// bounded in length. A "provider/model" a client names directly must be
// printable ASCII to be looked up at all: it becomes the target's name,
// which goes into X-Fusebox-Target.
package router
