package retry

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Budget defaults.
const (
	DefaultBudgetRatio        = 0.2
	DefaultBudgetMinPerSecond = 10.0
	DefaultBudgetWindow       = 10 * time.Second
)

// budgetBuckets is how many buckets a Budget's window is cut into.
const budgetBuckets = 10

// BudgetConfig configures a Budget. Its zero value means the defaults
// (those of Finagle's RetryBudget): 20% of requests, a floor of 10 retries
// per second, over 10 seconds.
type BudgetConfig struct {
	// Ratio is how many retries are allowed per request in the window.
	// 0: DefaultBudgetRatio (0.2). Negative: none beyond the floor.
	Ratio float64
	// MinPerSecond is the floor: retries per second allowed whatever the
	// traffic, so a quiet client can still retry. It is averaged over the
	// window, which always admits MinPerSecond × Window seconds of retries.
	// 0: DefaultBudgetMinPerSecond (10). Negative: no floor.
	MinPerSecond float64
	// Window is how far back requests and retries count.
	// 0: DefaultBudgetWindow (10s).
	Window time.Duration
	// Clock reads the time. nil: the system clock.
	Clock clock.Clock
}

// Budget limits retries to a fraction of recent requests, so that an outage
// cannot multiply the load on an upstream: without one, every failing request
// becomes Attempts requests.
//
// It counts requests (first attempts, Request) and granted retries
// (TryRetry) over a sliding window cut into ten buckets. TryRetry grants a
// retry when, counting it,
//
//	retries ≤ Ratio × requests + MinPerSecond × Window/1s
//
// where requests and retries are those of the current bucket and the nine
// before it (buckets are Window/10 long), so the window in force spans
// between 0.9 and 1 times Window. A retry granted against requests that
// have since left the window stays counted until it leaves too, so a
// snapshot may briefly show more than Ratio × requests.
// Refused retries are not counted.
//
// A Budget is safe for concurrent use; each call takes a short mutex. Create
// one with NewBudget; the zero Budget is not usable.
type Budget struct {
	ratio   float64       // ≥ 0
	reserve float64       // MinPerSecond × Window seconds, ≥ 0
	width   time.Duration // of a bucket: Window / budgetBuckets, ≥ 1ns
	sw      clock.Stopwatch

	// mu guards head, buckets, requests and retries.
	mu       sync.Mutex
	head     int64 // number of the newest bucket: elapsed / width
	buckets  [budgetBuckets]budgetBucket
	requests int64 // sum over buckets
	retries  int64 // sum over buckets
}

type budgetBucket struct{ requests, retries int64 }

// NewBudget returns a Budget with the settings in cfg, or an error naming a
// field that is NaN, infinite or (for Window) negative.
func NewBudget(cfg BudgetConfig) (*Budget, error) {
	switch {
	case math.IsNaN(cfg.Ratio) || math.IsInf(cfg.Ratio, 0):
		return nil, errors.New("retry: BudgetConfig.Ratio must be finite")
	case math.IsNaN(cfg.MinPerSecond) || math.IsInf(cfg.MinPerSecond, 0):
		return nil, errors.New("retry: BudgetConfig.MinPerSecond must be finite")
	case cfg.Window < 0:
		return nil, errors.New("retry: BudgetConfig.Window must not be negative")
	}
	if cfg.Ratio == 0 {
		cfg.Ratio = DefaultBudgetRatio
	}
	if cfg.MinPerSecond == 0 {
		cfg.MinPerSecond = DefaultBudgetMinPerSecond
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultBudgetWindow
	}
	return &Budget{
		ratio:   max(cfg.Ratio, 0),
		reserve: max(cfg.MinPerSecond, 0) * cfg.Window.Seconds(),
		width:   max(cfg.Window/budgetBuckets, 1),
		sw:      clock.NewStopwatch(cfg.Clock),
	}, nil
}

// Request records a request: a first attempt, not a retry.
func (b *Budget) Request() { b.requestAt(b.sw.Elapsed()) }

// TryRetry reports whether a retry is allowed now, and if so counts it.
func (b *Budget) TryRetry() bool { return b.tryRetryAt(b.sw.Elapsed()) }

// Counts returns the requests and granted retries in the window now.
func (b *Budget) Counts() (requests, retries int64) { return b.countsAt(b.sw.Elapsed()) }

func (b *Budget) requestAt(elapsed time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked(elapsed)
	b.buckets[b.head%budgetBuckets].requests++
	b.requests++
}

func (b *Budget) tryRetryAt(elapsed time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked(elapsed)
	if !b.allowsLocked() {
		return false
	}
	b.buckets[b.head%budgetBuckets].retries++
	b.retries++
	return true
}

func (b *Budget) countsAt(elapsed time.Duration) (requests, retries int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked(elapsed)
	return b.requests, b.retries
}

// allowsLocked reports whether one more retry fits the formula. The small
// tolerance keeps Ratio × requests from missing a whole number by a rounding
// error (0.2 × 5 must allow 1).
func (b *Budget) allowsLocked() bool {
	return float64(b.retries+1) <= b.ratio*float64(b.requests)+b.reserve+1e-9
}

// advanceLocked moves the window so that its newest bucket holds elapsed,
// clearing the buckets that fall out. A time older than the newest bucket (a
// caller that read the clock just before another) counts in the newest.
func (b *Budget) advanceLocked(elapsed time.Duration) {
	n := int64(elapsed / b.width)
	if n <= b.head {
		return
	}
	if n-b.head >= budgetBuckets {
		b.buckets = [budgetBuckets]budgetBucket{}
		b.requests, b.retries = 0, 0
	} else {
		for i := b.head + 1; i <= n; i++ {
			old := &b.buckets[i%budgetBuckets]
			b.requests -= old.requests
			b.retries -= old.retries
			*old = budgetBucket{}
		}
	}
	b.head = n
}
