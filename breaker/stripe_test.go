package breaker

import "testing"

// Goroutines whose stacks sit 2 KiB apart (the minimum stack) must land on
// different stripes, or parallel callers share a cache line. Regression:
// hashing from 8 KiB up put four neighbouring goroutines on one stripe and
// made RunParallel twice as slow as one goroutine.
func TestNeighbouringStacksSpreadOverStripes(t *testing.T) {
	const mask = 7
	for _, base := range []uintptr{0x29bf99536707, 0xc000100000, 0x7f0000001234} {
		seen := map[int]bool{}
		for i := range 8 {
			seen[stripeOf(base+uintptr(i)*2048, mask)] = true
		}
		if len(seen) < 5 {
			t.Errorf("8 stacks 2 KiB apart from %#x use %d stripes of 8", base, len(seen))
		}
	}
}
