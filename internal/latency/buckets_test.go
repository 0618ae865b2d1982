package latency

import (
	"testing"
	"time"
)

// maxError is the largest difference between a reported quantile and the
// observed duration x of that rank, for 0 ≤ x < 655.36s.
func maxError(x time.Duration) time.Duration {
	if x < time.Millisecond {
		return time.Millisecond / 2
	}
	return x / 16
}

// sweep returns durations from 0 to past the top bucket: every unit up to
// 64ms, then steps of about 0.1%, each with its neighbours one below and
// above.
func sweep() []time.Duration {
	var ds []time.Duration
	for d := time.Duration(0); d < 64*time.Millisecond; d += unit {
		ds = append(ds, d-1, d, d+1)
	}
	for d := 64 * time.Millisecond; d < time.Hour; d += d / 1024 {
		ds = append(ds, d-1, d, d+1)
	}
	return ds
}

func TestBucketsContainTheirDurations(t *testing.T) {
	top, _ := bucketBounds(nBuckets - 1)
	prev := 0
	for _, d := range sweep() {
		i := bucketOf(d)
		if i < prev {
			t.Fatalf("bucketOf(%v) = %d, below bucketOf of a smaller duration (%d)", d, i, prev)
		}
		prev = i
		lo, width := bucketBounds(i)
		if x := max(d, 0); x >= top && i == nBuckets-1 {
			continue // clamped into the top bucket
		} else if x < lo || x >= lo+width {
			t.Fatalf("bucketOf(%v) = %d, which holds [%v, %v)", d, i, lo, lo+width)
		}
		if got, x := bucketValue(i), max(d, 0); absDiff(got, x) > maxError(x) {
			t.Fatalf("bucketValue(bucketOf(%v)) = %v; off by more than %v", d, got, maxError(x))
		}
	}
}

func TestBucketLayout(t *testing.T) {
	tests := []struct {
		d      time.Duration
		bucket int
		value  time.Duration
	}{
		{-time.Second, 0, 500 * time.Microsecond},
		{0, 0, 500 * time.Microsecond},
		{time.Millisecond - 1, 0, 500 * time.Microsecond},
		{time.Millisecond, 1, 1062500 * time.Nanosecond},
		{2 * time.Millisecond, 9, 2125 * time.Microsecond},
		{300 * time.Millisecond, 66, 304 * time.Millisecond},
		{20 * time.Second, 114, 19456 * time.Millisecond},
		{10 * time.Minute, nBuckets - 1, 622592 * time.Millisecond},
		{time.Hour, nBuckets - 1, 622592 * time.Millisecond},
		{1<<63 - 1, nBuckets - 1, 622592 * time.Millisecond},
	}
	for _, tt := range tests {
		i := bucketOf(tt.d)
		if i != tt.bucket || bucketValue(i) != tt.value {
			t.Errorf("bucketOf(%v) = %d (value %v); want %d (value %v)",
				tt.d, i, bucketValue(i), tt.bucket, tt.value)
		}
	}
	// The buckets tile [0, top) with no gap or overlap.
	var next time.Duration
	for i := range nBuckets {
		lo, width := bucketBounds(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %v; want %v", i, lo, next)
		}
		next = lo + width
	}
	if next != 655360*time.Millisecond {
		t.Fatalf("top bucket ends at %v; want 10m55.36s", next)
	}
}

func absDiff(a, b time.Duration) time.Duration {
	if a > b {
		return a - b
	}
	return b - a
}
