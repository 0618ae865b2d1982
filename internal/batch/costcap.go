package batch

import (
	"context"
	"sync"
)

// costCap keeps a batch's spending under a cap, reserve-then-settle: a
// line reserves its estimate before it is sent and settles with its real
// cost when it ends. A line whose estimate does not fit beside what is
// spent stops the batch; one that fits beside the spending but not beside
// the reservations of the lines in flight waits for them to settle. It is
// safe for concurrent use.
type costCap struct {
	max float64 // 0: no cap

	// mu guards spent, reserved and settled.
	mu       sync.Mutex
	spent    float64
	reserved float64
	settled  chan struct{} // closed and replaced at each settlement
}

func newCostCap(max, spent float64) *costCap {
	return &costCap{max: max, spent: spent, settled: make(chan struct{})}
}

// reserve takes est for a line. It reports false when the cap is reached
// (the batch must take no more lines), and ctx.Err() if ctx ends while it
// waits.
func (c *costCap) reserve(ctx context.Context, est float64) (bool, error) {
	if c.max <= 0 {
		return true, nil
	}
	for {
		c.mu.Lock()
		switch {
		case c.spent+est > c.max || c.spent >= c.max:
			c.mu.Unlock()
			return false, nil
		case c.spent+c.reserved+est <= c.max:
			c.reserved += est
			c.mu.Unlock()
			return true, nil
		}
		ch := c.settled
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// settle replaces a line's reservation est with what it cost.
func (c *costCap) settle(est, cost float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max > 0 {
		c.reserved -= est
	}
	c.spent += cost
	close(c.settled)
	c.settled = make(chan struct{})
}

// total returns what is spent.
func (c *costCap) total() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}
