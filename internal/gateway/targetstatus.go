package gateway

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// statusTarget is one target in the status document.
type statusTarget struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// StateText says in words what the state means for requests now.
	StateText string    `json:"state_text"`
	Since     time.Time `json:"since"`
	// RetryAfterMS is the time to an open breaker's next probe; ProbeAt
	// when that is.
	RetryAfterMS int64      `json:"retry_after_ms"`
	ProbeAt      *time.Time `json:"probe_at,omitempty"`

	// The breaker's window and its rates, each with a line saying what
	// it counts and what it takes to open.
	WindowCalls     int64   `json:"window_calls"`
	WindowFailures  int64   `json:"window_failures"`
	WindowSlow      int64   `json:"window_slow"`
	FailureRate     float64 `json:"failure_rate"`
	FailureRateText string  `json:"failure_rate_text"`
	SlowCallRate    float64 `json:"slow_call_rate"`
	SlowCallText    string  `json:"slow_call_text"`
	Consecutive     int64   `json:"consecutive_failures"`

	Allowed   uint64 `json:"allowed"`
	Rejected  uint64 `json:"rejected"`
	Succeeded uint64 `json:"succeeded"`
	Failed    uint64 `json:"failed"`
	Ignored   uint64 `json:"ignored"`

	// Moving averages (the router's), kept for scripts that read them.
	LatencyMS float64 `json:"latency_ms"`
	TTFBMS    float64 `json:"ttfb_ms"`
	ErrorRate float64 `json:"error_rate"`

	// The last minute: latency and TTFB percentiles (0: no call),
	// requests and tokens per second.
	P50MS        float64 `json:"p50_ms"`
	P95MS        float64 `json:"p95_ms"`
	TTFBP50MS    float64 `json:"ttfb_p50_ms"`
	TTFBP95MS    float64 `json:"ttfb_p95_ms"`
	RequestsPerS float64 `json:"requests_per_s"`
	TokensPerS   float64 `json:"tokens_per_s"`
	// Since the gateway started.
	CostUSD   float64 `json:"cost_usd"`
	TokensIn  float64 `json:"tokens_in"`
	TokensOut float64 `json:"tokens_out"`

	// Limits: attempts under way and waiting against the provider's
	// max_in_flight, rpm and tpm (0: none).
	InFlight    int64 `json:"in_flight"`
	Queued      int   `json:"queued"`
	MaxInFlight int   `json:"max_in_flight"`
	RPM         int   `json:"rpm"`
	TPM         int   `json:"tpm"`
	// ThrottledUntil is when the provider's last Retry-After ends, while
	// it is honoured.
	ThrottledUntil *time.Time  `json:"throttled_until,omitempty"`
	Keys           []statusKey `json:"keys"`
}

// statusKey is a provider key as the dashboard shows it: its ID, never
// the key.
type statusKey struct {
	ID string `json:"id"`
	// State is "in rotation", "disabled" (by hand), "resting" (after a
	// throttle) or "refused" (after an auth or quota answer).
	State string `json:"state"`
	// Until is when a resting or refused key comes back by itself.
	Until     *time.Time `json:"until,omitempty"`
	RetryInMS int64      `json:"retry_in_ms"`
	// Reason is the answer that took it out, when known.
	Reason string `json:"reason,omitempty"`
}

