package router

import (
	"context"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
)

// Hedging: when the alias hedges and the first target has not produced its
// first content within the hedge delay, the request goes to the next
// target too, and the first attempt to produce content wins; the others
// are canceled. A loser that a later attempt beat is reported as a
// first-byte timeout (the silence that sent the hedge is its target's
// failure, so a hung target's breaker opens under hedging too); one sent
// after the winner (a hedge the first target beat) is canceled, which its
// target does not count.
// Hedges are bounded per request (Hedge.Max) and by the alias's hedge
// budget, a fraction of its recent requests, so that a slow provider cannot
// double the bill. Each attempt carries its own idempotency key.

// hedging reports whether this walk may hedge from its current target.
func (w *Walk) hedging() bool {
	return w.alias.hedges != nil && w.i < len(w.order)-1
}

// hedgeDelay returns how long to wait for t's first content before
// hedging: fixed, or t's recent quantile of it.
func (w *Walk) hedgeDelay(t *Target) time.Duration {
	h := w.alias.spec.Hedge
	if h.AfterQuantile > 0 {
		if d, n := t.firsts(w.req.Stream).Quantile(h.AfterQuantile); n >= autoMinSamples && d > 0 {
			return d
		}
		if h.After > 0 {
			return h.After
		}
		return time.Second
	}
	return h.After
}

// racer is an attempt of a race and how it ended.
type racer struct {
	a   *Attempt
	err error
}

// race tries t, hedged; see attempt.
func (w *Walk) race(ctx context.Context, t *Target) (*Attempt, bool) {
	first := w.admit(ctx, t)
	if first == nil {
		return nil, false
	}
	results := make(chan racer, 1+max(w.alias.spec.Hedge.Max, 1))
	running := []*Attempt{first}
	w.run(ctx, first, results)
	timer := w.r.clk.NewTimer(w.hedgeDelay(t))
	defer timer.Stop()
	hedges := 0
	var failed *Attempt
	for len(running) > 0 {
		select {
		case r := <-results:
			running = remove(running, r.a)
			if r.err == nil {
				w.cancelLosers(r.a, running, results)
				if r.a != first {
					r.a.HedgeWait = time.Duration(r.a.started - first.started)
					w.HedgeWait += r.a.HedgeWait
				}
				return r.a, true
			}
			if hedges == 0 {
				w.after(r.a) // no race yet: the walk goes on as usual
				return r.a, false
			}
			failed = r.a
			w.addSkip(r.a.Target, describe(r.a.Verdict))
		case <-timer.C():
			if hedges >= max(w.alias.spec.Hedge.Max, 1) || !w.canHedge() || !w.alias.hedges.TryRetry() {
				continue
			}
			if h := w.hedge(ctx); h != nil {
				w.slow(running[len(running)-1].Target)
				hedges++
				running = append(running, h)
				w.run(ctx, h, results)
				timer.Reset(w.hedgeDelay(h.Target))
			}
		}
	}
	// Every attempt of the race failed: the walk goes on from the last
	// target raced, as that attempt's verdict says.
	w.Skips = w.Skips[:len(w.Skips)-1] // after adds it again
	w.after(failed)
	return failed, false
}

// hedge admits an attempt on the next target that can take one, moving
// the walk there; nil, the walk left where it was, when none can.
func (w *Walk) hedge(ctx context.Context) *Attempt {
	i, n := w.i, w.n
	for w.i < len(w.order)-1 {
		w.failover()
		if a := w.admit(ctx, w.order[w.i]); a != nil {
			a.hedge = true
			w.idemGen++ // a key of its own
			return a
		}
		w.i-- // admit skipped it and moved on: undo, the loop moves
	}
	w.i, w.n = i, n // none: the walk stays on the target racing
	return nil
}

// slow notes that t had to be hedged: it produced no first content within
// the hedge delay. A target hedged twice in a row without producing one
// meanwhile is suspect.
func (w *Walk) slow(t *Target) {
	if t.hedged.Add(1) == hedgedSuspect && w.alias.of(t).SuspectAfter > 0 {
		w.r.turnSuspect(t)
	}
}

// canHedge reports whether a target after the walk's current one may take
// a hedge (a usable key, a breaker not open), so that no hedge budget is
// spent on a hedge that cannot be sent.
func (w *Walk) canHedge() bool {
	now := w.r.now()
	for _, t := range w.order[w.i+1:] {
		if k, _ := t.pickKey(now); k != nil && t.breaker.State() != breaker.StateOpen {
			return true
		}
	}
	return false
}

// run sends a racer on its own goroutine.
func (w *Walk) run(ctx context.Context, a *Attempt, results chan<- racer) {
	call := w.begin(ctx, a)
	go func() { results <- racer{a: a, err: w.exchange(ctx, a, call)} }()
}

// cancelLosers cancels the attempts still running after a race was won
// and cleans up after them as they end. Their cost is unknown, so they are
// listed in Walk.Lost for the caller to account for.
func (w *Walk) cancelLosers(won *Attempt, running []*Attempt, results <-chan racer) {
	if len(running) == 0 {
		return
	}
	for _, a := range running {
		a.lost.Store(true)
		w.Lost = append(w.Lost, a.Target)
		if v, over := w.outrun(a, won); over {
			a.outrun.Store(&v) // its silence sent the hedge: its target hears of it
		}
		a.cancel(errLostRace)
	}
	go func(n int) {
		for range n {
			r := <-results
			if r.err == nil { // answered just as it lost
				r.a.Resp.Body.Close()
				r.a.finish(aierr.Verdict{Kind: aierr.Canceled})
			}
		}
	}(len(running))
}

// outrun returns the verdict of a race's loser that a later attempt beat:
// its silence sent that hedge, so it is reported as a first-byte timeout
// at the hedge delay, and a target that hangs opens its breaker under
// hedging as it does without. A loser sent after the winner (a hedge the
// first target beat) only lost: it is canceled.
func (w *Walk) outrun(a, won *Attempt) (aierr.Verdict, bool) {
	if v, over := a.watch.overdue(); over {
		return v, true
	}
	if a.firstAt.Load() != 0 || won.started <= a.started {
		return aierr.Verdict{}, false
	}
	d := time.Duration(won.started - a.started)
	return aierr.Verdict{Kind: aierr.Outage, Sub: aierr.FirstByteTimeout, Code: aierr.CodeFirstByteTimeout,
		Message: "no first content within the hedge delay (" + d.String() + "); another target answered first"}, true
}

// errLostRace is the cause of a hedged attempt canceled because another won.
var errLostRace = context.Canceled

func remove(s []*Attempt, a *Attempt) []*Attempt {
	for i, x := range s {
		if x == a {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}
