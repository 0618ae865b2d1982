package metrics

import (
	"math"
	"testing"
)

func TestHistogramQuantile(t *testing.T) {
	h := Histogram{Bounds: []float64{0.1, 0.5, 1}, Counts: []uint64{10, 90, 100}, Count: 100}
	for _, tc := range []struct{ q, want float64 }{
		{0.05, 0.05}, // half of the first bucket, from 0
		{0.5, 0.3},   // 40 of the second bucket's 80
		{0.95, 0.75}, // half of the third
	} {
		if got := h.Quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Quantile(%v) = %v; want %v", tc.q, got, tc.want)
		}
	}
	above := Histogram{Bounds: []float64{0.1}, Counts: []uint64{0}, Count: 5}
	if got := above.Quantile(0.5); got != 0.1 {
		t.Errorf("all above the last bound: %v; want the bound 0.1", got)
	}
	if got := (Histogram{}).Quantile(0.5); !math.IsNaN(got) {
		t.Errorf("empty: %v; want NaN", got)
	}
}

func TestHistogramSub(t *testing.T) {
	prev := Histogram{Bounds: []float64{1, 2}, Counts: []uint64{3, 4}, Count: 5, Sum: 6}
	cur := Histogram{Bounds: []float64{1, 2}, Counts: []uint64{4, 7}, Count: 9, Sum: 10}
	d := cur.Sub(prev)
	if d.Count != 4 || d.Counts[0] != 1 || d.Counts[1] != 3 || d.Sum != 4 {
		t.Errorf("Sub = %+v; want 4 observations, buckets 1 and 3", d)
	}
	// A series made again (a reload) reads lower: it counts from zero.
	if d := prev.Sub(cur); d.Count != prev.Count {
		t.Errorf("a reset series: %+v; want itself", d)
	}
}

func TestNilMetricsFigures(t *testing.T) {
	var m *Metrics
	if f := m.Target(nil); f.CostUSD != 0 || f.Duration.Count != 0 {
		t.Errorf("nil Target = %+v", f)
	}
	if tot := m.Totals(); tot.Requests != 0 || tot.ClientCostUSD == nil {
		t.Errorf("nil Totals = %+v", tot)
	}
}
