package limit

import (
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// recorder is a LimitSetter that records the limits it is given.
type recorder struct {
	mu  sync.Mutex
	got []int
}

func (r *recorder) SetLimit(n int) { r.mu.Lock(); r.got = append(r.got, n); r.mu.Unlock() }

func TestAdaptiveAIMD(t *testing.T) {
	rec := &recorder{}
	a, err := NewAdaptive(AdaptiveSettings{Min: 2, Max: 10, Initial: 8, SuccessRun: 3, Cooldown: time.Second, Target: rec})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		at      time.Duration
		backoff bool // else success
		want    int
	}
	steps := []row{
		{0, true, 4},                       // halve
		{0, true, 4},                       // cooldown: the same burst of 429s
		{999 * time.Millisecond, true, 4},  // still cooling down
		{time.Second, true, 2},             // halve again
		{3 * time.Second, true, 2},         // floor
		{3 * time.Second, false, 2},        // success 1
		{3 * time.Second, false, 2},        // 2
		{3 * time.Second, false, 3},        // 3: +1
		{3 * time.Second, false, 3},        // 1
		{3 * time.Second, false, 3},        // 2
		{3500 * time.Millisecond, true, 3}, // cooldown (floor hit at 3s); run reset
		{4 * time.Second, false, 3},
		{4 * time.Second, false, 3},
		{4 * time.Second, false, 4},
	}
	for i, s := range steps {
		if s.backoff {
			a.OnBackoffAt(t0.Add(s.at))
		} else {
			a.OnSuccess()
		}
		if got := a.Limit(); got != s.want {
			t.Fatalf("step %d: Limit = %d; want %d", i, got, s.want)
		}
	}
	for range 100 {
		a.OnSuccess()
	}
	if got := a.Limit(); got != 10 {
		t.Fatalf("Limit after many successes = %d; want ceiling 10", got)
	}
	want := []int{8, 4, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if len(rec.got) != len(want) {
		t.Fatalf("target saw %v; want %v", rec.got, want)
	}
	for i := range want {
		if rec.got[i] != want[i] {
			t.Fatalf("target saw %v; want %v", rec.got, want)
		}
	}
}

func TestAdaptiveDefaultsDriveBulkhead(t *testing.T) {
	fc := clocktest.New(time.Time{})
	b := newTestBulkhead(t, BulkheadSettings{})
	a, err := NewAdaptive(AdaptiveSettings{Target: b, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	if a.Limit() != 64 || b.Limit() != 64 {
		t.Fatalf("default limits = %d, %d; want 64", a.Limit(), b.Limit())
	}
	for range 50 { // 50 simultaneous 429s halve once
		a.OnBackoff()
	}
	if b.Limit() != 32 {
		t.Fatalf("bulkhead limit after a burst of backoffs = %d; want 32", b.Limit())
	}
	fc.Advance(time.Second)
	a.OnBackoff()
	for range 16 { // default run: as many successes as the limit
		a.OnSuccess()
	}
	if b.Limit() != 17 {
		t.Fatalf("bulkhead limit = %d; want 17", b.Limit())
	}
}

func TestNewAdaptiveRejectsBadSettings(t *testing.T) {
	for _, s := range []AdaptiveSettings{
		{Min: -1}, {Cooldown: -1}, {Min: 5, Max: 4}, {Min: 2, Max: 4, Initial: 1}, {Max: 4, Initial: 5},
	} {
		if _, err := NewAdaptive(s); err == nil {
			t.Errorf("NewAdaptive(%+v) = nil error", s)
		}
	}
}
