// Package outage is the engine of `fusebox bench`: it reproduces a
// provider outage against simulated providers and measures, side by side,
// what three clients of the same providers go through.
//
// The scenario: steady traffic at Options.Rate requests per second for
// Options.Duration; from StormStart for StormLength the primary target
// fails (Scenario says how: 503s, 429s with Retry-After, extra latency,
// calls that hang, streams that stall, 503s that come and go, streams that
// end without data: [DONE], reset connections, streams that drip a chunk
// every 2 s and never end, streams reset after 2 chunks, calls that hang
// while Fusebox hedges); the secondary stays healthy. With Options.Stream
// (always for Stall, Partial, Drip and Cut) every client
// streams and reads until [DONE] or the end of the body; a stream fails if
// it breaks, carries an error event or ends without a finish_reason. The
// clients, run at the same time, each against its own pair of simulated
// providers built with the same seeds:
//
//   - naive: calls the primary, retrying 3 times with backoff (honouring
//     Retry-After), no breaker, no failover;
//   - retry+failover: the same on the primary, then the same on the
//     secondary, no breaker;
//   - fusebox: calls a Fusebox gateway whose alias lists the primary then
//     the secondary, with a breaker, the error classifier, failover, a
//     retry budget, timeouts and, for Slow, hedging (FuseboxPolicy gives
//     the alias's settings).
//
// Every client gives up on a request after 30 s, retries included.
//
// Stall, Drip, Cut and HangHedge are the slow, dripping and half-broken
// answers of issue 28. Fusebox runs them with the chat alias of
// examples/silent-failures.yaml as a user would copy it (5 consecutive
// failures trip, open 5s growing × 1.5 to 8s, background probes, ttfb 2s,
// idle 10s, suspect_after 1s, min_rate auto, deadline 30s, a hedge after
// 800ms), with continue_on_failure as Options.Continue says. Their goals: client
// failures during the storm at most 1% (drip) or 2% (stall, cut) without
// continuation and none with it, none for hang-hedge; for drip and cut
// the primary's breaker opens during the storm, and drip's time to first
// token p99 stays within the healthy one + ttfb + 100 ms; for stall with
// continuation a p99 within the healthy one + 2 × suspect_after +
// 100 ms; for hang-hedge the breaker opens after at most `consecutive`
// (5) ended attempts on the primary, then at most 0.05 calls per request
// reach it, and the p99 stays within the healthy one + the hedge delay +
// 100 ms; for each, back on the primary within open + 1 s of the storm's
// end.
//
// Overload529 is the cross-cloud ladder: the primary is Claude
// (claude-sonnet-4-5) on Anthropic's Messages API, a provider of type
// anthropic, answering 529 overloaded_error to every call during the
// storm; the secondary is the same model on AWS Bedrock, a provider of
// type bedrock (InvokeModel, SigV4-signed with static keys that the
// simulator verifies). Every client sends the same Messages request
// (not streamed: Options.Stream is refused): naive POSTs it to the
// primary's /v1/messages, retry+failover then calls InvokeModel with the
// AWS SDK's Bedrock client, Fusebox POSTs it to the gateway's
// /v1/messages, whose alias lists both targets. Both are priced from the
// catalog. Its goals: no request of Fusebox's client fails during the
// storm, and the primary receives at most 0.05 calls per request sent
// during the storm.
//
// For each client Run reports latency percentiles overall, during the
// storm and outside it, the time to the first byte of the answers, the
// share of requests that failed as the client saw them during the storm,
// the calls each provider received during the storm and the primary's
// input tokens (from sim.Stats snapshots at storm start and end), the time
// from the storm's onset to the first call the secondary answered, the
// time from its end to the first call the primary answered again, and the
// cost from the usage the client was billed; for Fusebox, also the calls
// the primary received from the breaker's first opening to the storm's
// end, and how many of the storm's calls to it had ended by then. Result
// renders as Markdown (Result.Markdown), JSON and an SVG chart
// (Result.WriteSVG), and checks Fusebox's row against the goals of the
// scenario (Result.Goals).
package outage
