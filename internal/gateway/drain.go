package gateway

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// drain keeps an answer being read after its client has left, for
// server.usage_drain, so that its usage prices it (and what it cost is
// charged, not its reservation). Only the requests of clients with a
// budget or limits are drained: for any other, the upstream is canceled
// at once, which stops the provider generating (and billing) an answer
// nobody reads.
//
// The walk runs under its context, which the client's leaving does not
// end by itself: when the client leaves while an answer is held (a stream
// relayed, a body read), the context ends after the bound; at any other
// time (before an answer came, between attempts) at once, as the client's
// own would. The exchange stops writing to a client that has left and
// reads on.
type drain struct {
	// parent is the client's request context; the drain is its values
	// without its cancellation (as context.WithoutCancel, without an
	// allocation of its own), and ctx its cancelable child.
	parent context.Context
	ctx    context.Context
	cancel context.CancelCauseFunc
	clk    clock.Clock
	bound  clock.Timer
	stop   func() bool // stops watching the client's context
	hook   func(bool)  // tests: told when the client's leaving was handled, and whether it drains
	held   func()      // tests: told when an answer is taken up

	// holding is set while an answer is read; gone once the client left.
	holding, gone atomic.Bool
	once          sync.Once
	after         time.Duration
	mu            sync.Mutex // guards bound and ended
	ended         bool
}

// newDrain returns a drain of the request ctx lasting d past the client's
// leaving, or nil when d is 0 (the walk then runs under ctx itself).
func (s *Server) newDrain(ctx context.Context, d time.Duration) *drain {
	if d <= 0 {
		return nil
	}
	dr := &drain{parent: ctx, clk: s.clk, after: d, hook: s.testHookLeft, held: s.testHookHeld}
	dr.ctx, dr.cancel = context.WithCancelCause(dr)
	dr.stop = context.AfterFunc(ctx, dr.left)
	return dr
}

// The drain as a context: the client's values, never canceled.

func (d *drain) Deadline() (time.Time, bool) { return time.Time{}, false }
func (d *drain) Done() <-chan struct{}       { return nil }
func (d *drain) Err() error                  { return nil }
func (d *drain) Value(key any) any           { return d.parent.Value(key) }

// left handles the client's leaving, once: the walk's context ends at
// once, or after the bound while an answer is held.
func (d *drain) left() {
	d.once.Do(func() {
		d.gone.Store(true)
		held := d.holding.Load()
		d.mu.Lock()
		if !held || d.ended {
			d.cancel(context.Canceled)
		} else {
			d.bound = d.clk.AfterFunc(d.after, func() { d.cancel(context.Canceled) })
		}
		d.mu.Unlock()
		if d.hook != nil {
			d.hook(held)
		}
	})
}

// hold marks an answer read (true) or no longer (false). An answer taken
// up after the client left is not drained, and once the held one is done
// with, nothing more is asked for a client that has left.
func (d *drain) hold(on bool) {
	if d == nil {
		return
	}
	d.holding.Store(on)
	if !on && d.gone.Load() {
		d.cancel(context.Canceled)
	}
	if on && d.held != nil {
		d.held()
	}
}

// leaving reports the client gone, with a drain to go on reading under.
// A write that failed calls it (the client may have stopped reading with
// its connection still open, which its context does not say).
func (d *drain) leaving() bool {
	if d == nil {
		return false
	}
	d.left()
	return true
}

// clientGone reports whether the client has left.
func (d *drain) clientGone() bool { return d != nil && d.gone.Load() }

// end releases the drain when the exchange is over.
func (d *drain) end() {
	if d == nil {
		return
	}
	d.stop()
	d.mu.Lock()
	d.ended = true
	if d.bound != nil {
		d.bound.Stop()
	}
	d.mu.Unlock()
	d.cancel(context.Canceled)
}