// targetStatus describes t at now.
func (s *Server) targetStatus(st *state, t *router.Target, now time.Time, keys []statusKey) statusTarget {
	b, h := t.Breaker().Snapshot(), t.Health()
	cfg := breakerConfig(st.cfg, t)
	lim := st.cfg.Providers[t.Provider].Limits
	ts := statusTarget{
		Name: t.Name, State: b.State.String(), Provider: t.Provider, Model: t.Model,
		StateText: stateText(b), Since: b.Since, RetryAfterMS: b.RetryAfter.Milliseconds(), ProbeAt: until(b.OpenUntil),
		WindowCalls: b.Calls, WindowFailures: b.Failures, WindowSlow: b.SlowCalls,
		FailureRate: b.FailureRate, FailureRateText: failureText(cfg, b),
		SlowCallRate: b.SlowCallRate, SlowCallText: slowText(cfg, b), Consecutive: b.ConsecutiveFailures,
		Allowed: b.Totals.Allowed, Rejected: b.Totals.Rejected, Succeeded: b.Totals.Succeeded,
		Failed: b.Totals.Failed, Ignored: b.Totals.Ignored,
		LatencyMS: float64(h.Latency) / 1e6, TTFBMS: float64(h.TTFB) / 1e6, ErrorRate: h.ErrorRate,
		InFlight: t.InFlight(), Queued: t.Queued(), MaxInFlight: lim.MaxInFlight, RPM: lim.RPM, TPM: lim.TPM,
		ThrottledUntil: until(s.dash.throttleUntil(t.Name, now)), Keys: []statusKey{},
	}
	cur := s.readingOf(t, now)
	ts.CostUSD, ts.TokensIn, ts.TokensOut = cur.cost, cur.tokensIn, cur.tokensOut
	if from, ok := s.dash.hist.since(t.Name); ok && cur.at.After(from.at) {
		secs := cur.at.Sub(from.at).Seconds()
		d, f := cur.dur.Sub(from.dur), cur.ttfb.Sub(from.ttfb)
		ts.P50MS, ts.P95MS = ms(d.Quantile(0.5)), ms(d.Quantile(0.95))
		ts.TTFBP50MS, ts.TTFBP95MS = ms(f.Quantile(0.5)), ms(f.Quantile(0.95))
		ts.RequestsPerS = round2(float64(delta(cur.calls, from.calls)) / secs)
		ts.TokensPerS = round2(fdelta(cur.tokens, from.tokens) / secs)
	}
	for _, k := range keys {
		if strings.HasPrefix(k.ID, t.Provider+"#") || strings.HasPrefix(k.ID, t.Name+"#") {
			ts.Keys = append(ts.Keys, k)
		}
	}
	return ts
}

// readingOf reads t's cumulative counters at now.
func (s *Server) readingOf(t *router.Target, now time.Time) reading {
	b := t.Breaker().Snapshot()
	f := s.metrics.Target(t)
	return reading{name: t.Name, state: b.State.String(), at: now,
		calls:  b.Totals.Succeeded + b.Totals.Failed + b.Totals.Ignored + b.Totals.Dropped,
		failed: b.Totals.Failed, rejected: b.Totals.Rejected,
		tokens: f.TokensIn + f.TokensOut, tokensIn: f.TokensIn, tokensOut: f.TokensOut, cost: f.CostUSD, dur: f.Duration, ttfb: f.TTFB,
		inFlight: t.InFlight(), queued: t.Queued()}
}

// readings reads every target, for the history.
func (s *Server) readings(now time.Time) []reading {
	ts := ladderOrder(s.Router())
	out := make([]reading, 0, len(ts))
	for _, t := range ts {
		out = append(out, s.readingOf(t, now))
	}
	return out
}

// breakerConfig returns the breaker settings of t: those of the first
// alias in the configuration that lists it, or the defaults for a
// provider/model target.
func breakerConfig(cfg *config.Config, t *router.Target) breaker.Config {
	for _, m := range cfg.Models {
		for _, x := range m.Targets {
			if x.Provider+"/"+x.Model == t.Name {
				return m.Breaker.Settings()
			}
		}
	}
	return cfg.Defaults.Breaker.Settings()
}

