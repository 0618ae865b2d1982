package latency

import (
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// benchDurations are latencies spread over the buckets an AI upstream
// fills: 50ms to about 30s.
func benchDurations() []time.Duration {
	ds := make([]time.Duration, 256)
	d := 50 * time.Millisecond
	for i := range ds {
		ds[i] = d
		d += d / 40
	}
	return ds
}

func BenchmarkObserve(b *testing.B) {
	w := New(Settings{})
	ds := benchDurations()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w.Observe(ds[i&255])
		i++
	}
}

func BenchmarkObserveParallel(b *testing.B) {
	w := New(Settings{})
	ds := benchDurations()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			w.Observe(ds[i&255])
			i++
		}
	})
}

// BenchmarkObserveAt is Observe without the clock read.
func BenchmarkObserveAt(b *testing.B) {
	w := New(Settings{})
	ds := benchDurations()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w.observeAt(0, ds[i&255])
		i++
	}
}

// benchFullWindow returns a window with all six slots in use, on a fake
// clock (its Now, an uncontended mutex, costs about what the system
// clock's does).
func benchFullWindow() *Window {
	fake := clocktest.New(time.Time{})
	w := New(Settings{Clock: fake})
	for slot := range 6 {
		if slot > 0 {
			fake.Advance(20 * time.Second)
		}
		for i, d := range benchDurations() {
			for range i%7 + 1 {
				w.Observe(d)
			}
		}
	}
	return w
}

func BenchmarkQuantile(b *testing.B) {
	w := benchFullWindow()
	b.ReportAllocs()
	for b.Loop() {
		if _, n := w.Quantile(0.95); n != 6*1018 {
			b.Fatalf("window holds %d samples; want %d", n, 6*1018)
		}
	}
}

func BenchmarkQuantileParallel(b *testing.B) {
	w := benchFullWindow()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Quantile(0.95)
		}
	})
}

func BenchmarkCount(b *testing.B) {
	w := benchFullWindow()
	b.ReportAllocs()
	for b.Loop() {
		w.Count()
	}
}
