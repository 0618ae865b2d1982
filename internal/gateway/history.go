package gateway

import (
	"math"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/metrics"
)

// History settings: the dashboard's charts span historySpan; the figures
// it shows as rates (requests/s, percentiles) span recentSpan.
const (
	historySpan     = 15 * time.Minute
	recentSpan      = time.Minute
	defaultInterval = 5 * time.Second
	// maxPoints bounds a target's chart however short the interval.
	maxPoints = 900
)

// reading is a target's cumulative counters at one instant, as the router
// and the metrics already keep them.
type reading struct {
	name, state string
	at          time.Time
	// calls are the attempts its breaker saw end; failed the outages
	// among them; rejected the calls it refused.
	calls, failed, rejected uint64
	tokens, cost            float64
	tokensIn, tokensOut     float64
	dur, ttfb               metrics.Histogram
	inFlight                int64
	queued                  int
}

// point is one sample of a target's chart: what happened in the interval
// that ended at T.
type point struct {
	T        int64  `json:"t"` // Unix ms
	State    string `json:"state"`
	Requests uint64 `json:"requests"`
	Failures uint64 `json:"failures"`
	Rejected uint64 `json:"rejected"`
	// P50MS and P95MS are the attempts' latency percentiles in the
	// interval; 0 without attempts.
	P50MS    float64 `json:"p50_ms"`
	P95MS    float64 `json:"p95_ms"`
	Tokens   float64 `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
	InFlight int64   `json:"in_flight"`
	Queued   int     `json:"queued"`
}

// targetSeries is one target's history: a ring of points for the chart and a
// ring of the last minute's readings for its rates.
type targetSeries struct {
	points  []point
	next, n int
	prev    reading
	recent  []reading
	rnext   int
	rn      int
}

// history samples every target on the injected clock and keeps
// historySpan of points per target in bounded rings. Sampling reads
// counters the request path keeps anyway; nothing is added to it. It is
// safe for concurrent use.
type history struct {
	clk        clock.Clock
	every      time.Duration
	size       int // points per target
	recentSize int // readings kept for the rates
	// read returns every target's reading now; after, if set, is called
	// after each sample, outside the lock (the live streams).
	read  func(now time.Time) []reading
	after func(now time.Time)

	// mu guards byName, timer and running.
	mu      sync.Mutex
	byName  map[string]*targetSeries
	timer   clock.Timer
	running bool
}

// newHistory returns a history sampling every interval (0: 5 s).
func newHistory(clk clock.Clock, interval time.Duration) *history {
	if interval <= 0 {
		interval = defaultInterval
	}
	return &history{clk: clk, every: interval, byName: map[string]*targetSeries{},
		size:       int(min(max(historySpan/interval, 2), maxPoints)),
		recentSize: int(min(max(recentSpan/interval, 1), maxPoints)) + 1}
}

// start takes a first reading and schedules the samples; it does nothing
// when already running.
func (h *history) start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running || h.read == nil {
		return
	}
	h.running = true
	now := h.clk.Now()
	for _, r := range h.read(now) {
		h.seriesLocked(r.name).remember(r)
	}
	h.timer = h.clk.AfterFunc(h.every, h.tick)
}

// stop ends the sampling; a tick under way finishes.
func (h *history) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running = false
	if h.timer != nil {
		h.timer.Stop()
	}
}

// tick samples and schedules the next sample.
func (h *history) tick() {
	now := h.clk.Now()
	if !h.sample(now) {
		return
	}
	if h.after != nil {
		h.after(now)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running {
		h.timer = h.clk.AfterFunc(h.every, h.tick)
	}
}

// sample records a point for every target from its reading at now, and
// forgets the targets gone (a reload removed them). It reports false when
// the history is stopped.
func (h *history) sample(now time.Time) bool {
	rs := h.read(now)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return false
	}
	live := make(map[string]bool, len(rs))
	for _, r := range rs {
		live[r.name] = true
		s := h.seriesLocked(r.name)
		s.add(pointBetween(s.prev, r), h.size)
		s.remember(r)
	}
	for name := range h.byName {
		if !live[name] {
			delete(h.byName, name)
		}
	}
	return true
}

// seriesLocked returns name's targetSeries, made on first use. Requires h.mu.
func (h *history) seriesLocked(name string) *targetSeries {
	s := h.byName[name]
	if s == nil {
		s = &targetSeries{recent: make([]reading, h.recentSize)}
		h.byName[name] = s
	}
	return s
}

// remember makes r the reading the next point counts from, and keeps it
// for the rates.
func (s *targetSeries) remember(r reading) {
	s.prev = r
	s.recent[s.rnext] = r
	s.rnext = (s.rnext + 1) % len(s.recent)
	s.rn = min(s.rn+1, len(s.recent))
}

// add appends p, pushing out the oldest point when the ring holds size.
func (s *targetSeries) add(p point, size int) {
	if s.points == nil {
		s.points = make([]point, size)
	}
	s.points[s.next] = p
	s.next = (s.next + 1) % size
	s.n = min(s.n+1, size)
}

// ordered returns the points, oldest first.
func (s *targetSeries) ordered() []point {
	out := make([]point, 0, s.n)
	for i := s.n; i > 0; i-- {
		out = append(out, s.points[(s.next-i+len(s.points))%len(s.points)])
	}
	return out
}

// oldest returns the oldest reading kept for the rates.
func (s *targetSeries) oldest() (reading, bool) {
	if s.rn == 0 {
		return reading{}, false
	}
	return s.recent[(s.rnext-s.rn+len(s.recent))%len(s.recent)], true
}

// points returns every target's chart, oldest point first.
func (h *history) points() map[string][]point {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]point, len(h.byName))
	for name, s := range h.byName {
		out[name] = s.ordered()
	}
	return out
}

// latest returns every target's newest point.
func (h *history) latest() map[string]point {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]point, len(h.byName))
	for name, s := range h.byName {
		if s.n > 0 {
			out[name] = s.points[(s.next-1+len(s.points))%len(s.points)]
		}
	}
	return out
}

// since returns the reading of name the recent rates count from: the
// oldest kept, up to recentSpan old.
func (h *history) since(name string) (reading, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.byName[name]; s != nil {
		return s.oldest()
	}
	return reading{}, false
}

// pointBetween returns the point for the interval from prev to cur.
func pointBetween(prev, cur reading) point {
	d := cur.dur.Sub(prev.dur)
	return point{
		T: cur.at.UnixMilli(), State: cur.state,
		Requests: delta(cur.calls, prev.calls), Failures: delta(cur.failed, prev.failed), Rejected: delta(cur.rejected, prev.rejected),
		P50MS: ms(d.Quantile(0.5)), P95MS: ms(d.Quantile(0.95)),
		Tokens: fdelta(cur.tokens, prev.tokens), CostUSD: fdelta(cur.cost, prev.cost),
		InFlight: cur.inFlight, Queued: cur.queued,
	}
}

// delta is cur-prev for a counter; a counter that went down was made
// again (a reload rebuilt its target) and counts from zero.
func delta(cur, prev uint64) uint64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

func fdelta(cur, prev float64) float64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// ms converts seconds to milliseconds, NaN (no data) to 0.
func ms(seconds float64) float64 {
	if math.IsNaN(seconds) {
		return 0
	}
	return math.Round(seconds*1e4) / 10
}
