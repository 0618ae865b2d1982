package config

import (
	"math"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/limit"
	"github.com/fuseboxhq/fusebox/retry"
)

// Settings returns the block as a breaker.Config, without a Name, Clock or
// callbacks: the gateway adds those. Zero fields keep breaker.Config's
// defaults.
func (b Breaker) Settings() breaker.Config {
	return breaker.Config{
		Window:              b.Window,
		Buckets:             b.Buckets,
		WindowCalls:         b.WindowCalls,
		MinCalls:            b.MinCalls,
		FailureThreshold:    b.FailureThreshold,
		FailureRate:         b.FailureRate,
		ConsecutiveFailures: b.Consecutive,
		SlowCallDuration:    b.SlowCall,
		SlowCallRate:        b.SlowCallRate,
		OpenDuration:        b.Open,
		OpenBackoff:         b.OpenBackoff,
		MaxOpenDuration:     b.MaxOpen,
		OpenJitter:          b.OpenJitter,
		HalfOpenProbes:      b.Probes,
		HalfOpenSuccesses:   b.ProbeSuccesses,
		HalfOpenMaxWait:     b.HalfOpenMaxWait,
	}
}

// breakerFields maps breaker.Config's field names to the YAML names of
// Breaker, to translate the library's validation errors.
var breakerFields = map[string]string{
	"Window":              "window",
	"Buckets":             "buckets",
	"WindowCalls":         "window_calls",
	"MinCalls":            "min_calls",
	"FailureThreshold":    "failure_threshold",
	"FailureRate":         "failure_rate",
	"ConsecutiveFailures": "consecutive",
	"SlowCallDuration":    "slow_call",
	"SlowCallRate":        "slow_call_rate",
	"OpenDuration":        "open",
	"OpenBackoff":         "open_backoff",
	"MaxOpenDuration":     "max_open",
	"OpenJitter":          "open_jitter",
	"HalfOpenProbes":      "probes",
	"HalfOpenSuccesses":   "probe_successes",
	"HalfOpenMaxWait":     "half_open_max_wait",
}

// Policy returns the block as a retry.Policy, without a Budget, Clock or
// callbacks: build the shared *retry.Budget from BudgetConfig and set it. Zero
// fields keep retry.Policy's defaults.
func (r Retry) Policy() retry.Policy {
	return retry.Policy{
		Attempts:   r.Attempts,
		Base:       r.Base,
		Max:        r.Max,
		Multiplier: r.Multiplier,
		MaxWait:    r.MaxWait,
	}
}

// BudgetConfig returns the block's retry budget as a retry.BudgetConfig,
// for retry.NewBudget. Zero fields keep its defaults.
func (r Retry) BudgetConfig() retry.BudgetConfig {
	return retry.BudgetConfig{Ratio: r.Budget, MinPerSecond: r.BudgetMinPerSecond}
}

// Pacer returns the rate limits as limit.PacerSettings, for limit.NewPacer.
// Bursts are one minute's worth, the library's default.
func (l Limits) Pacer() limit.PacerSettings {
	return limit.PacerSettings{
		Limits:  limit.Limits{RequestsPerMinute: float64(l.RPM), TokensPerMinute: float64(l.TPM)},
		MaxWait: l.MaxWait,
	}
}

// Bulkhead returns the concurrency limit as limit.BulkheadSettings, for
// limit.NewBulkhead.
func (l Limits) Bulkhead() limit.BulkheadSettings {
	return limit.BulkheadSettings{MaxInFlight: l.MaxInFlight, MaxWait: l.MaxWait}
}

// Settings returns the overrides as aierr.Overrides, for an
// aierr.Classifier. The maps are copies.
func (o Overrides) Settings() aierr.Overrides {
	var out aierr.Overrides
	if len(o.Status) > 0 {
		out.Status = make(map[int]aierr.Kind, len(o.Status))
		for k, v := range o.Status {
			out.Status[k] = v
		}
	}
	if len(o.Code) > 0 {
		out.Code = make(map[string]aierr.Kind, len(o.Code))
		for k, v := range o.Code {
			out.Code[k] = v
		}
	}
	return out
}

// Cost returns the price in US dollars of a call that used input prompt
// tokens, of which cached were read from the prompt cache, and output
// completion tokens.
func (p Price) Cost(input, cached, output int) float64 {
	cached = min(max(cached, 0), max(input, 0))
	fresh := max(input, 0) - cached
	usd := (float64(fresh)*p.Input + float64(cached)*p.CachedInput + float64(max(output, 0))*p.Output) / 1e6
	if math.IsNaN(usd) {
		return 0
	}
	return usd
}
