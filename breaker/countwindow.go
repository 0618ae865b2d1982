package breaker

import (
	"sync"
	"sync/atomic"
)

// countWindow holds the outcomes of the last size calls in a ring, with
// running totals, so recording and reading are O(1).
//
// A healthy breaker's successes skip the lock: once the ring is full and
// holds no failure or slow call, adding another plain success changes
// nothing but which slot is oldest, so clean says so and record returns.
type countWindow struct {
	clean atomic.Bool // the ring is full of plain successes

	// mu guards the fields below.
	mu     sync.Mutex
	ring   []uint8 // outcome flags per slot: outFailed | outSlow
	next   int     // slot the next outcome goes to
	filled int     // slots in use
	c      counts
}

const (
	outFailed = 1 << iota
	outSlow
)

func newCountWindow(size int) *countWindow {
	return &countWindow{ring: make([]uint8, size)}
}

func (w *countWindow) record(_ int64, failed, slow bool) (counts, bool) {
	if !failed && !slow && w.clean.Load() {
		return counts{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var f uint8
	if failed {
		f |= outFailed
	}
	if slow {
		f |= outSlow
	}
	if w.filled == len(w.ring) {
		w.c.add(w.ring[w.next], -1)
	} else {
		w.filled++
	}
	w.ring[w.next] = f
	w.c.add(f, 1)
	w.next = (w.next + 1) % len(w.ring)
	w.clean.Store(w.filled == len(w.ring) && w.c.failures == 0 && w.c.slow == 0)
	return w.c, w.c.failures > 0 || w.c.slow > 0
}

func (c *counts) add(f uint8, d int64) {
	c.calls += d
	if f&outFailed != 0 {
		c.failures += d
	}
	if f&outSlow != 0 {
		c.slow += d
	}
}

func (w *countWindow) counts(int64) counts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.c
}

func (w *countWindow) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.ring)
	w.next, w.filled, w.c = 0, 0, counts{}
	w.clean.Store(false)
}
