package outage

import (
	"fmt"
	"strings"
)

// Markdown renders the result: a heading, the table, the goals and
// Fusebox's configuration.
func (r *Result) Markdown() string {
	o := r.Options
	var b strings.Builder
	fmt.Fprintf(&b, "### fusebox bench: %s\n\n", r.describe())
	requests := "req/s"
	if o.Stream {
		requests = "streamed req/s"
	}
	pp, sp := prices(o.Scenario)
	fmt.Fprintf(&b, "%g %s per client for %gs; latency median %s, p99 %s; prices per Mtok: primary $%g/$%g, secondary $%g/$%g.\n\n",
		o.Rate, requests, o.DurationS, fmtMS(o.LatencyMS), fmtMS(o.P99MS),
		pp.input, pp.output, sp.input, sp.output)
	if o.Scenario.crossCloud() {
		fmt.Fprintf(&b, "The primary is %[1]s on Anthropic's Messages API (a provider of type anthropic), the secondary %[1]s on AWS Bedrock (type bedrock: InvokeModel, SigV4-signed with keys the simulator verifies). Every client sends the same Messages request: naive to the primary's /v1/messages, retry+failover there and then to Bedrock through the AWS SDK, Fusebox to the gateway's /v1/messages.\n\n", claudeModel)
	}
	if o.Replicas > 1 {
		shared := "each with its own state"
		if o.State != "memory" {
			shared = "sharing their state on Redis (" + o.State + ")"
		}
		fmt.Fprintf(&b, "Fusebox's client sends to %d gateway replicas in turn, %s; the fusebox row counts what the primary received from all of them, and its breaker figures are the first replica's.\n\n", o.Replicas, shared)
	}
	r.writeTable(&b)
	b.WriteString("\nStorm columns cover requests sent during the storm. Calls to primary: what the primary received during the storm, retries and probes included; billed tokens are those of 200 answers it finished in that window (calls sent before the onset). Calls per request: the calls each provider received during the storm, per request sent in it. Failover: from the onset to the arrival of the first call the secondary answered. Back on primary: from the storm's end to the arrival of the first call the primary answered.\n")
	if o.Stream {
		b.WriteString("\nRequests are streamed, and read until data: [DONE] or the end of the body. A stream fails if it breaks, carries an error event or ends without a finish_reason; one that ends without [DONE] after a finish_reason is complete, as OpenAI's SDKs read it. Latency is to the end of the stream; TTFB, over the requests that succeeded, from the request's start (retries included) to the first event of its answer.\n")
	}
	if a := r.row(Fusebox).afterOpen(); a != nil {
		fmt.Fprintf(&b, "\nFrom the first opening of Fusebox's breaker on the primary (%.2fs, after %d of the storm's calls to it had ended) to the storm's end: requests %d, calls to the primary %d (%.3f per request).\n",
			a.AtMS/1000, a.PrimaryEnded, a.Requests, a.PrimaryCalls, a.perRequest())
	}
	b.WriteString("\nGoals for the fusebox row:\n\n")
	for _, g := range r.Goals {
		verdict := "FAIL"
		if g.Pass {
			verdict = "PASS"
		}
		fmt.Fprintf(&b, "- %s %s: %s (want %s)\n", verdict, g.Name, g.Got, g.Want)
	}
	fmt.Fprintf(&b, "\nFusebox's breaker on the primary: %s\n", r.transitionSummary())
	b.WriteString("\nFusebox alias `" + alias + "` = primary → secondary, strategy fallback, with:\n\n```yaml\n" + r.Policy + "```\n")
	fmt.Fprintf(&b, "\nnaive and retry+failover: 1 call + up to 3 retries per target, full-jitter backoff from 100ms doubling (max 2s), Retry-After honoured; retry+failover then does the same on the secondary. Every client gives up on a request after %s, retries included.\n",
		fmtMS(o.ClientTimeoutMS))
	return b.String()
}

// afterOpen is w's AfterOpen; nil for a nil w.
func (w *Row) afterOpen() *AfterOpen {
	if w == nil {
		return nil
	}
	return w.AfterOpen
}

