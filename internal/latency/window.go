package latency

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

const (
	defaultSpan  = 2 * time.Minute
	defaultSlots = 6
	// never is the period of a slot that has not been used: older than
	// any window, and empty.
	never = -1 << 62
	// resetting is the period of a slot whose counts are being cleared. It
	// is below every period, so readers skip the slot.
	resetting = math.MinInt64
)

// Settings configure a Window. Zero fields mean the defaults documented on
// them.
type Settings struct {
	// Span is how far back the window sees. 0 (or less): 2 minutes.
	Span time.Duration
	// Slots is how many sub-windows Span is cut into; the window slides a
	// slot at a time. 0 (or less): 6. Each slot costs about 630 bytes.
	// At most one slot per nanosecond of Span is used.
	Slots int
	// Clock reads time; nil: the system clock.
	Clock clock.Clock
}

// Window is a time-decaying histogram of durations: what a target's last
// few minutes looked like. Observe is lock-free (atomics only, no
// allocation); Quantile is cheap enough to call per request. Safe for
// concurrent use.
//
// Time inside a Window is nanoseconds since New on a clock.Stopwatch. Slot
// i of n holds the samples of one period (time / slot length) p with
// p mod n = i; the window at time now is the slots whose period is one of
// the n up to and including now's. When a slot is reused for a new period,
// samples observed concurrently with its reset may be lost (or briefly
// counted in the wrong period); that is the only inexactness under
// concurrency.
type Window struct {
	sw      clock.Stopwatch
	slotLen int64 // nanoseconds
	slots   []slot
}

// slot counts the samples of one period. period is read by every Observe;
// the buckets that can share its cache line hold durations of a few
// milliseconds, rare for an AI upstream, so it is not padded.
type slot struct {
	period atomic.Int64
	counts [nBuckets]atomic.Uint32
}

// New returns an empty Window with settings s.
func New(s Settings) *Window {
	span, n := s.Span, s.Slots
	if span <= 0 {
		span = defaultSpan
	}
	if n <= 0 {
		n = defaultSlots
	}
	n = int(min(int64(n), int64(span))) // slots at least 1ns long
	w := &Window{
		sw:      clock.NewStopwatch(s.Clock),
		slotLen: int64(span) / int64(n),
		slots:   make([]slot, n),
	}
	for i := range w.slots {
		w.slots[i].period.Store(never)
	}
	return w
}

// Observe records one duration (negative counts as 0).
func (w *Window) Observe(d time.Duration) { w.observeAt(w.now(), d) }

// Quantile returns the q-quantile (0<q<=1) of the durations observed within
// Span, and how many there were. With none it returns 0, 0.
//
// The quantile is the nearest rank: the smallest observed duration with at
// least q·n of the n observed at or below it, reported as its bucket's
// midpoint (see the package doc for the error). A q of 0 or less (or NaN)
// gives the smallest duration, a q above 1 the largest.
func (w *Window) Quantile(q float64) (time.Duration, int) {
	return w.quantileAt(w.now(), q)
}

// Count returns how many durations the window holds now.
func (w *Window) Count() int { return int(w.countAt(w.now())) }

// now reads the clock: nanoseconds since New.
func (w *Window) now() int64 { return max(int64(w.sw.Elapsed()), 0) }

func (w *Window) observeAt(now int64, d time.Duration) {
	p := now / w.slotLen
	s := &w.slots[p%int64(len(w.slots))]
	if s.claim(p) {
		s.counts[bucketOf(d)].Add(1)
	}
}

// claim makes s hold period p, resetting it if it holds an older one, and
// reports whether a sample of period p may be counted in s: false when s
// already holds a later period, so the sample is older than the window.
//
// A reset swaps the period to resetting with a CAS, so one caller wins,
// clears the counts and then stores p; a never-used slot is empty and is
// claimed with a plain CAS. Callers that arrive during a clear count their
// sample anyway rather than wait: if the clear has not reached its bucket
// yet, the sample is lost (and if the clearer read the clock before them,
// the sample sits in the older period until the slot is next claimed). So
// the race can lose or misfile the few samples that land during a clear at
// a slot boundary; counts never wrap, and readers skip a slot being
// cleared.
func (s *slot) claim(p int64) bool {
	for {
		got := s.period.Load()
		switch {
		case got == p || got == resetting:
			return true
		case got > p:
			return false
		case got == never:
			// Never used, so already empty: claim it without a clear.
			if s.period.CompareAndSwap(never, p) {
				return true
			}
		case s.period.CompareAndSwap(got, resetting):
			for i := range s.counts {
				s.counts[i].Store(0)
			}
			s.period.Store(p)
			return true
		}
	}
}

// inWindow reports whether a slot holding period p is in the window whose
// newest period is cur.
func (w *Window) inWindow(p, cur int64) bool {
	return p <= cur && p > cur-int64(len(w.slots))
}

func (w *Window) quantileAt(now int64, q float64) (time.Duration, int) {
	var h histogram
	n := w.sumAt(now, &h)
	if n == 0 {
		return 0, 0
	}
	return h.quantile(q, n), int(n)
}

// sumAt adds the window's counts at now into h and returns their total.
func (w *Window) sumAt(now int64, h *histogram) uint64 {
	cur := now / w.slotLen
	var n uint64
	for i := range w.slots {
		s := &w.slots[i]
		if !w.inWindow(s.period.Load(), cur) {
			continue
		}
		for j := range s.counts {
			c := uint64(s.counts[j].Load())
			h[j] += c
			n += c
		}
	}
	return n
}

func (w *Window) countAt(now int64) uint64 {
	var h histogram
	return w.sumAt(now, &h)
}

// histogram is a merged copy of a window's counts: it lives on the stack of
// one Quantile call.
type histogram [nBuckets]uint64

// quantile returns the value of the bucket holding the sample of rank
// rankOf(q, n); n is h's total.
func (h *histogram) quantile(q float64, n uint64) time.Duration {
	rank := rankOf(q, n)
	var cum uint64
	for i, c := range h {
		cum += c
		if cum >= rank {
			return bucketValue(i)
		}
	}
	return bucketValue(nBuckets - 1) // unreachable: cum ends at n ≥ rank
}

// rankOf returns the nearest rank of the q-quantile of n samples, in
// [1, n]: ceil(q·n).
func rankOf(q float64, n uint64) uint64 {
	if !(q > 0) {
		return 1
	}
	if q >= 1 {
		return n
	}
	return max(uint64(math.Ceil(q*float64(n))), 1)
}
