package transport

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// The ways a guard's budget can run out.
const (
	expiredNone int32 = iota
	expiredFirstByte
	expiredIdle
)

// guard enforces an attempt's first-byte budget and, for a stream, its idle
// budget. Each budget is a clock.AfterFunc that, when it fires, records
// which budget ran out and cancels the attempt's context, which aborts the
// round trip or the read in progress.
type guard struct {
	t       *Transport
	ctx     context.Context
	cancel  context.CancelFunc
	expired atomic.Int32
	// firstByteBudget and idleBudget are the budgets; 0: none.
	firstByteBudget, idleBudget time.Duration

	// mu guards the timers; firstByte is nil once the first byte is in.
	mu        sync.Mutex
	firstByte clock.Timer
	idle      clock.Timer
}

func newGuard(parent context.Context, t *Transport, firstByte, idle time.Duration) *guard {
	ctx, cancel := context.WithCancel(parent)
	return &guard{t: t, ctx: ctx, cancel: cancel, firstByteBudget: firstByte, idleBudget: idle}
}

func (g *guard) fire(kind int32) {
	if g.expired.CompareAndSwap(expiredNone, kind) {
		g.cancel()
	}
}

// armFirstByte starts the first-byte budget as the request is sent.
func (g *guard) armFirstByte() {
	if d := g.firstByteBudget; d > 0 {
		g.mu.Lock()
		g.firstByte = g.t.clk.AfterFunc(d, g.firstByteExpired)
		g.mu.Unlock()
	}
}

// firstByteExpired fires the first-byte budget unless the first byte came
// in while the timer was firing: under mu, so that firstByteArrived's
// answer stays true.
func (g *guard) firstByteExpired() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.firstByte != nil {
		g.fire(expiredFirstByte)
	}
}

// firstByteArrived stops the first-byte budget. It reports false if the
// budget ran out first: the attempt is already cancelled.
func (g *guard) firstByteArrived() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.firstByte != nil {
		g.firstByte.Stop()
		g.firstByte = nil
	}
	return g.expired.Load() == expiredNone
}

// armIdle starts the idle budget before a read of the body.
func (g *guard) armIdle() {
	d := g.idleBudget
	if d <= 0 {
		return
	}
	g.mu.Lock()
	if g.idle == nil {
		g.idle = g.t.clk.AfterFunc(d, func() { g.fire(expiredIdle) })
	} else {
		g.idle.Reset(d)
	}
	g.mu.Unlock()
}

// disarm stops the idle budget after a read returns.
func (g *guard) disarm() {
	g.mu.Lock()
	if g.idle != nil {
		g.idle.Stop()
	}
	g.mu.Unlock()
}

// stop ends the guard: timers stopped, the attempt's context released.
func (g *guard) stop() {
	g.mu.Lock()
	for _, t := range []clock.Timer{g.firstByte, g.idle} {
		if t != nil {
			t.Stop()
		}
	}
	g.mu.Unlock()
	g.cancel()
}
