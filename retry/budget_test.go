package retry

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func newBudget(t testing.TB, cfg BudgetConfig) *Budget {
	t.Helper()
	b, err := NewBudget(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewBudgetErrors(t *testing.T) {
	for _, cfg := range []BudgetConfig{
		{Ratio: math.NaN()},
		{Ratio: math.Inf(1)},
		{MinPerSecond: math.Inf(-1)},
		{Window: -time.Second},
	} {
		if _, err := NewBudget(cfg); err == nil {
			t.Errorf("NewBudget(%+v) = nil error; want one", cfg)
		}
	}
}

func TestBudgetOutage(t *testing.T) {
	// 1000 requests, all failing, all asking to retry: 20% get to, plus the
	// floor (2/s over 10s = 20).
	fake := clocktest.New(start)
	b := newBudget(t, BudgetConfig{Ratio: 0.2, MinPerSecond: 2, Clock: fake})
	granted := 0
	for range 1000 {
		b.Request()
		if b.TryRetry() {
			granted++
		}
	}
	if granted != 220 {
		t.Fatalf("granted %d retries; want 200 + 20 floor", granted)
	}
	if req, ret := b.Counts(); req != 1000 || ret != 220 {
		t.Fatalf("Counts = %d, %d; want 1000, 220", req, ret)
	}
}

func TestBudgetDefaults(t *testing.T) {
	fake := clocktest.New(start)
	b := newBudget(t, BudgetConfig{Clock: fake})
	// No requests yet: only the floor, 10/s × 10s.
	granted := 0
	for range 1000 {
		if b.TryRetry() {
			granted++
		}
	}
	if granted != 100 {
		t.Fatalf("granted %d retries with no requests; want the floor, 100", granted)
	}
}

// budgetStep is one row of a Budget step table.
type budgetStep struct {
	advance  time.Duration // before the step
	requests int           // Request calls
	retries  int           // TryRetry calls
	granted  int           // how many should succeed
}

func runBudget(t *testing.T, b *Budget, fake *clocktest.Clock, steps []budgetStep) {
	t.Helper()
	for i, s := range steps {
		fake.Advance(s.advance)
		for range s.requests {
			b.Request()
		}
		granted := 0
		for range s.retries {
			if b.TryRetry() {
				granted++
			}
		}
		if granted != s.granted {
			req, ret := b.Counts()
			t.Fatalf("step %d: granted %d of %d retries; want %d (window %d requests, %d retries)",
				i, granted, s.retries, s.granted, req, ret)
		}
	}
}

func TestBudgetWindowSlides(t *testing.T) {
	fake := clocktest.New(start)
	b := newBudget(t, BudgetConfig{Ratio: 0.5, MinPerSecond: -1, Window: 10 * time.Second, Clock: fake})
	runBudget(t, b, fake, []budgetStep{
		{0, 10, 10, 5},             // 5 of 10 requests
		{5 * time.Second, 0, 1, 0}, // still spent
		{4 * time.Second, 4, 3, 2}, // 14 requests, 7 retries
		{time.Second, 0, 5, 0},     // t=10s: the first bucket (10 req, 5 ret) is gone: 4 req, 2 ret
		{5 * time.Second, 2, 5, 1}, // 6 req, 3 ret
		{4 * time.Second, 0, 1, 0}, // t=19s: bucket of t=9 still in
		{time.Second, 0, 1, 0},     // t=20s: only the 2 requests of t=15s: 1 ret
		{5 * time.Second, 0, 1, 0}, // t=25s: empty
		{time.Hour, 100, 60, 50},   // long idle: clean slate
		{1500 * time.Millisecond, 0, 1, 0},
	})
}

func TestBudgetFloorOnly(t *testing.T) {
	fake := clocktest.New(start)
	b := newBudget(t, BudgetConfig{Ratio: -1, MinPerSecond: 0.5, Window: 10 * time.Second, Clock: fake})
	runBudget(t, b, fake, []budgetStep{
		{0, 100, 10, 5}, // 0.5/s × 10s, requests do not matter
		{9 * time.Second, 0, 1, 0},
		{time.Second, 0, 10, 5},
	})
}

// In any stretch of time as long as the window in force (at least nine
// buckets, about 0.9 × Window), the
// retries granted never exceed Ratio × the requests of the last Window plus
// the floor. Time moves in random steps; requests and retries come in random
// order.
func TestBudgetNeverExceedsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		window := time.Duration(rapid.Int64Range(10, int64(time.Minute)).Draw(t, "window"))
		ratio := rapid.Float64Range(0, 2).Draw(t, "ratio")
		floor := rapid.Float64Range(0, 5).Draw(t, "floor")
		b, err := NewBudget(BudgetConfig{Ratio: max(ratio, 1e-9), MinPerSecond: max(floor, 1e-9), Window: window})
		if err != nil {
			t.Fatal(err)
		}
		reserve := max(floor, 1e-9) * window.Seconds()
		covered := (budgetBuckets - 1) * b.width // the shortest span the window in force covers
		var now time.Duration
		var requests, retries []time.Duration // times of requests, granted retries
		steps := rapid.IntRange(1, 300).Draw(t, "steps")
		for range steps {
			now += time.Duration(rapid.Int64Range(0, int64(window/4)).Draw(t, "advance"))
			if rapid.Bool().Draw(t, "request") {
				b.requestAt(now)
				requests = append(requests, now)
				continue
			}
			if !b.tryRetryAt(now) {
				continue
			}
			retries = append(retries, now)
			inWindow := countSince(retries, now-covered, true)
			limit := max(ratio, 1e-9)*float64(countSince(requests, now-window, false)) + reserve
			if float64(inWindow) > limit+1e-6 {
				t.Fatalf("at %v: %d retries in the last %v; limit %.3f", now, inWindow, covered, limit)
			}
		}
	})
}

