package stats

import (
	"testing"
	"time"
)

func TestFigures(t *testing.T) {
	ds := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	if p := Percentile(ds, 0.5); p != 2000 {
		t.Errorf("p50 = %v µs, want 2000", p)
	}
	if p := Percentile(ds, 0.99); p != 4000 {
		t.Errorf("p99 = %v µs, want 4000", p)
	}
	if Percentile(nil, 0.5) != 0 || Median(nil) != 0 {
		t.Error("no samples: want 0")
	}
	xs := []float64{3, 1, 2, 10}
	if m := Median(xs); m != 2.5 || xs[0] != 3 {
		t.Errorf("median %v (xs now %v); want 2.5 and xs unchanged", m, xs)
	}
	if m := Median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("odd median %v", m)
	}
	for us, want := range map[float64]string{850: "+850 µs", 2500: "+2.50 ms", 12345: "+12.3 ms", -420: "-420 µs"} {
		if got := FmtAdded(us); got != want {
			t.Errorf("FmtAdded(%v) = %q, want %q", us, got, want)
		}
	}
}
