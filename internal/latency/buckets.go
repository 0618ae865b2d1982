package latency

import (
	"math/bits"
	"time"
)

// Durations are counted in units of 125µs, an eighth of the first octave.
// Bucket 0 holds [0, 1ms). Octave k ≥ 0 holds [2^k ms, 2^(k+1) ms), that is
// [8·2^k, 16·2^k) units, cut into subBuckets buckets of 2^k units each, so a
// bucket is never wider than 1/8 of its lower bound.
const (
	subBits    = 3
	subBuckets = 1 << subBits                  // linear sub-buckets per octave
	unit       = time.Millisecond / subBuckets // 125µs
	// nBuckets covers 19 whole octaves (1ms to 524.288s) and the first two
	// buckets of the 20th, so 10 minutes falls inside the top bucket,
	// [589.824s, 655.36s).
	nBuckets = 1 + 19*subBuckets + 2
)

// bucketOf returns the index of the bucket that counts d. Negative durations
// count as 0; durations past the top bucket count in it.
func bucketOf(d time.Duration) int {
	v := uint64(max(d, 0)) / uint64(unit)
	if v < subBuckets {
		return 0
	}
	k := bits.Len64(v) - subBits - 1 // v is in [8<<k, 16<<k)
	i := 1 + k*subBuckets + int(v>>k) - subBuckets
	return min(i, nBuckets-1)
}

// bucketBounds returns bucket i's lower bound and width: it holds
// [lo, lo+width).
func bucketBounds(i int) (lo, width time.Duration) {
	if i == 0 {
		return 0, time.Millisecond
	}
	k, sub := (i-1)/subBuckets, (i-1)%subBuckets
	return time.Duration(subBuckets+sub) << k * unit, unit << k
}

// bucketValue is the duration a quantile in bucket i reports: the bucket's
// midpoint.
func bucketValue(i int) time.Duration {
	lo, width := bucketBounds(i)
	return lo + width/2
}