// countSince counts the times after from (or at from, when inclusive).
func countSince(times []time.Duration, from time.Duration, inclusive bool) int {
	n := 0
	for _, x := range times {
		if x > from || (inclusive && x == from) {
			n++
		}
	}
	return n
}

// 64 goroutines hammer one Budget: every call is counted and the grants
// never exceed the formula.
func TestBudgetConcurrent(t *testing.T) {
	fake := clocktest.New(start)
	b := newBudget(t, BudgetConfig{Ratio: 0.2, MinPerSecond: 1, Clock: fake})
	const goroutines, perG = 64, 500
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range perG {
				b.Request()
				if i%2 == 0 && b.TryRetry() {
					granted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	req, ret := b.Counts()
	if req != goroutines*perG || ret != granted.Load() {
		t.Fatalf("Counts = %d, %d; want %d requests, %d retries", req, ret, goroutines*perG, granted.Load())
	}
	if limit := int64(0.2*float64(req)) + 10; ret > limit {
		t.Fatalf("granted %d retries; limit %d", ret, limit)
	}
	// Half the requests asked for a retry (16000) and the limit is 6410:
	// the budget must have granted retries up to it, give or take ordering.
	if ret < 6000 {
		t.Fatalf("granted only %d retries; want close to 6410", ret)
	}
}

// The same, with the fake clock moving concurrently: a race test, with
// totals that add up.
func TestBudgetConcurrentWithTime(t *testing.T) {
	fake := clocktest.New(start)
	b := newBudget(t, BudgetConfig{Ratio: 0.2, MinPerSecond: -1, Window: time.Second, Clock: fake})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for range 200 {
			fake.Advance(10 * time.Millisecond)
		}
		close(stop)
	})
	var requests, tries, granted atomic.Int64 // counted before the calls
	for range 64 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				requests.Add(1)
				b.Request()
				tries.Add(1)
				if b.TryRetry() {
					granted.Add(1)
				}
				if req, ret := b.Counts(); req > requests.Load() || ret > tries.Load() {
					t.Errorf("window holds %d requests, %d retries; only %d, %d made", req, ret, requests.Load(), tries.Load())
					return
				}
			}
		})
	}
	wg.Wait()
	if granted.Load() > requests.Load()/2 {
		t.Fatalf("granted %d retries for %d requests", granted.Load(), requests.Load())
	}
	fake.Advance(time.Second)
	if req, ret := b.Counts(); req != 0 || ret != 0 {
		t.Fatalf("after a quiet window Counts = %d, %d; want 0, 0", req, ret)
	}
}
