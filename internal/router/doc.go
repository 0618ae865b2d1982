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
package router
