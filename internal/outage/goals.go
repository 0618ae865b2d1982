package outage

import (
	"fmt"
	"time"
)

// goalList collects checked goals.
type goalList []Goal

func (gs *goalList) add(name, want, got string, pass bool) {
	*gs = append(*gs, Goal{Name: name, Want: want, Got: got, Pass: pass})
}

// checkGoals checks Fusebox's row against the goals of the scenario.
func (r *Result) checkGoals(o Options) []Goal {
	fb, naive := r.row(Fusebox), r.row(Naive)
	if fb == nil || naive == nil {
		return nil
	}
	var gs goalList
	switch o.Scenario {
	case Outage, Throttle, LatencySpike:
		r.stormGoals(&gs, o, fb, naive)
	case Overload529:
		overloadGoals(&gs, fb)
	case Stall, Drip, Cut, HangHedge:
		r.silentGoals(&gs, o, fb)
	default:
		faultGoals(&gs, o, fb)
	}
	return gs
}

// stormGoals are the goals of the error, throttle and latency storms:
// (almost) no failures, failover within 100 ms, back on the primary after
// one open period and a probe, and few calls to the failing primary.
func (r *Result) stormGoals(gs *goalList, o Options, fb, naive *Row) {
	gs.add("client-visible failure during the storm", "≤ 0.1%", pct(fb.StormFailure), fb.StormFailure <= 0.001)
	gs.add("failover after the onset", "≤ 100 ms", fmtOptMS(fb.FailoverMS), fb.FailoverMS != nil && *fb.FailoverMS <= 100)
	wait, waitName := o.Open, "open"
	if o.Scenario == Throttle {
		wait, waitName = o.RetryAfter, "Retry-After"
	}
	probe := o.P99
	if o.Scenario == LatencySpike {
		probe += o.Spike // the last probe sent during the spike is slow
	}
	limit := ms(wait + probe)
	gs.add("back on the primary after the storm",
		fmt.Sprintf("≤ %s (%v %s + one probe, %v)", fmtMS(limit), wait, waitName, probe),
		fmtOptMS(fb.RecoveryMS), fb.RecoveryMS != nil && *fb.RecoveryMS <= limit)
	gs.add("calls to the failing target during the storm",
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
		gs.add("the breaker never opens on 429s", "0 openings", fmt.Sprint(opened), opened == 0)
	}
}

// faultGoals are the goals of the scenarios where the primary hangs,
// slows, flaps, drops [DONE] or resets: no failures; for hang and slow, a storm p99 within
// the wait Fusebox is configured to spend (ttfb, hedge delay) plus the
// healthy p99 and 100 ms; for hang and reset, few calls to the primary
// once the breaker is open; for slow, few extra calls from hedging.
func faultGoals(gs *goalList, o Options, fb *Row) {
	failureGoal(gs, fb, 0)
	healthy := fb.HealthyLatency.P99
	p99Goal := func(wait time.Duration, what string) {
		limit := ms(wait) + healthy + 100
		gs.add("p99 during the storm",
			fmt.Sprintf("≤ %s (%s %v + healthy p99 %s + 100 ms)", fmtMS(limit), what, wait, fmtMS(healthy)),
			fmtMS(fb.StormLatency.P99), fb.StormLatency.P99 <= limit)
	}
	switch o.Scenario {
	case Hang:
		p99Goal(fuseboxTTFB, "ttfb")
		breakerGoal(gs, fb)
	case Slow:
		p99Goal(hedgeAfter, "hedge after")
		extra := fb.PrimaryCalls + fb.SecondaryCalls - int64(fb.StormRequests)
		share := float64(extra) / float64(max(fb.StormRequests, 1))
		gs.add("extra upstream calls during the storm (hedges, retries)",
			fmt.Sprintf("≤ %s of requests", pct(hedgeBudget)),
			fmt.Sprintf("%s (%d calls to both providers for %d requests)", pct(share), fb.PrimaryCalls+fb.SecondaryCalls, fb.StormRequests),
			share <= hedgeBudget)
	case Reset:
		breakerGoal(gs, fb)
	}
}

// breakerGoal: once the breaker has opened, at most 0.05 calls per request
// reach the primary (probes).
func breakerGoal(gs *goalList, fb *Row) {
	name, want := "calls to the primary per request after the breaker opens", "≤ 0.05"
	a := fb.AfterOpen
	if a == nil {
		gs.add(name, want, "the breaker did not open during the storm", false)
		return
	}
	gs.add(name, want,
		fmt.Sprintf("%.3f (primary calls %d, requests %d, from %.2fs)", a.perRequest(), a.PrimaryCalls, a.Requests, a.AtMS/1000),
		a.perRequest() <= 0.05)
}

// overloadGoals are the goals of the cross-cloud 529 storm: no request
// fails, and the overloaded primary gets at most 0.05 calls per request
// sent during the storm (those that open the breaker, then its probes).
func overloadGoals(gs *goalList, fb *Row) {
	gs.add("client-visible failure during the storm", "0",
		fmt.Sprintf("%d (%s of %d)", fb.StormFailed, pct(fb.StormFailure), fb.StormRequests), fb.StormFailed == 0)
	perRequest := float64(fb.PrimaryCalls) / float64(max(fb.StormRequests, 1))
	gs.add("calls to the primary per request during the storm", "≤ 0.05",
		fmt.Sprintf("%.3f (primary calls %d, requests %d)", perRequest, fb.PrimaryCalls, fb.StormRequests),
		fb.StormRequests > 0 && perRequest <= 0.05)
}

