package router

import (
	"cmp"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
)

// or returns b with its zero fields taken from d.
func (b Budgets) or(d Budgets) Budgets {
	return Budgets{
		TTFB: cmp.Or(b.TTFB, d.TTFB), Idle: cmp.Or(b.Idle, d.Idle), Total: cmp.Or(b.Total, d.Total),
		AutoTTFB: b.AutoTTFB || d.AutoTTFB, AutoIdle: b.AutoIdle || d.AutoIdle,
		SuspectAfter: cmp.Or(b.SuspectAfter, d.SuspectAfter), AutoSuspect: b.AutoSuspect || (b.SuspectAfter == 0 && d.AutoSuspect),
		MinRate: cmp.Or(b.MinRate, d.MinRate), AutoRate: b.AutoRate || d.AutoRate,
		CommitAfter: cmp.Or(b.CommitAfter, d.CommitAfter),
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
	stream, plain, gap, pace autoValue
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
// of its mature streams has gone silent, it keeps needing hedges without
// producing a first content, or it turned suspect so and has not
// recovered since (see Target.suspected). While suspect, one request per
// let-through period still goes to it, so that its recovery is seen; the
// period follows its breaker's open period, growth and cap. A target
// whose alias probes in the background lets no client request through:
// a background probe is sent instead.
func (a *Alias) suspect(t *Target, now int64) bool {
	if a.of(t).SuspectAfter <= 0 {
		return false
	}
	silent := t.silent.Load()
	if !(silent > 0 && silent >= t.mature.Load()) && t.hedged.Load() < hedgedSuspect && !t.suspected.Load() {
		return false
	}
	if t.background {
		return true
	}
	at := t.probeAt.Load()
	if now < at {
		return true
	}
	// Let this one through; the next a grown period later.
	gap := t.probeGap.Load()
	if !t.probeAt.CompareAndSwap(at, now+gap) {
		return true
	}
	t.probeGap.Store(int64(t.grow(time.Duration(gap))))
	return false
}

// grow returns the let-through period after gap: grown by the breaker's
// open backoff, at most its max open period.
func (t *Target) grow(gap time.Duration) time.Duration {
	if t.openBackoff > 1 {
		gap = time.Duration(float64(gap) * t.openBackoff)
	}
	return min(gap, t.maxOpen)
}

// maxOpenPeriod is the cap of the open period of a breaker built from c.
func maxOpenPeriod(c breaker.Config) time.Duration {
	if c.MaxOpenDuration > 0 {
		return c.MaxOpenDuration
	}
	return 10 * openPeriod(c)
}
