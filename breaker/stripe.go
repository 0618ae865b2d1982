package breaker

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Counters that every call touches are striped: each goroutine adds to one
// of several cache lines, chosen from its stack address, so parallel callers
// do not fight over one line. Reading sums the stripes.

// The totals, as indexes into a tally.
const (
	totalAllowed = iota
	totalRejected
	totalSucceeded
	totalFailed
	totalIgnored
	totalSlow
	totalDropped
	numTotals
)

// tally is one stripe of the totals: exactly one cache line.
type tally struct{ n [8]atomic.Uint64 }

// stripes returns the number of stripes for this process: a power of two,
// four per P, so two goroutines rarely share one.
func stripes() int {
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) && n < 64 {
		n <<= 1
	}
	return n
}

// stripe picks a stripe in [0, mask] for the calling goroutine. Goroutine
// stacks are disjoint, so the address of a local variable tells goroutines
// apart; its bits above the 2 KiB minimum stack size are hashed.
func stripe(mask int) int {
	var marker byte
	return stripeOf(uintptr(unsafe.Pointer(&marker)), mask)
}

// stripeOf hashes a stack address to a stripe. Goroutine stacks start at
// 2 KiB, so neighbouring goroutines' frames can be as little as 2 KiB
// apart: the bits above that decide.
func stripeOf(addr uintptr, mask int) int {
	p := uint64(addr) >> 11
	return int((p*0x9E3779B97F4A7C15)>>40) & mask
}

type totals struct {
	t    []tally
	mask int
}

func newTotals() totals {
	n := stripes()
	return totals{t: make([]tally, n), mask: n - 1}
}

func (s *totals) add(i int) { s.t[stripe(s.mask)].n[i].Add(1) }

func (s *totals) load(i int) uint64 {
	var sum uint64
	for j := range s.t {
		sum += s.t[j].n[i].Load()
	}
	return sum
}
