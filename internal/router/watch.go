package router

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
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

// watch is one attempt's watchdogs: one timer, armed for the nearest of
// the budgets' deadlines and re-armed lazily when it fires early (a chunk
// moved the idle deadline on), so a chunk costs a clock read, not a timer
// reset.
type watch struct {
	a   *Attempt
	clk clock.Clock

	// mu guards the fields below; the timer's callback takes it.
	mu         sync.Mutex
	timer      clock.Timer
	ttfb, idle time.Duration
	sent, last time.Time // when the request was sent; the last chunk's arrival
	totalAt    time.Time // zero: no total budget
	inIdle     bool      // the first content has come
	ended      bool
	// writeFrom is when a write to the client began and writeEnd when
	// the last one ended (stopwatch ns + 1; 0: none), blocked the time
	// spent in them.
	writeFrom, writeEnd, blocked atomic.Int64
	// A stream's silences, for its target's suspicion: once content
	// has flowed for suspect, the stream is mature; a mature stream quiet
	// for suspect is silent. Both are counted on the target.
	suspect        time.Duration // 0: not watched for silence
	chunks         int           // since the first content, for sampling gaps
	idleSince      time.Time
	mature, silent bool
	tracked        bool // in its target's streams
	// rate is the stream's floor in content events per second (0:
	// none), counted over count, the events since the first content, up
	// to maxEvents (the request's max_tokens; 0: unbounded).
	rate             float64
	count, maxEvents int
	// hold is how many content events after the first the caller holds
	// back before the stream commits (Budgets.CommitAfter less one),
	// each due within holdGap of the one before.
	hold    int
	holdGap time.Duration
}

// bounds are a streamed attempt's bounds beyond its budgets: its
// suspicion threshold, rate floor (over at most maxEvents) and hold.
type bounds struct {
	suspect   time.Duration
	rate      float64
	maxEvents int
	hold      int
	holdGap   time.Duration
}

// start arms the watchdogs of an attempt being sent: ttfb (0: none) until
// the first content, then idle (0: none) between chunks, and total (0:
// none) for the whole attempt.
func (w *watch) start(ttfb, idle, total time.Duration, b bounds) {
	w.mu.Lock() // the timer may fire before start returns
	defer w.mu.Unlock()
	w.ttfb, w.idle, w.suspect = ttfb, idle, b.suspect
	w.rate, w.maxEvents = b.rate, b.maxEvents
	w.hold, w.holdGap = b.hold, b.holdGap
	w.sent = w.clk.Now()
	if total > 0 {
		w.totalAt = w.sent.Add(total)
	}
	if at, ok := w.next(); ok {
		w.timer = w.clk.AfterFunc(at.Sub(w.sent), w.fired)
	}
}

// next returns when the timer should next fire: the nearest deadline or
// checkpoint, if any.
func (w *watch) next() (time.Time, bool) {
	at, ok := w.deadline()
	if c, cok := w.checkpoint(); cok && (!ok || c.Before(at)) {
		return c, true
	}
	return at, ok
}

// deadline returns the nearest deadline of the budgets, if any.
func (w *watch) deadline() (time.Time, bool) {
	var at time.Time
	switch {
	case !w.inIdle && w.ttfb > 0:
		at = w.sent.Add(w.ttfb)
	case w.inIdle && w.idle > 0:
		at = w.lastChunk().Add(w.idle)
	}
	if total, ok := w.total(); ok && (at.IsZero() || total.Before(at)) {
		at = total
	}
	if due, ok := w.due(); ok && (at.IsZero() || due.Before(at)) {
		at = due
	}
	if held, ok := w.heldDue(); ok && (at.IsZero() || held.Before(at)) {
		at = held
	}
	return at, !at.IsZero()
}

// heldDue returns when the next held content event is due: holdGap after
// the last one, while the stream is held.
func (w *watch) heldDue() (time.Time, bool) {
	if !w.holdingLocked() || w.holdGap <= 0 {
		return time.Time{}, false
	}
	return w.lastChunk().Add(w.holdGap), true
}

// holdingLocked reports whether the stream is still held: its first
// content came, and fewer than hold events after it. w.mu is held.
func (w *watch) holdingLocked() bool { return w.inIdle && w.count < w.hold }

// holding is holdingLocked for the caller.
func (w *watch) holding() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.holdingLocked()
}

