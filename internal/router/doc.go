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