// writeTable writes the rows as a Markdown table; streamed runs get TTFB
// columns.
func (r *Result) writeTable(b *strings.Builder) {
	head := []string{"client", "p50", "p95", "p99", "storm p50", "storm p95", "storm p99"}
	if r.Options.Stream {
		head = append(head, "storm TTFB p50", "storm TTFB p99")
	}
	head = append(head, "failed in storm", "calls to primary in storm", "their input tokens (billed)",
		"calls per request in storm (primary + secondary)", "failover", "back on primary", "served primary / secondary", "cost")
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|---" + strings.Repeat("|---:", len(head)-1) + "|\n")
	for _, w := range r.Rows {
		cells := []string{string(w.Client), fmtMS(w.Latency.P50), fmtMS(w.Latency.P95), fmtMS(w.Latency.P99),
			fmtMS(w.StormLatency.P50), fmtMS(w.StormLatency.P95), fmtMS(w.StormLatency.P99)}
		if r.Options.Stream {
			if w.StormFailed < w.StormRequests {
				cells = append(cells, fmtMS(w.StormTTFB.P50), fmtMS(w.StormTTFB.P99))
			} else {
				cells = append(cells, "–", "–") // no request of the storm succeeded
			}
		}
		perReq := func(n int64) float64 { return float64(n) / float64(max(w.StormRequests, 1)) }
		cells = append(cells,
			fmt.Sprintf("%s (%d/%d)", pct(w.StormFailure), w.StormFailed, w.StormRequests),
			fmt.Sprint(w.PrimaryCalls),
			fmt.Sprintf("%d (%d)", w.PrimaryInputTokens, w.PrimaryBilledInputTokens),
			fmt.Sprintf("%.2f (%.2f + %.2f)", perReq(w.PrimaryCalls+w.SecondaryCalls), perReq(w.PrimaryCalls), perReq(w.SecondaryCalls)),
			fmtOptMS(w.FailoverMS), fmtOptMS(w.RecoveryMS),
			fmt.Sprintf("%d / %d", w.ServedPrimary, w.ServedSecondary),
			fmt.Sprintf("$%.2f", w.CostUSD))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// describe says what the scenario did.
func (r *Result) describe() string {
	o := r.Options
	window := fmt.Sprintf("from %gs to %gs", o.StormStartS, o.StormStartS+o.StormLengthS)
	var what string
	switch o.Scenario {
	case Throttle:
		what = fmt.Sprintf("the primary answers 429 (Retry-After %s) to every call", fmtMS(o.RetryAfterMS))
	case LatencySpike, Slow:
		what = fmt.Sprintf("the primary answers %s later than usual", fmtMS(o.SpikeMS))
	case Hang:
		what = "the primary accepts every call and sends nothing, not even headers,"
	case HangHedge:
		what = "the primary accepts every call and sends nothing, not even headers, while Fusebox hedges,"
	case Drip:
		what = fmt.Sprintf("the primary's streams send their first content, then one chunk every %v and never their end,", dripEvery)
	case Cut:
		what = fmt.Sprintf("the primary's streams send the role chunk and %d content chunks, then the connection is reset,", stallAfter)
	case Stall:
		what = fmt.Sprintf("the primary's streams send the role chunk and %d content chunks, then nothing,", stallAfter)
	case Flap:
		what = fmt.Sprintf("the primary answers 503 for %v, then is healthy for %v, in turn", flapHalf, flapHalf)
	case Partial:
		what = "the primary's streams carry the whole answer, then end without data: [DONE],"
	case Reset:
		what = "the primary resets the connection of every call before sending a byte"
	case Overload529:
		what = "Claude on Anthropic answers 529 overloaded_error to every call"
		return fmt.Sprintf("%s — %s %s; Claude on Bedrock healthy", o.Scenario, what, window)
	default:
		what = "the primary answers 503 to every call"
	}
	return fmt.Sprintf("%s — %s %s; secondary healthy", o.Scenario, what, window)
}

// transitionSummary lists the breaker's openings and closings compactly.
func (r *Result) transitionSummary() string {
	if len(r.Transitions) == 0 {
		return "no transitions (stayed closed)."
	}
	var parts []string
	for i, t := range r.Transitions {
		if i == 12 {
			parts = append(parts, fmt.Sprintf("… %d more", len(r.Transitions)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s→%s at %.2fs (%s)", t.From, t.To, t.AtMS/1000, t.Reason))
	}
	return fmt.Sprintf("%d transitions: %s.", len(r.Transitions), strings.Join(parts, ", "))
}

// fmtMS formats milliseconds: "12 ms", "1.25 s".
func fmtMS(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	if v < 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// fmtOptMS formats milliseconds, or "never" for nil.
func fmtOptMS(v *float64) string {
	if v == nil {
		return "never"
	}
	return fmtMS(*v)
}

func pct(f float64) string {
	if f > 0 && f < 0.001 {
		return fmt.Sprintf("%.3f%%", 100*f)
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

// ratio formats a/b as a percentage of b.
func ratio(a, b int64) string {
	if b == 0 {
		return "naive made none"
	}
	return fmt.Sprintf("%.2f%% of naive", 100*float64(a)/float64(b))
}