// due returns when the stream's next content event is due under its rate
// floor: rateSlack + k / rate after its first content for the k-th event
// after it (k at most maxEvents), moved on by the time spent blocked on
// the client.
func (w *watch) due() (time.Time, bool) {
	if w.rate <= 0 || !w.inIdle {
		return time.Time{}, false
	}
	k := w.count + 1
	if w.maxEvents > 0 {
		k = min(k, w.maxEvents)
	}
	d := rateSlack + time.Duration(float64(k)/w.rate*float64(time.Second)) + time.Duration(w.blocked.Load())
	return w.idleSince.Add(d), true
}

// checkpoint returns when a stream next changes its standing for
// suspicion: it matures, or (mature) falls silent.
func (w *watch) checkpoint() (time.Time, bool) {
	switch {
	case w.suspect <= 0 || !w.inIdle || w.silent:
		return time.Time{}, false
	case !w.mature:
		return w.idleSince.Add(w.suspect + 1), true
	}
	return w.lastChunk().Add(w.suspect + 1), true // longer than suspect
}

// mark updates a stream's standing for suspicion at now, and reports
// whether its target has turned suspect enough to cut its stalled
// streams: every mature stream on it is silent, and at least
// stallQuorum are.
func (w *watch) mark(now time.Time) bool {
	if w.suspect <= 0 || !w.inIdle {
		return false
	}
	t := w.a.Target
	if !w.mature && now.Sub(w.idleSince) > w.suspect {
		w.mature = true
		t.mature.Add(1)
		if now.Sub(w.lastChunk()) <= w.suspect {
			t.endSuspicion() // content has flowed for suspect_after: it answers
		}
	}
	if w.mature && !w.silent && now.Sub(w.lastChunk()) > w.suspect {
		w.silent = true
		n := t.silent.Add(1)
		if n == 1 && !t.suspected.Load() {
			// Suspicion may begin: the first request let through to see
			// whether the target recovered comes a period later.
			t.letThroughFrom(w.a.w.r.now())
		}
		return n >= stallQuorum && n >= t.mature.Load()
	}
	return false
}

// unmark takes an ended stream out of its target's counts.
func (w *watch) unmark() {
	w.untrack()
	t := w.a.Target
	if w.silent {
		w.silent = false
		t.silent.Add(-1)
	}
	if w.mature {
		w.mature = false
		t.mature.Add(-1)
	}
}

// stallQuorum is how many silent streams, all of the target's mature
// ones, make it suspect enough to cut them: one alone may be a pause of
// its own, and keeps its idle budget (it still steers new requests away).
const stallQuorum = 2

// gapSample is one in how many gaps between chunks is recorded for the
// target's adaptive suspicion threshold: a sample is plenty for a p99, and
// each costs a clock read.
const gapSample = 4

// progress is called for every chunk of the answer: the first one ends the
// TTFB budget, and each one restarts the idle budget.
func (w *watch) progress() {
	now := w.clk.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if w.inIdle && w.suspect > 0 {
		if w.chunks++; w.chunks%gapSample == 0 {
			w.a.Target.gaps.Observe(now.Sub(w.last))
		}
	}
	w.last = now
	if w.inIdle {
		w.count++
		if w.silent {
			w.silent = false
			w.a.Target.silent.Add(-1)
			w.rearm(now) // the next silence is a checkpoint away
		}
		return
	}
	w.inIdle, w.idleSince = true, now
	if w.suspect > 0 {
		w.track()
	}
	w.rearm(now)
}

// rearm sets the timer for the nearest deadline or checkpoint from now,
// at least a nanosecond ahead: a fake clock may run a timer due at once
// on the caller's goroutine, which holds mu.
func (w *watch) rearm(now time.Time) {
	at, ok := w.next()
	switch {
	case !ok && w.timer != nil:
		w.timer.Stop()
	case ok && w.timer != nil:
		w.timer.Reset(max(at.Sub(now), time.Nanosecond))
	case ok:
		w.timer = w.clk.AfterFunc(max(at.Sub(now), time.Nanosecond), w.fired)
	}
}

// beginWrite and endWrite bracket the caller's writes to its client,
// with atomics only (they run for every event): a slow client is not the
// upstream's silence, so while a write blocks the idle and total budgets
// wait, the silence is counted from the write's end, and total is moved
// on by the time blocked.
func (w *watch) beginWrite() { w.writeFrom.Store(w.a.w.r.now() + 1) } // + 1: 0 is "none"

func (w *watch) endWrite() {
	now := w.a.w.r.now()
	if from := w.writeFrom.Swap(0); from != 0 {
		w.blocked.Add(now - (from - 1))
	}
	w.writeEnd.Store(now + 1)
}

// since returns a time of the router's stopwatch as a time of the clock.
func (w *watch) since(ns int64) time.Time { return w.sent.Add(time.Duration(ns - w.a.started)) }