// stateText says what a breaker's state means for requests.
func stateText(b breaker.Snapshot) string {
	switch b.State {
	case breaker.StateClosed:
		return "closed: calls pass"
	case breaker.StateOpen:
		// The time to the next probe is probe_at, which the dashboard
		// counts down beside this text: one clock, not two.
		return "open: calls are refused and go to the next target"
	case breaker.StateHalfOpen:
		return fmt.Sprintf("half-open: probing, %d probe(s) admitted, %d succeeded", b.Probes, b.ProbeSuccesses)
	case breaker.StateForcedOpen:
		return "forced open by an operator: every call is refused until reset"
	case breaker.StateForcedClosed:
		return "forced closed by an operator: every call passes, failures do not open it"
	case breaker.StateDisabled:
		return "disabled: the breaker neither counts nor refuses"
	}
	return b.State.String()
}

// window describes a breaker's window in words.
func window(c breaker.Config) string {
	switch {
	case c.Window > 0:
		return "the last " + c.Window.String()
	case c.WindowCalls > 0:
		return fmt.Sprintf("the last %d calls", c.WindowCalls)
	}
	return ""
}

// failureText explains the failure rate: what it counts and what opens
// the breaker.
func failureText(c breaker.Config, b breaker.Snapshot) string {
	var rules []string
	if c.FailureRate > 0 {
		rules = append(rules, fmt.Sprintf("at %s once %d calls are in the window", pct(c.FailureRate), max(c.MinCalls, 1)))
	}
	if c.FailureThreshold > 0 {
		rules = append(rules, fmt.Sprintf("at %d failures in the window", c.FailureThreshold))
	}
	consec := c.ConsecutiveFailures
	if consec == 0 && c.FailureRate == 0 && c.FailureThreshold == 0 && c.SlowCallRate == 0 {
		consec = 5 // the gateway's default rule
	}
	if consec > 0 {
		rules = append(rules, fmt.Sprintf("after %d failures in a row (now %d)", consec, b.ConsecutiveFailures))
	}
	text := "No window: the breaker counts failures in a row only."
	if w := window(c); w != "" {
		text = fmt.Sprintf("Outages among the calls of %s: %d of %d.", w, b.Failures, b.Calls)
	}
	return text + " Opens " + strings.Join(rules, ", or ") + ". Throttles and client errors do not count."
}

// slowText explains the slow-call rate.
func slowText(c breaker.Config, b breaker.Snapshot) string {
	if c.SlowCallDuration <= 0 {
		return "No slow-call rule: slow answers do not open this breaker."
	}
	text := fmt.Sprintf("Calls slower than %s among the calls of %s: %d of %d.", c.SlowCallDuration, window(c), b.SlowCalls, b.Calls)
	if c.SlowCallRate > 0 {
		text += fmt.Sprintf(" Opens at %s once %d calls are in the window, even if they succeed.", pct(c.SlowCallRate), max(c.MinCalls, 1))
	}
	return text
}

func pct(x float64) string { return fmt.Sprintf("%g%%", math.Round(x*1000)/10) }

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// keysOf describes the router's keys, with the reason each refused one
// was taken out.
func keysOf(ks []router.KeyState, now time.Time, reasons map[string]string) []statusKey {
	out := make([]statusKey, 0, len(ks))
	for _, k := range ks {
		sk := statusKey{ID: k.ID, State: k.State, RetryInMS: k.RetryIn.Milliseconds()}
		if k.RetryIn > 0 {
			sk.Until = until(now.Add(k.RetryIn))
		}
		switch k.State {
		case "refused":
			sk.Reason = reasons[k.ID]
		case "resting":
			sk.Reason = "throttled: resting as the provider asked"
		case "disabled":
			sk.Reason = "taken out by an operator"
		}
		out = append(out, sk)
	}
	return out
}

// keyReasons returns, per key ID, the reason of its latest refusal in the
// timeline.
func (s *Server) keyReasons() map[string]string {
	out := map[string]string{}
	for _, e := range s.dash.timeline.recent() { // newest first
		if e.Kind == "key" && e.To == "out of rotation" {
			if _, ok := out[e.Key]; !ok {
				out[e.Key] = e.Reason
			}
		}
	}
	return out
}
