package latency

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// durationGen draws durations spread evenly over the octaves from 1µs to
// 10 minutes, with some zeros and negatives.
func durationGen() *rapid.Generator[time.Duration] {
	return rapid.Custom(func(t *rapid.T) time.Duration {
		switch rapid.IntRange(0, 19).Draw(t, "kind") {
		case 0:
			return 0
		case 1:
			return -time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "negative"))
		}
		octave := rapid.IntRange(0, 29).Draw(t, "octave") // 1µs·2^29 ≈ 8m57s
		base := time.Microsecond << octave
		d := base + time.Duration(rapid.Int64Range(0, int64(base)-1).Draw(t, "offset"))
		return min(d, 10*time.Minute)
	})
}

// For any samples, a quantile is within the bucket error of the exact
// nearest-rank quantile computed by sorting.
func TestQuantileProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		samples := rapid.SliceOfN(durationGen(), 1, 400).Draw(t, "samples")
		q := rapid.Float64Range(0, 1).Draw(t, "q")
		w, _ := newFake(Settings{})
		sorted := make([]time.Duration, len(samples))
		for i, d := range samples {
			w.Observe(d)
			sorted[i] = max(d, 0)
		}
		slices.Sort(sorted)
		got, n := w.Quantile(q)
		if n != len(samples) {
			t.Fatalf("count = %d; want %d", n, len(samples))
		}
		want := sorted[rankOf(q, uint64(n))-1]
		if absDiff(got, want) > maxError(want) {
			t.Fatalf("Quantile(%v) = %v; exact %v, allowed error %v", q, got, want, maxError(want))
		}
	})
}

// As the clock moves in random steps, the window holds exactly the samples
// whose slot period is among the last Slots periods.
func TestWindowAgingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		span := time.Duration(rapid.Int64Range(int64(time.Second), int64(10*time.Minute)).Draw(t, "span"))
		slots := rapid.IntRange(1, 12).Draw(t, "slots")
		w, fake := newFake(Settings{Span: span, Slots: slots})
		slotLen := span / time.Duration(slots)
		type sample struct {
			period int64
			d      time.Duration
		}
		var model []sample
		var now time.Duration
		for range rapid.IntRange(1, 100).Draw(t, "steps") {
			adv := time.Duration(rapid.Int64Range(0, int64(span/2)).Draw(t, "advance"))
			fake.Advance(adv)
			now += adv
			d := durationGen().Draw(t, "d")
			w.Observe(d)
			cur := int64(now / slotLen)
			model = append(model, sample{cur, max(d, 0)})
			var held []time.Duration
			for _, s := range model {
				if s.period > cur-int64(slots) {
					held = append(held, s.d)
				}
			}
			slices.Sort(held)
			if got := w.Count(); got != len(held) {
				t.Fatalf("at %v: Count = %d; want %d", now, got, len(held))
			}
			got, _ := w.Quantile(0.95)
			want := held[rankOf(0.95, uint64(len(held)))-1]
			if absDiff(got, want) > maxError(want) {
				t.Fatalf("at %v: Quantile(0.95) = %v; exact %v", now, got, want)
			}
		}
	})
}
