package router

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock"
)

// An attempt's watchdogs run on the router's clock from the moment its
// request is sent: the first-content budget (TTFB: response headers and the
// first content, for streamed and plain answers alike), then the idle
// budget between chunks, and the attempt's total. The one that runs out
// first cuts the attempt: its target hears of the outage at that moment
// (breaker, health, metrics), and its context is canceled with the cause,
// so whatever the caller is blocked on returns.

// errAttemptTimeout is the cause of an attempt cut by its total budget.
var errAttemptTimeout = errors.New("router: the attempt took longer than its total budget")

// watch is one attempt's watchdogs.
type watch struct {
	clk    clock.Clock
	cancel context.CancelCauseFunc
	cut    func(aierr.Verdict) // reports the attempt's outage

	// mu guards the fields below; the timers' callbacks take it.
	mu     sync.Mutex
	phase  clock.Timer // the TTFB, then the idle, budget
	total  clock.Timer
	idle   time.Duration
	last   time.Time // the last chunk's arrival
	inIdle bool
	ended  bool
}

// start arms the watchdogs of an attempt being sent: ttfb (0: none) until
// the first content, total (0: none) for the whole attempt.
func (w *watch) start(ttfb, idle, total time.Duration) {
	w.idle = idle
	if ttfb > 0 {
		w.phase = w.clk.AfterFunc(ttfb, func() { w.fire(aierr.ErrFirstByteTimeout, false) })
	}
	if total > 0 {
		w.total = w.clk.AfterFunc(total, func() { w.fire(errAttemptTimeout, true) })
	}
}

// progress is called for every chunk of the answer: the first one ends the
// TTFB budget, and each one restarts the idle budget. The idle timer is
// not reset per chunk: it notes the time, and a timer that fires early
// re-arms itself for the rest.
func (w *watch) progress() {
	now := w.clk.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	w.last = now
	if w.inIdle {
		return
	}
	w.inIdle = true
	if w.phase != nil {
		w.phase.Stop()
		w.phase = nil
	}
	if w.idle > 0 {
		w.phase = w.clk.AfterFunc(w.idle, w.idleFired)
	}
}

// idleFired cuts a stream silent for its idle budget, or re-arms the timer
// for what is left of the budget since the last chunk.
func (w *watch) idleFired() {
	w.mu.Lock()
	if left := w.idle - w.clk.Now().Sub(w.last); left > 0 && !w.ended {
		w.phase = w.clk.AfterFunc(left, w.idleFired)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.fire(aierr.ErrStreamStalled, false)
}

// fire cuts the attempt, unless it has ended.
func (w *watch) fire(cause error, total bool) {
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		return
	}
	w.ended = true
	w.stopLocked()
	w.mu.Unlock()
	v := aierr.ClassifyError(cause)
	if total {
		v.Sub, v.Code = aierr.Timeout, aierr.CodeTimeout
	}
	w.cut(v)
	w.cancel(cause)
}

// stop disarms the watchdogs of an attempt that ended.
func (w *watch) stop() {
	w.mu.Lock()
	w.ended = true
	w.stopLocked()
	w.mu.Unlock()
}

func (w *watch) stopLocked() {
	if w.phase != nil {
		w.phase.Stop()
	}
	if w.total != nil {
		w.total.Stop()
	}
}

// watchedBody is a 2xx answer's body: every read that brings bytes counts
// as progress for a plain answer (a stream's progress is its events, told
// by the caller), and a read cut by a watchdog fails with its cause.
type watchedBody struct {
	rc    io.ReadCloser
	a     *Attempt
	plain bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.plain {
		b.a.watch.progress()
	}
	if err != nil && err != io.EOF {
		if cut := b.a.Cut(); cut != nil {
			return n, cut.Err()
		}
	}
	return n, err
}

// Close closes the body and ends the attempt's context (its connection
// already drained by whoever read it to the end).
func (b *watchedBody) Close() error {
	err := b.rc.Close()
	b.a.cancel(nil)
	return err
}
