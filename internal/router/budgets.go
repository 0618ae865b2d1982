package router

import (
	"cmp"
	"sync/atomic"
	"time"
)

// or returns b with its zero fields taken from d.
func (b Budgets) or(d Budgets) Budgets {
	return Budgets{
		TTFB: cmp.Or(b.TTFB, d.TTFB), Idle: cmp.Or(b.Idle, d.Idle), Total: cmp.Or(b.Total, d.Total),
		AutoTTFB: b.AutoTTFB || d.AutoTTFB, AutoIdle: b.AutoIdle || d.AutoIdle,
		SuspectAfter: cmp.Or(b.SuspectAfter, d.SuspectAfter), AutoSuspect: b.AutoSuspect || (b.SuspectAfter == 0 && d.AutoSuspect),
	}
}

// of returns the budgets of the alias's target t.
func (a *Alias) of(t *Target) Budgets {
	for i, x := range a.Targets {
		if x == t {
			return a.rungs[i]
		}
	}
	return a.spec.Budgets
}

// StreamBudgets returns the TTFB and idle budgets of a streamed attempt on
// t as they stand at now (ns on the router's stopwatch; adaptive budgets
// follow t's recent answers); 0 means none.
func (a *Alias) StreamBudgets(t *Target, now int64) (ttfb, idle time.Duration) {
	ttfb, idle, _ = a.budgets(t, true, now)
	return ttfb, idle
}

// budgets returns the TTFB, idle and total budgets of an attempt on t.
func (a *Alias) budgets(t *Target, stream bool, now int64) (ttfb, idle, total time.Duration) {
	b := a.of(t)
	ttfb, idle = b.TTFB, b.Idle
	if b.AutoTTFB && ttfb > 0 {
		ttfb = t.auto.ttfb(t, stream, ttfb, now)
	}
	if b.AutoIdle && idle > 0 {
		// Chunks come far closer together than first content; without a
		// distribution of gaps, the stream's own TTFB budget bounds them.
		idle = min(idle, max(autoFloor, t.auto.ttfb(t, true, idle, now)))
	}
	return ttfb, idle, b.Total
}

// The adaptive budgets: max(autoFloor, autoFactor × p99) of the target's
// last minutes, once it has autoMinSamples answers, never above the
// configured ceiling; recomputed at most every autoRefresh.
const (
	autoFloor      = time.Second
	autoFactor     = 3
	autoMinSamples = 20
	autoRefresh    = time.Second
)

// autoCache holds a target's adaptive budgets (0: none yet, use the
// ceiling) and when they were computed (stopwatch ns).
type autoCache struct {
	stream, plain, gap autoValue
}

// autoValue is one adaptive budget, recomputed at most every autoRefresh.
type autoValue struct{ v, at atomic.Int64 }

// get returns the cached value, computing it anew with f when it is older
// than autoRefresh; 0 means unknown.
func (c *autoValue) get(now int64, f func() time.Duration) time.Duration {
	now++ // 0 is "never computed"
	if last := c.at.Load(); (last == 0 || now-last > int64(autoRefresh)) && c.at.CompareAndSwap(last, now) {
		c.v.Store(int64(f()))
	}
	return time.Duration(c.v.Load())
}

// ttfb returns the adaptive first-content budget of t, at most ceiling.
func (c *autoCache) ttfb(t *Target, stream bool, ceiling time.Duration, now int64) time.Duration {
	v := &c.plain
	if stream {
		v = &c.stream
	}
	d := v.get(now, func() time.Duration {
		if p99, n := t.firsts(stream).Quantile(0.99); n >= autoMinSamples {
			return max(autoFloor, autoFactor*p99)
		}
		return 0
	})
	if d > 0 {
		return min(d, ceiling)
	}
	return ceiling
}

// The adaptive suspicion threshold: suspectFactor × the target's recent
// p99 gap between chunks, at least suspectFloor.
const (
	suspectFactor = 4
	suspectFloor  = 250 * time.Millisecond
)

// suspectAfter returns the suspicion threshold of streams on t.
func (a *Alias) suspectAfter(t *Target, now int64) time.Duration {
	b := a.of(t)
	if !b.AutoSuspect || b.SuspectAfter <= 0 {
		return b.SuspectAfter
	}
	d := t.auto.gap.get(now, func() time.Duration {
		if p99, n := t.gaps.Quantile(0.99); n >= autoMinSamples {
			return max(suspectFloor, suspectFactor*p99)
		}
		return 0
	})
	if d > 0 {
		return min(d, b.SuspectAfter)
	}
	return b.SuspectAfter
}

// hedgedSuspect is how many times in a row a target is hedged (no first
// content within the hedge delay) without producing a first content
// meanwhile before it is suspect.
const hedgedSuspect = 2

// suspect reports whether new requests should skip t for now: every one
// of its mature streams has gone silent, or it keeps needing hedges
// without producing a first content. Suspicion does not trip the breaker: its watchdogs
// do that when the budgets run out. One request per suspect_after still
// goes to a suspect target, so that its recovery is seen.
func (a *Alias) suspect(t *Target, now int64) bool {
	if a.of(t).SuspectAfter <= 0 {
		return false
	}
	silent := t.silent.Load()
	if !(silent > 0 && silent >= t.mature.Load()) && t.hedged.Load() < hedgedSuspect {
		return false
	}
	at := t.probeAt.Load()
	if now < at {
		return true
	}
	// Let this one through; the next after twice as long.
	gap := t.probeGap.Load()
	if !t.probeAt.CompareAndSwap(at, now+gap) {
		return true
	}
	t.probeGap.Store(min(2*gap, maxProbeGap))
	return false
}

// maxProbeGap bounds the time between two requests let through to a
// suspect target.
const maxProbeGap = int64(8 * time.Second)

// beginSuspicion starts the probes of a target that may have become
// suspect for a silence of after: the first request let through comes
// after twice that, and at least a second.
func (t *Target) beginSuspicion(now int64, after time.Duration) {
	gap := max(2*after, minProbeGap)
	t.probeGap.Store(int64(gap))
	t.probeAt.Store(now + int64(gap))
}

// minProbeGap is the least time between two requests let through to a
// suspect target.
const minProbeGap = time.Second