// failureGoal: at most maxFail of the requests sent during the storm
// fail.
func failureGoal(gs *goalList, fb *Row, maxFail float64) {
	want := "0%"
	if maxFail > 0 {
		want = "≤ " + pct(maxFail)
	}
	gs.add("client-visible failure during the storm", want,
		fmt.Sprintf("%s (%d/%d)", pct(fb.StormFailure), fb.StormFailed, fb.StormRequests), fb.StormFailure <= maxFail)
}

// silentFailures is the share of the storm's requests a silent scenario
// may fail without continue_on_failure (with it: none): the streams
// already committed to the primary when it turns out slow or broken.
var silentFailures = map[Scenario]float64{Drip: 0.01, Stall: 0.02, Cut: 0.02}

// silentGoals are the goals of issue 28's slow, dripping and half-broken
// answers, Fusebox running examples/silent-failures.yaml's chat alias:
//   - failures: drip ≤ 1%, stall and cut ≤ 2% without continue_on_failure,
//     none with it; hang-hedge none;
//   - drip: the breaker opens during the storm, and the storm's time to
//     first token p99 is within the healthy one + ttfb + 100 ms;
//   - stall with continue_on_failure: storm p99 within the healthy p99 +
//     2 × suspect_after + 100 ms;
//   - cut: the breaker opens during the storm;
//   - hang-hedge: the breaker opens after at most `consecutive` ended
//     attempts on the primary, then at most 0.05 calls per request reach
//     it; storm p99 within the healthy p99 + the hedge delay + 100 ms;
//   - every one: back on the primary within the breaker's open + 1 s of
//     the storm's end.
func (r *Result) silentGoals(gs *goalList, o Options, fb *Row) {
	maxFail := silentFailures[o.Scenario]
	if o.Continue {
		maxFail = 0
	}
	failureGoal(gs, fb, maxFail)
	healthy := fb.HealthyLatency.P99
	switch o.Scenario {
	case Drip:
		r.openedGoal(gs, o)
		limit := ms(fuseboxTTFB) + fb.HealthyTTFB.P99 + 100
		gs.add("time to first token p99 during the storm",
			fmt.Sprintf("≤ %s (ttfb %v + healthy TTFB p99 %s + 100 ms)", fmtMS(limit), fuseboxTTFB, fmtMS(fb.HealthyTTFB.P99)),
			fmtMS(fb.StormTTFB.P99), fb.StormTTFB.P99 <= limit)
	case Stall:
		if o.Continue {
			limit := ms(2*silentSuspectAfter) + healthy + 100
			gs.add("p99 during the storm",
				fmt.Sprintf("≤ %s (2 × suspect_after %v + healthy p99 %s + 100 ms)", fmtMS(limit), silentSuspectAfter, fmtMS(healthy)),
				fmtMS(fb.StormLatency.P99), fb.StormLatency.P99 <= limit)
		}
	case Cut:
		r.openedGoal(gs, o)
	case HangHedge:
		name, want := "the breaker opens within `consecutive` attempts", fmt.Sprintf("≤ %d ended attempts on the primary", silentConsecutive)
		if a := fb.AfterOpen; a == nil {
			gs.add(name, want, "the breaker did not open during the storm", false)
		} else {
			gs.add(name, want, fmt.Sprintf("%d, opened at %.2fs", a.PrimaryEnded, a.AtMS/1000), a.PrimaryEnded <= silentConsecutive)
		}
		breakerGoal(gs, fb)
		limit := ms(hedgeAfter) + healthy + 100
		gs.add("p99 during the storm",
			fmt.Sprintf("≤ %s (hedge after %v + healthy p99 %s + 100 ms)", fmtMS(limit), hedgeAfter, fmtMS(healthy)),
			fmtMS(fb.StormLatency.P99), fb.StormLatency.P99 <= limit)
	}
	open := r.openAtStormEnd(o)
	limit := ms(open) + 1000
	want := fmt.Sprintf("≤ %s (open %v + 1 s)", fmtMS(limit), open)
	if open != o.Open {
		want = fmt.Sprintf("≤ %s (the open period in force at the storm's end, %v after open_backoff from %v, + 1 s)", fmtMS(limit), open, o.Open)
	}
	gs.add("back on the primary after the storm", want, fmtOptMS(fb.RecoveryMS), fb.RecoveryMS != nil && *fb.RecoveryMS <= limit)
}

// openAtStormEnd returns the open period of the primary's breaker in
// force when the storm ended: the length of the open period it was in,
// or last entered before then, as its transitions show (it grows with
// open_backoff after each failed probe); o.Open when it never opened.
func (r *Result) openAtStormEnd(o Options) time.Duration {
	end := float64(o.stormEnd().Milliseconds())
	open := o.Open
	for i, t := range r.Transitions {
		if t.To != "open" || t.AtMS > end {
			continue
		}
		for _, next := range r.Transitions[i+1:] {
			if next.From == "open" {
				open = time.Duration((next.AtMS - t.AtMS) * float64(time.Millisecond)).Round(100 * time.Millisecond)
				break
			}
		}
	}
	return max(open, o.Open)
}

// openedGoal: the primary's breaker opens during the storm.
func (r *Result) openedGoal(gs *goalList, o Options) {
	got := "stayed closed through the storm"
	for _, t := range r.Transitions {
		if at := time.Duration(t.AtMS * float64(time.Millisecond)); t.To == "open" && o.inStorm(at) {
			got = fmt.Sprintf("opened at %.2fs (%s)", t.AtMS/1000, t.Reason)
			break
		}
	}
	gs.add("the primary's breaker opens", "opens during the storm", got, got != "stayed closed through the storm")
}
