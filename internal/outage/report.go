package outage

import (
	"github.com/fuseboxhq/fusebox/internal/config"
	"math"
	"slices"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// Result is what a run measured. Durations are in milliseconds, from the
// start of the run unless noted.
type Result struct {
	// Options are the run's settings, defaults filled.
	Options OptionsReport `json:"options"`
	// Policy is the blocks of Fusebox's alias (breaker, retry, timeouts…).
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
	Stream       bool     `json:"stream"`
	Continue     bool     `json:"continue_on_failure"`
	CommitAfter  int      `json:"commit_after,omitempty"`
	// Replicas is how many Fusebox gateways served its client; State
	// their state (memory, or the Redis URL, password hidden).
	Replicas int    `json:"replicas"`
	State    string `json:"state"`
	// ClientTimeoutMS bounds each request of every client, retries
	// included.
	ClientTimeoutMS float64 `json:"client_timeout_ms"`
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
	// HealthyLatency is the latency of the requests sent outside the
	// storm.
	HealthyLatency Percentiles `json:"healthy_latency_ms"`
	// TTFB is the time from a request's start (retries included) to the
	// first byte of the answer it got: the headers of a JSON answer, the
	// first event of a stream. Over the requests that succeeded; StormTTFB
	// over those of them sent during the storm.
	TTFB      Percentiles `json:"ttfb_ms"`
	StormTTFB Percentiles `json:"storm_ttfb_ms"`
	// HealthyTTFB is the same over those sent outside the storm.
	HealthyTTFB Percentiles `json:"healthy_ttfb_ms"`
	// PrimaryCalls counts the calls the primary received during the storm,
	// retries and probes included; PrimaryInputTokens the prompt tokens
	// they carried, and PrimaryBilledInputTokens those billed (answered
	// 200).
	PrimaryCalls             int64 `json:"storm_primary_calls"`
	PrimaryInputTokens       int64 `json:"storm_primary_input_tokens"`
	PrimaryBilledInputTokens int64 `json:"storm_primary_billed_input_tokens"`
	// SecondaryCalls counts the calls the secondary received during the
	// storm.
	SecondaryCalls int64 `json:"storm_secondary_calls"`
	// AfterOpen covers the storm from the first opening of Fusebox's
	// breaker on the primary; nil for the other clients, and when the
	// breaker did not open during the storm.
	AfterOpen *AfterOpen `json:"after_breaker_open,omitempty"`
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

// AfterOpen is what happened from the first opening of Fusebox's breaker
// on the primary during the storm to the storm's end.
type AfterOpen struct {
	// AtMS is when the breaker opened, since the start.
	AtMS float64 `json:"at_ms"`
	// Requests counts the requests sent from then to the storm's end.
	Requests int `json:"requests"`
	// PrimaryCalls counts the calls the primary received in that time,
	// probes included.
	PrimaryCalls int `json:"primary_calls"`
	// PrimaryEnded counts the calls the primary received from the storm's
	// start that had ended when the breaker opened: the attempts it took
	// to open it.
	PrimaryEnded int `json:"primary_calls_ended_before"`
}

// perRequest is the primary's calls per request.
func (a *AfterOpen) perRequest() float64 {
	return float64(a.PrimaryCalls) / float64(max(a.Requests, 1))
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
		Stream: o.Stream, Continue: o.Continue, CommitAfter: o.CommitAfter, ClientTimeoutMS: ms(o.clientTimeout),
		Replicas: o.Replicas, State: config.StateURL(o.State).String(),
	}
	switch o.Scenario {
	case LatencySpike, Slow:
		r.SpikeMS = ms(o.Spike)
	case Throttle:
		r.RetryAfterMS = ms(o.RetryAfter)
	}
	return r
}

// summarize computes client r's row.
func summarize(o Options, t0 time.Time, r *rig, st stormStats) Row {
	row := Row{Client: r.kind}
	var all, storm, healthy, ttfb, stormTTFB, healthyTTFB []float64
	pp, sp := prices(o.Scenario)
	for _, rec := range r.records {
		if rec.canceled {
			continue
		}
		l, in := ms(rec.latency), o.inStorm(rec.start)
		row.Requests++
		all = append(all, l)
		if rec.failed {
			row.Failed++
		}
		if in {
			row.StormRequests++
			storm = append(storm, l)
			if rec.failed {
				row.StormFailed++
			}
		} else {
			healthy = append(healthy, l)
		}
		if !rec.failed && rec.ttfb > 0 {
			ttfb = append(ttfb, ms(rec.ttfb))
			if in {
				stormTTFB = append(stormTTFB, ms(rec.ttfb))
			} else {
				healthyTTFB = append(healthyTTFB, ms(rec.ttfb))
			}
		}
		switch rec.served {
		case "primary":
			row.ServedPrimary++
			row.CostUSD += pp.cost(rec.usage)
		case "secondary":
			row.ServedSecondary++
			row.CostUSD += sp.cost(rec.usage)
		}
	}
	row.Latency, row.StormLatency, row.HealthyLatency = percentiles(all), percentiles(storm), percentiles(healthy)
	row.TTFB, row.StormTTFB, row.HealthyTTFB = percentiles(ttfb), percentiles(stormTTFB), percentiles(healthyTTFB)
	if row.StormRequests > 0 {
		row.StormFailure = float64(row.StormFailed) / float64(row.StormRequests)
	}
	d := stormDelta(st.atStart.primary, st.atEnd.primary, r.primary.sim)
	row.PrimaryCalls, row.PrimaryInputTokens, row.PrimaryBilledInputTokens = d.Calls, d.InputTokens, d.BilledInputTokens
	row.SecondaryCalls = stormDelta(st.atStart.secondary, st.atEnd.secondary, r.secondary.sim).Calls
	if d, ok := r.secondary.firstOK(t0.Add(o.StormStart)); ok {
		row.FailoverMS = ptr(ms(d))
	}
	if d, ok := r.primary.firstOK(t0.Add(o.stormEnd())); ok {
		row.RecoveryMS = ptr(ms(d))
	}
	row.Series = series(o, r.records)
	return row
}

// stormDelta is what a provider counted during the storm, from snapshots
// at its start and end; a run cut short counts up to now.
func stormDelta(atStart, atEnd sim.Stats, s *sim.Server) sim.Stats {
	if atEnd.Outcomes == nil {
		atEnd = s.Stats()
	}
	if atStart.Outcomes == nil {
		atStart = atEnd
	}
	return atEnd.Sub(atStart)
}

// afterOpen counts, from the first opening of the breaker during the storm
// (ts are its transitions) to the storm's end, the requests r sent and the
// calls its primary received; nil when the breaker did not open during
// the storm.
func afterOpen(o Options, t0 time.Time, r *rig, ts []Transition) *AfterOpen {
	for _, t := range ts {
		at := time.Duration(t.AtMS * float64(time.Millisecond))
		if t.To != "open" || !o.inStorm(at) {
			continue
		}
		a := &AfterOpen{AtMS: t.AtMS, PrimaryCalls: r.primary.callsIn(t0.Add(at), t0.Add(o.stormEnd())),
			PrimaryEnded: r.primary.endedBy(t0.Add(o.StormStart), t0.Add(at))}
		for _, rec := range r.records {
			if !rec.canceled && rec.start >= at && rec.start < o.stormEnd() {
				a.Requests++
			}
		}
		return a
	}
	return nil
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

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr[T any](v T) *T { return &v }
