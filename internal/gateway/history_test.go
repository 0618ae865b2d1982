package gateway

import (
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// fakeReadings is a target whose counters grow by a set amount per read.
type fakeReadings struct {
	mu           sync.Mutex
	calls, fails uint64
	state        string
	names        []string
}

func (f *fakeReadings) read(now time.Time) []reading {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls += 10
	f.fails += 2
	var out []reading
	for _, n := range f.names {
		out = append(out, reading{name: n, state: f.state, at: now, calls: f.calls, failed: f.fails})
	}
	return out
}

// The sampler runs on the injected clock: a point per interval, each the
// interval's counts, and no more than 15 minutes of them.
func TestHistoryRingOnTheClock(t *testing.T) {
	clk := clocktest.New(time.Time{})
	h := newHistory(clk, 5*time.Second)
	if h.size != 180 {
		t.Fatalf("points for 15 min at 5 s: %d; want 180", h.size)
	}
	src := &fakeReadings{state: "closed", names: []string{"a/m", "b/m"}}
	samples := 0
	h.read, h.after = src.read, func(time.Time) { samples++ }
	h.start()
	if got := h.points()["a/m"]; len(got) != 0 {
		t.Fatalf("points before the first interval: %v", got)
	}
	if clk.Pending() != 1 {
		t.Fatalf("%d timers pending; want the sampler's one", clk.Pending())
	}
	clk.Advance(5 * time.Second)
	pts := h.points()["a/m"]
	if len(pts) != 1 || pts[0].Requests != 10 || pts[0].Failures != 2 || pts[0].State != "closed" ||
		pts[0].T != clk.Now().UnixMilli() {
		t.Fatalf("first point %+v; want 10 requests, 2 failures, closed, at now", pts)
	}
	src.mu.Lock()
	src.state = "open"
	src.mu.Unlock()
	for range 200 {
		clk.Advance(5 * time.Second)
	}
	pts = h.points()["a/m"]
	if len(pts) != 180 || samples != 201 {
		t.Fatalf("after 201 samples: %d points, %d samples; want 180 kept", len(pts), samples)
	}
	if first, last := pts[0], pts[179]; last.T-first.T != int64(179*5000) || last.State != "open" || last.T != clk.Now().UnixMilli() {
		t.Errorf("ring from %d to %d (%s); want the last 180 intervals, oldest first", first.T, last.T, last.State)
	}
	if from, ok := h.since("a/m"); !ok || clk.Now().Sub(from.at) != time.Minute {
		t.Errorf("rates count from %v; want a minute ago", clk.Now().Sub(from.at))
	}

	// A target gone (a reload removed it) leaves the history.
	src.mu.Lock()
	src.names = []string{"b/m"}
	src.mu.Unlock()
	clk.Advance(5 * time.Second)
	if _, ok := h.points()["a/m"]; ok {
		t.Error("a removed target keeps its history")
	}

	h.stop()
	if clk.Pending() != 0 {
		t.Errorf("%d timers pending after stop", clk.Pending())
	}
	clk.Advance(time.Minute)
	if samples != 202 {
		t.Errorf("%d samples after stop; want none more", samples-202)
	}
}

// However short the interval, a chart's ring stays bounded.
func TestHistoryBounds(t *testing.T) {
	for _, tc := range []struct {
		every        time.Duration
		size, recent int
	}{{0, 180, 13}, {time.Second, 900, 61}, {10 * time.Millisecond, 900, 900 + 1}, {time.Hour, 2, 2}} {
		h := newHistory(clocktest.New(time.Time{}), tc.every)
		if h.size != tc.size || h.recentSize != tc.recent {
			t.Errorf("every %v: %d points, %d readings; want %d, %d", tc.every, h.size, h.recentSize, tc.size, tc.recent)
		}
	}
}

// A counter that goes down (its target was rebuilt) counts from zero.
func TestPointAfterAReset(t *testing.T) {
	p := pointBetween(reading{calls: 100, failed: 50, cost: 2}, reading{calls: 3, failed: 1, cost: 0.5})
	if p.Requests != 3 || p.Failures != 1 || p.CostUSD != 0.5 {
		t.Errorf("point %+v; want the new counts", p)
	}
}
