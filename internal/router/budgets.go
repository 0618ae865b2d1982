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
		SuspectAfter: cmp.Or(b.SuspectAfter, d.SuspectAfter),
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

// autoCache holds a target's adaptive first-content budgets (0: none yet,
// use the ceiling) and when they were computed (stopwatch ns).
type autoCache struct {
	stream, plain     atomic.Int64
	streamAt, plainAt atomic.Int64
}

// ttfb returns the adaptive first-content budget of t, at most ceiling.
func (c *autoCache) ttfb(t *Target, stream bool, ceiling time.Duration, now int64) time.Duration {
	v, at := &c.plain, &c.plainAt
	if stream {
		v, at = &c.stream, &c.streamAt
	}
	now++ // 0 is "never computed"
	if last := at.Load(); (last == 0 || now-last > int64(autoRefresh)) && at.CompareAndSwap(last, now) {
		p99, n := t.firsts(stream).Quantile(0.99)
		d := time.Duration(0)
		if n >= autoMinSamples {
			d = max(autoFloor, autoFactor*p99)
		}
		v.Store(int64(d))
	}
	if d := time.Duration(v.Load()); d > 0 {
		return min(d, ceiling)
	}
	return ceiling
}

// suspect reports whether t's streams have all gone silent for longer
// than the alias's suspicion threshold.
func (a *Alias) suspect(t *Target, now int64) bool {
	if t.streams.Load() == 0 {
		return false
	}
	after := a.of(t).SuspectAfter
	return after > 0 && now-t.lastEvent.Load() > int64(after)
}
