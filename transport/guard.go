package transport

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/fuseboxhq/fusebox/clock"
)

// The ways a guard's budget can run out.
const (
	expiredNone int32 = iota
	expiredFirstByte
	expiredIdle
)

// guard enforces a streamed attempt's first-byte and idle budgets. Each
// budget is a clock.AfterFunc that, when it fires, records which budget ran
// out and cancels the attempt's context, which aborts the read in progress.
type guard struct {
	t       *Transport
	ctx     context.Context
	cancel  context.CancelFunc
	expired atomic.Int32

	// mu guards the timers.
	mu        sync.Mutex
	firstByte clock.Timer
	idle      clock.Timer
}

func newGuard(parent context.Context, t *Transport) *guard {
	ctx, cancel := context.WithCancel(parent)
	return &guard{t: t, ctx: ctx, cancel: cancel}
}

func (g *guard) fire(kind int32) {
	if g.expired.CompareAndSwap(expiredNone, kind) {
		g.cancel()
	}
}

// armFirstByte starts the first-byte budget as the request is sent.
func (g *guard) armFirstByte() {
	if d := g.t.cfg.FirstByte; d > 0 {
		g.mu.Lock()
		g.firstByte = g.t.clk.AfterFunc(d, func() { g.fire(expiredFirstByte) })
		g.mu.Unlock()
	}
}

// firstByteArrived stops the first-byte budget. It reports false if the
// budget ran out first: the attempt is already cancelled.
func (g *guard) firstByteArrived() bool {
	g.mu.Lock()
	if g.firstByte != nil {
		g.firstByte.Stop()
		g.firstByte = nil
	}
	g.mu.Unlock()
	return g.expired.Load() == expiredNone
}

// armIdle starts the idle budget before a read of the body.
func (g *guard) armIdle() {
	d := g.t.cfg.Idle
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
