package outage

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// Result is what a run measured. Durations are in milliseconds, from the
// start of the run unless noted.
type Result struct {
	// Options are the run's settings, defaults filled.
	Options OptionsReport `json:"options"`
	// Policy is the Fusebox alias's breaker, retry and timeouts blocks.
	Policy string `json:"fusebox_policy"`
	// Start is when the clients started.
	Start time.Time `json:"start"`
	// Rows are the clients' figures, in the order of Clients.
	Rows []Row `json:"rows"`
	// Transitions are those of Fusebox's breaker on the primary.
	Transitions []Transition `json:"breaker_transitions"`
	// Goals are Fusebox's row checked against the goals.
	Goals []Goal `json:"goals"`
}

// OptionsReport is Options as reported, in seconds and milliseconds.
type OptionsReport struct {
	Scenario     Scenario `json:"scenario"`
	Rate         float64  `json:"rate_per_second"`
	DurationS    float64  `json:"duration_s"`
	StormStartS  float64  `json:"storm_start_s"`
	StormLengthS float64  `json:"storm_length_s"`
	LatencyMS    float64  `json:"latency_median_ms"`
	P99MS        float64  `json:"latency_p99_ms"`
	SpikeMS      float64  `json:"spike_ms,omitempty"`
	RetryAfterMS float64  `json:"retry_after_ms,omitempty"`
	OpenMS       float64  `json:"breaker_open_ms"`
	Seed         uint64   `json:"seed"`
}

// Row is one client's figures. Requests cut short by the end of a run
// (Ctrl-C) are left out.
type Row struct {
	Client   Client `json:"client"`
	Requests int    `json:"requests"`
	// Failed counts requests that failed as the client saw them.
	Failed  int         `json:"failed"`
	Latency Percentiles `json:"latency_ms"`
	// Storm* are the requests sent during the storm.
	StormRequests int         `json:"storm_requests"`
	StormFailed   int         `json:"storm_failed"`
	StormFailure  float64     `json:"storm_failure_rate"`
	StormLatency  Percentiles `json:"storm_latency_ms"`
	// PrimaryCalls counts the calls the primary received during the storm,
	// retries and probes included; PrimaryInputTokens the prompt tokens
	// they carried, and PrimaryBilledInputTokens those billed (answered
	// 200).
	PrimaryCalls             int64 `json:"storm_primary_calls"`
	PrimaryInputTokens       int64 `json:"storm_primary_input_tokens"`
	PrimaryBilledInputTokens int64 `json:"storm_primary_billed_input_tokens"`
	// FailoverMS is the time from the storm's onset to the arrival of the
	// first call the secondary answered; nil when it never did.
	FailoverMS *float64 `json:"failover_ms"`
	// RecoveryMS is the time from the storm's end to the arrival of the
	// first call the primary answered; nil when it never did.
	RecoveryMS *float64 `json:"back_on_primary_ms"`
	// Served counts successful requests by the target that served them.
	ServedPrimary   int `json:"served_primary"`
	ServedSecondary int `json:"served_secondary"`
	// CostUSD is the cost of the usage the client was billed.
	CostUSD float64 `json:"cost_usd"`
	// Series has one entry per second of the run, by when requests were
	// sent.
	Series []Second `json:"series"`
}

