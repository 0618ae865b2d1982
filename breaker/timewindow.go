package breaker

import (
	"sync"
	"sync/atomic"
)

// timeWindow counts outcomes of the last len nanoseconds in buckets of width
// nanoseconds. Bucket e holds the outcomes recorded in [e·width, (e+1)·width);
// the window at now is the buckets e with cur-n < e <= cur, cur = now/width.
//
// Buckets are striped like the totals so parallel callers write to their own
// cache lines: recording is a few uncontended atomic adds, and a bucket is
// recycled, under its stripe's lock, the first time a call lands in it after
// it has expired. Reading sums stripes × buckets, which happens only while
// the window may hold a failure or a slow call (badUntil): a healthy
// breaker's successes never pay for it.
type timeWindow struct {
	width int64 // bucket width, ns
	n     int64 // buckets per stripe
	span  int64 // n·width
	// buckets holds stripe s's bucket b at s*stride+b.
	buckets []bucket
	stride  int64
	mask    int
	// rotate[s] guards the recycling of stripe s's buckets.
	rotate []sync.Mutex
	// badUntil is the time until which the window may hold a failure or a
	// slow call.
	badUntil atomic.Int64
}

// bucket is half a cache line: the epoch it holds and its counts.
type bucket struct {
	epoch                  atomic.Int64
	calls, failures, slows atomic.Int64
}

func newTimeWindow(span int64, n int) *timeWindow {
	s := stripes()
	stride := int64(n + n%2) // whole cache lines per stripe
	w := &timeWindow{
		width:   span / int64(n),
		n:       int64(n),
		buckets: make([]bucket, int64(s)*stride),
		stride:  stride,
		mask:    s - 1,
		rotate:  make([]sync.Mutex, s),
	}
	w.span = w.width * w.n
	w.reset()
	return w
}

func (w *timeWindow) reset() {
	for i := range w.rotate {
		w.rotate[i].Lock()
	}
	for i := range w.buckets {
		b := &w.buckets[i]
		b.epoch.Store(-1 << 62)
		b.calls.Store(0)
		b.failures.Store(0)
		b.slows.Store(0)
	}
	w.badUntil.Store(0)
	for i := range w.rotate {
		w.rotate[i].Unlock()
	}
}

func (w *timeWindow) record(now int64, failed, slow bool) (counts, bool) {
	cur := now / w.width
	s := stripe(w.mask)
	b := &w.buckets[int64(s)*w.stride+cur%w.n]
	if e := b.epoch.Load(); e != cur {
		if e > cur {
			// The bucket already holds a later epoch: this outcome is
			// older than the whole window. It counts for nothing.
			return counts{}, false
		}
		w.recycle(s, b, cur)
	}
	b.calls.Add(1)
	if failed || slow {
		if failed {
			b.failures.Add(1)
		}
		if slow {
			b.slows.Add(1)
		}
		until := now + w.span
		for {
			old := w.badUntil.Load()
			if old >= until || w.badUntil.CompareAndSwap(old, until) {
				break
			}
		}
	} else if now >= w.badUntil.Load() {
		return counts{}, false
	}
	return w.counts(now), true
}

// recycle makes b hold epoch cur, empty. Counts are cleared before the epoch
// is published, so an adder that sees the new epoch adds to a clean bucket.
func (w *timeWindow) recycle(s int, b *bucket, cur int64) {
	w.rotate[s].Lock()
	defer w.rotate[s].Unlock()
	if b.epoch.Load() >= cur {
		return
	}
	b.calls.Store(0)
	b.failures.Store(0)
	b.slows.Store(0)
	b.epoch.Store(cur)
}

func (w *timeWindow) counts(now int64) counts {
	cur := now / w.width
	var c counts
	for i := range w.buckets {
		b := &w.buckets[i]
		if e := b.epoch.Load(); e <= cur && e > cur-w.n {
			c.calls += b.calls.Load()
			c.failures += b.failures.Load()
			c.slow += b.slows.Load()
		}
	}
	return c
}
