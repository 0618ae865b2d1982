// Package stats holds the figures the bench commands compute and print
// alike: percentiles and medians of their samples, and microseconds as a
// table shows them.
package stats

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Percentile returns the nearest-rank q-quantile of ds, in microseconds
// (0 for none). It sorts ds.
func Percentile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	i = max(0, min(i, len(ds)-1))
	return float64(ds[i]) / float64(time.Microsecond)
}

// Median returns the median of xs (0 for none), without changing xs.
func Median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 0:
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[n/2]
}

// FmtUS formats microseconds: µs below a millisecond, ms above.
func FmtUS(us float64) string {
	switch a := math.Abs(us); {
	case a < 1000:
		return fmt.Sprintf("%.0f µs", us)
	case a < 10000:
		return fmt.Sprintf("%.2f ms", us/1000)
	default:
		return fmt.Sprintf("%.1f ms", us/1000)
	}
}

// FmtAdded formats a difference in microseconds, with its sign.
func FmtAdded(us float64) string {
	s := FmtUS(us)
	if us >= 0 {
		s = "+" + s
	}
	return s
}