// Percentiles of latency, in milliseconds (nearest rank).
type Percentiles struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Second is one second of a client's requests.
type Second struct {
	T        int     `json:"t"`
	Requests int     `json:"requests"`
	Failed   int     `json:"failed"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
}

// Transition is a change of state of Fusebox's breaker on the primary.
type Transition struct {
	AtMS   float64 `json:"at_ms"`
	From   string  `json:"from"`
	To     string  `json:"to"`
	Reason string  `json:"reason"`
}

// Goal is one goal checked against Fusebox's row.
type Goal struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Pass bool   `json:"pass"`
}

// report returns o as reported.
func (o Options) report() OptionsReport {
	r := OptionsReport{
		Scenario: o.Scenario, Rate: o.Rate, DurationS: o.Duration.Seconds(),
		StormStartS: o.StormStart.Seconds(), StormLengthS: o.StormLength.Seconds(),
		LatencyMS: ms(o.Latency), P99MS: ms(o.P99), OpenMS: ms(o.Open), Seed: o.Seed,
	}
	switch o.Scenario {
	case LatencySpike:
		r.SpikeMS = ms(o.Spike)
	case Throttle:
		r.RetryAfterMS = ms(o.RetryAfter)
	}
	return r
}

// summarize computes client r's row.
func summarize(o Options, t0 time.Time, r *rig, st stormStats) Row {
	row := Row{Client: r.kind}
	var all, storm []float64
	for _, rec := range r.records {
		if rec.canceled {
			continue
		}
		l := ms(rec.latency)
		row.Requests++
		all = append(all, l)
		if rec.failed {
			row.Failed++
		}
		if o.inStorm(rec.start) {
			row.StormRequests++
			storm = append(storm, l)
			if rec.failed {
				row.StormFailed++
			}
		}
		switch rec.served {
		case "primary":
			row.ServedPrimary++
			row.CostUSD += primaryPrice.cost(rec.usage)
		case "secondary":
			row.ServedSecondary++
			row.CostUSD += secondaryPrice.cost(rec.usage)
		}
	}
	row.Latency, row.StormLatency = percentiles(all), percentiles(storm)
	if row.StormRequests > 0 {
		row.StormFailure = float64(row.StormFailed) / float64(row.StormRequests)
	}
	d := stormDelta(st, r.primary.sim)
	row.PrimaryCalls, row.PrimaryInputTokens, row.PrimaryBilledInputTokens = d.Calls, d.InputTokens, d.BilledInputTokens
	if d, ok := r.secondary.firstOK(t0.Add(o.StormStart)); ok {
		row.FailoverMS = ptr(ms(d))
	}
	if d, ok := r.primary.firstOK(t0.Add(o.stormEnd())); ok {
		row.RecoveryMS = ptr(ms(d))
	}
	row.Series = series(o, r.records)
	return row
}

// stormDelta is what the primary counted during the storm; a run cut short
// counts up to now.
func stormDelta(st stormStats, s *sim.Server) sim.Stats {
	if st.atEnd.Outcomes == nil {
		st.atEnd = s.Stats()
	}
	if st.atStart.Outcomes == nil {
		st.atStart = st.atEnd
	}
	return st.atEnd.Sub(st.atStart)
}

// series cuts the records into seconds by when they were sent.
func series(o Options, recs []record) []Second {
	n := int(math.Ceil(o.Duration.Seconds()))
	lat := make([][]float64, n)
	out := make([]Second, n)
	for i := range out {
		out[i].T = i
	}
	for _, rec := range recs {
		i := int(rec.start / time.Second)
		if rec.canceled || i < 0 || i >= n {
			continue
		}
		out[i].Requests++
		if rec.failed {
			out[i].Failed++
		}
		lat[i] = append(lat[i], ms(rec.latency))
	}
	for i := range out {
		p := percentiles(lat[i])
		out[i].P50MS, out[i].P99MS = p.P50, p.P99
	}
	return out
}

// percentiles returns the nearest-rank percentiles of v (sorted in place).
func percentiles(v []float64) Percentiles {
	if len(v) == 0 {
		return Percentiles{}
	}
	slices.Sort(v)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(v)))) - 1
		return v[min(max(i, 0), len(v)-1)]
	}
	return Percentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99)}
}

// row returns the row of client c, or nil.
func (r *Result) row(c Client) *Row {
	for i := range r.Rows {
		if r.Rows[i].Client == c {
			return &r.Rows[i]
		}
	}
	return nil
}

// checkGoals checks Fusebox's row against the goals.
func (r *Result) checkGoals(o Options) []Goal {
	fb, naive := r.row(Fusebox), r.row(Naive)
	if fb == nil || naive == nil {
		return nil
	}
	var goals []Goal
	add := func(name, want, got string, pass bool) {
		goals = append(goals, Goal{Name: name, Want: want, Got: got, Pass: pass})
	}
	add("client-visible failure during the storm", "≤ 0.1%", pct(fb.StormFailure), fb.StormFailure <= 0.001)
	add("failover after the onset", "≤ 100 ms", fmtOptMS(fb.FailoverMS), fb.FailoverMS != nil && *fb.FailoverMS <= 100)
	wait, waitName := o.Open, "open"
	if o.Scenario == Throttle {
		wait, waitName = o.RetryAfter, "Retry-After"
	}
	probe := o.P99
	if o.Scenario == LatencySpike {
		probe += o.Spike // the last probe sent during the spike is slow
	}
	limit := ms(wait + probe)
	add("back on the primary after the storm",
		fmt.Sprintf("≤ %s (%v %s + one probe, %v)", fmtMS(limit), wait, waitName, probe),
		fmtOptMS(fb.RecoveryMS), fb.RecoveryMS != nil && *fb.RecoveryMS <= limit)
	add("calls to the failing target during the storm",
		fmt.Sprintf("≤ 1%% of naive's (%d)", naive.PrimaryCalls/100),
		fmt.Sprintf("%d (%s)", fb.PrimaryCalls, ratio(fb.PrimaryCalls, naive.PrimaryCalls)),
		float64(fb.PrimaryCalls) <= 0.01*float64(naive.PrimaryCalls))
	if o.Scenario == Throttle {
		opened := 0
		for _, t := range r.Transitions {
			if t.To == "open" {
				opened++
			}
		}
		add("the breaker never opens on 429s", "0 openings", fmt.Sprint(opened), opened == 0)
	}
	return goals
}

// Markdown renders the result: a heading, the table, the goals and
// Fusebox's configuration.
func (r *Result) Markdown() string {
	o := r.Options
	var b strings.Builder
	fmt.Fprintf(&b, "### fusebox bench: %s\n\n", r.describe())
	fmt.Fprintf(&b, "%g req/s per client for %gs; latency median %s, p99 %s; prices per Mtok: primary $%g/$%g, secondary $%g/$%g.\n\n",
		o.Rate, o.DurationS, fmtMS(o.LatencyMS), fmtMS(o.P99MS),
		primaryPrice.input, primaryPrice.output, secondaryPrice.input, secondaryPrice.output)
	b.WriteString("| client | p50 | p95 | p99 | storm p50 | storm p95 | storm p99 | failed in storm | calls to primary in storm | their input tokens (billed) | failover | back on primary | served primary / secondary | cost |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s (%d/%d) | %d | %d (%d) | %s | %s | %d / %d | $%.2f |\n",
			w.Client, fmtMS(w.Latency.P50), fmtMS(w.Latency.P95), fmtMS(w.Latency.P99),
			fmtMS(w.StormLatency.P50), fmtMS(w.StormLatency.P95), fmtMS(w.StormLatency.P99),
			pct(w.StormFailure), w.StormFailed, w.StormRequests,
			w.PrimaryCalls, w.PrimaryInputTokens, w.PrimaryBilledInputTokens,
			fmtOptMS(w.FailoverMS), fmtOptMS(w.RecoveryMS), w.ServedPrimary, w.ServedSecondary, w.CostUSD)
	}
	b.WriteString("\nStorm columns cover requests sent during the storm. Calls to primary: what the primary received during the storm, retries and probes included; billed tokens are those of 200 answers it finished in that window (calls sent before the onset). Failover: from the onset to the arrival of the first call the secondary answered. Back on primary: from the storm's end to the arrival of the first call the primary answered.\n")
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
	b.WriteString("\nnaive and retry+failover: 1 call + up to 3 retries per target, full-jitter backoff from 100ms doubling (max 2s), Retry-After honoured; retry+failover then does the same on the secondary.\n")
	return b.String()
}

// describe says what the scenario did.
func (r *Result) describe() string {
	o := r.Options
	window := fmt.Sprintf("from %gs to %gs", o.StormStartS, o.StormStartS+o.StormLengthS)
	switch o.Scenario {
	case Throttle:
		return fmt.Sprintf("throttle — the primary answers 429 (Retry-After %s) to every call %s; secondary healthy", fmtMS(o.RetryAfterMS), window)
	case LatencySpike:
		return fmt.Sprintf("latency-spike — the primary answers %s later than usual %s; secondary healthy", fmtMS(o.SpikeMS), window)
	}
	return "outage — the primary answers 503 to every call " + window + "; secondary healthy"
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

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr[T any](v T) *T { return &v }

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