// lastChunk returns when the stream last moved: a chunk, or the end of a
// write to the client.
func (w *watch) lastChunk() time.Time {
	if end := w.writeEnd.Load(); end != 0 {
		if t := w.since(end - 1); t.After(w.last) {
			return t
		}
	}
	return w.last
}

// total returns the deadline of the total budget, moved on by the time
// spent blocked on the client.
func (w *watch) total() (time.Time, bool) {
	if w.totalAt.IsZero() {
		return time.Time{}, false
	}
	return w.totalAt.Add(time.Duration(w.blocked.Load())), true
}

// fired cuts the attempt whose deadline has passed; otherwise it updates
// a stream's standing for suspicion and re-arms the timer for what comes
// next (a chunk may have moved the idle deadline on).
func (w *watch) fired() {
	now := w.clk.Now()
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		return
	}
	if w.writeFrom.Load() != 0 {
		// Blocked on the client: nothing to blame the upstream for yet.
		w.last = now
		w.rearm(now)
		w.mu.Unlock()
		return
	}
	suspect := w.mark(now)
	v, cause, over := w.overdueLocked(now)
	if !over {
		w.rearm(now)
		w.mu.Unlock()
		if suspect {
			w.a.w.r.turnSuspect(w.a.Target)
		}
		return
	}
	w.ended = true
	w.unmark()
	w.mu.Unlock()
	w.a.onCut(v)
	w.a.cancel(cause)
	if suspect {
		w.a.w.r.turnSuspect(w.a.Target)
	}
}

// overdueLocked reports whether a budget has run out at now, with the
// verdict and cause of the cut it calls for. w.mu is held.
func (w *watch) overdueLocked(now time.Time) (aierr.Verdict, error, bool) {
	if at, ok := w.deadline(); !ok || now.Before(at) {
		return aierr.Verdict{}, nil, false
	}
	var cause error
	switch {
	case !w.totalAt.IsZero() && !now.Before(w.totalAt.Add(time.Duration(w.blocked.Load()))):
		cause = errAttemptTimeout
	case w.inIdle && w.idle > 0 && !now.Before(w.lastChunk().Add(w.idle)):
		cause = aierr.ErrStreamStalled
	case w.holdingLocked() && w.holdGap > 0 && !now.Before(w.lastChunk().Add(w.holdGap)):
		cause = aierr.ErrStreamStalled // held, so nothing reached the client
	case w.inIdle:
		return tooSlow(), errTooSlow, true
	default:
		cause = aierr.ErrFirstByteTimeout
	}
	v := aierr.ClassifyError(cause)
	if cause == errAttemptTimeout {
		v.Sub, v.Code = aierr.Timeout, aierr.CodeTimeout
	}
	return v, cause, true
}

// overdue returns the verdict the watchdogs would give an attempt that
// ends now without an answer (its client gave up, another attempt won):
// a cut's when one of its budgets has run out, so that the silence it
// saw is counted as the watchdog would have counted it.
func (w *watch) overdue() (aierr.Verdict, bool) {
	now := w.clk.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.writeFrom.Load() != 0 {
		return aierr.Verdict{}, false
	}
	v, _, over := w.overdueLocked(now)
	return v, over
}

// stop disarms the watchdogs of an attempt that ended.
func (w *watch) stop() {
	w.mu.Lock()
	w.ended = true
	w.unmark()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
}

// watchedBody is a 2xx answer's body: every read that brings bytes counts
// as progress for a plain answer (a stream's progress is its events, told
// by the caller), and a read cut by a watchdog fails with its cause. A
// plain answer's first byte is read ahead (peek) and given back first.
type watchedBody struct {
	rc     io.ReadCloser
	a      *Attempt
	plain  bool
	first  [1]byte
	peeked bool // first holds a byte not yet read
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.peeked && len(p) > 0 {
		p[0], b.peeked = b.first[0], false
		return 1, nil
	}
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

// peek reads a plain answer's first byte ahead: its arrival is the first
// content. An empty body is left for the caller to find no answer.
func (b *watchedBody) peek() error {
	for {
		n, err := b.rc.Read(b.first[:])
		if n > 0 {
			b.peeked = true
			b.a.first(b.a.w.r.now())
			b.a.watch.progress()
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if cut := b.a.Cut(); cut != nil {
				return cut.Err()
			}
			return err
		}
	}
}

// Close closes the body and ends the attempt's context (its connection
// already drained by whoever read it to the end).
func (b *watchedBody) Close() error {
	err := b.rc.Close()
	b.a.cancel(nil)
	return err
}
