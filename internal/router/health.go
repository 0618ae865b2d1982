package router

import (
	"math"
	"sync/atomic"
	"time"
)

// health keeps a target's recent figures as exponentially weighted moving
// averages, updated with atomics (no lock on the request path).
type health struct {
	latency atomic.Uint64 // float64 bits: EWMA of seconds to the full answer
	ttfb    atomic.Uint64 // float64 bits: EWMA of seconds to first content
	errRate atomic.Uint64 // float64 bits: EWMA of failures (0 or 1 per call)
}

// alpha weighs the newest sample; about the last 10 calls matter.
const alpha = 0.2

func ewma(v *atomic.Uint64, sample float64) {
	for {
		old := v.Load()
		cur := math.Float64frombits(old)
		next := sample
		if old != 0 {
			next = cur + alpha*(sample-cur)
		}
		if v.CompareAndSwap(old, math.Float64bits(next)) {
			return
		}
	}
}

func (h *health) observe(latency time.Duration, failed bool) {
	if latency > 0 {
		ewma(&h.latency, latency.Seconds())
	}
	f := 0.0
	if failed {
		f = 1
	}
	// Error rate starts at 0: a missing sample must not read as "healthy"
	// and "unknown" alike, so the first sample seeds it like any other.
	for {
		old := h.errRate.Load()
		next := math.Float64frombits(old) + alpha*(f-math.Float64frombits(old))
		if h.errRate.CompareAndSwap(old, math.Float64bits(next)) {
			return
		}
	}
}

func (h *health) observeTTFB(d time.Duration) { ewma(&h.ttfb, d.Seconds()) }

// Health is a target's figures for dashboards and strategies.
type Health struct {
	// Latency and TTFB are moving averages; 0 until a call has been seen.
	Latency, TTFB time.Duration
	// ErrorRate is the moving share of recent calls that failed.
	ErrorRate float64
}

func (h *health) snapshot() Health {
	return Health{
		Latency:   time.Duration(math.Float64frombits(h.latency.Load()) * float64(time.Second)),
		TTFB:      time.Duration(math.Float64frombits(h.ttfb.Load()) * float64(time.Second)),
		ErrorRate: math.Float64frombits(h.errRate.Load()),
	}
}
