// Package outage is the engine of `fusebox bench`: it reproduces a
// provider outage against simulated providers and measures, side by side,
// what three clients of the same providers go through.
//
// The scenario: steady traffic at Options.Rate requests per second for
// Options.Duration; from StormStart for StormLength the primary target
// fails (Scenario says how: 503s, 429s with Retry-After, or extra
// latency); the secondary stays healthy. The clients, run at the same
// time, each against its own pair of simulated providers built with the
// same seeds:
//
//   - naive: calls the primary, retrying 3 times with backoff (honouring
//     Retry-After), no breaker, no failover;
//   - retry+failover: the same on the primary, then the same on the
//     secondary, no breaker;
//   - fusebox: calls a Fusebox gateway whose alias lists the primary then
//     the secondary, with a breaker, the error classifier, failover and a
//     retry budget (FuseboxPolicy gives the alias's settings).
//
// For each client Run reports latency percentiles overall and during the
// storm, the share of requests that failed as the client saw them during
// the storm, the calls the primary received during the storm and their
// input tokens (from sim.Stats snapshots at storm start and end), the time
// from the storm's onset to the first call the secondary answered, the time
// from its end to the first call the primary answered again, and the cost
// from the usage the client was billed. Result renders as Markdown
// (Result.Markdown), JSON and an SVG chart (Result.WriteSVG), and checks
// Fusebox's row against the goals (Result.Goals).
package outage
