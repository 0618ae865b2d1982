// Package outage is the engine of `fusebox bench`: it reproduces a
// provider outage against simulated providers and measures, side by side,
// what three clients of the same providers go through.
//
// The scenario: steady traffic at Options.Rate requests per second for
// Options.Duration; from StormStart for StormLength the primary target
// fails (Scenario says how: 503s, 429s with Retry-After, extra latency,
// calls that hang, streams that stall, 503s that come and go, streams that
// end without data: [DONE], reset connections); the secondary stays
// healthy. With Options.Stream (always for Stall and Partial) every client
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
// For each client Run reports latency percentiles overall, during the
// storm and outside it, the time to the first byte of the answers, the
// share of requests that failed as the client saw them during the storm,
// the calls each provider received during the storm and the primary's
// input tokens (from sim.Stats snapshots at storm start and end), the time
// from the storm's onset to the first call the secondary answered, the
// time from its end to the first call the primary answered again, and the
// cost from the usage the client was billed; for Fusebox, also the calls
// the primary received from the breaker's first opening to the storm's
// end. Result renders as Markdown (Result.Markdown), JSON and an SVG chart
// (Result.WriteSVG), and checks Fusebox's row against the goals of the
// scenario (Result.Goals).
package outage
