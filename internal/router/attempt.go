package router

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/limit"
)

// Attempt is an upstream answer handed to the caller.
type Attempt struct {
	Target *Target
	// Key identifies the API key used (never the key itself).
	Key *Key
	// Resp is the upstream's response: a 2xx to deliver (report its end with
	// Succeed, Fail, Broke or Abandon), or, when Final, an error answer to
	// return as it is (body buffered, already reported). A 2xx has sent its
	// first content already: the first byte of a plain answer, or whatever
	// Request.Prepare waited for in a stream.
	Resp  *http.Response
	Final bool
	// Verdict is the attempt's outcome, once known.
	Verdict aierr.Verdict
	// Start is when the attempt was sent, on the router's clock.
	Start time.Time
	// Native reports that Resp is in Anthropic's Messages format (the
	// request went to its target untouched); otherwise it is OpenAI's.
	Native bool
	// Responses reports that Resp is a Responses API answer (the
	// client's Responses request went to its target as it is).
	Responses bool
	// Held is the caller's own: what Request.Prepare read of a stream
	// before its first content.
	Held any
	// Trace is the caller's own too: what its Observer keeps of the
	// attempt.
	Trace any
	// HedgeWait is how long the request had waited for attempts that
	// lost the race this one won, before this one was sent: upstream
	// time, which Start less the request's start includes.
	HedgeWait time.Duration

	w       *Walk
	permit  breaker.Permit
	started int64
	queued  time.Duration     // waited for the target's limits
	tokens  limit.Reservation // of the target's tpm, settled by Used
	retry   bool              // not the walk's first attempt on this target
	hedge   bool              // sent as a hedge
	// holdable: a later target could take the request, so a stream may
	// be held before it commits (Budgets.CommitAfter).
	holdable bool
	lost     atomic.Bool // canceled because another attempt won the race
	// outrun is the verdict of a loser that had been silent past its
	// hedge delay, reported when it ends unless it answered after all.
	outrun atomic.Pointer[aierr.Verdict]
	ctx    context.Context // the attempt's own, ended when it is cut or closed
	cancel context.CancelCauseFunc
	watch  watch
	done   atomic.Bool
	cut    atomic.Pointer[aierr.Verdict]
	// firstAt is when the first content came (stopwatch ns), 0 before.
	firstAt atomic.Int64
	// unservable is the target's refusal of the request: nothing was sent.
	unservable *Unservable
}

// Cut returns the verdict of the watchdog that cut the attempt, or nil.
func (a *Attempt) Cut() *aierr.Verdict { return a.cut.Load() }

// onCut is the watchdogs' report: the outage counts at once.
func (a *Attempt) onCut(v aierr.Verdict) {
	a.cut.Store(&v)
	if v.Sub == aierr.FirstByteTimeout {
		// Counted as a first content at the budget: a target that has
		// slowed raises its adaptive budget instead of being cut for
		// ever at the old one.
		a.Target.observeFirst(time.Duration(a.w.r.now()-a.started), a.w.req.Stream)
	}
	a.finish(v)
}

// Progress tells the attempt's watchdogs that a chunk of a streamed answer
// arrived: the first content ends its TTFB budget, and every chunk
// restarts its idle budget (and shows its target is not stalled).
func (a *Attempt) Progress() {
	if a.firstAt.Load() == 0 {
		a.first(a.w.r.now())
	}
	a.watch.progress()
}

// Holding reports whether the caller should still hold a stream's
// content back from its client: its first content has come, fewer than
// Budgets.CommitAfter content events have (tell each with Progress), and
// a later target could take the request. A held stream that stalls is cut
// as one that had not begun: the walk goes on to the next target.
func (a *Attempt) Holding() bool { return a.watch.holding() }

// Writing and Written bracket the caller's writes of the answer to its
// client: while a slow client blocks them, the attempt's idle and total
// budgets wait (the upstream is not silent, the client is slow), and
// the stream does not fall silent for suspicion.
func (a *Attempt) Writing() { a.watch.beginWrite() }

// Written ends what Writing began.
func (a *Attempt) Written() { a.watch.endWrite() }

// first records the time to the attempt's first content.
func (a *Attempt) first(now int64) {
	if !a.firstAt.CompareAndSwap(0, now) {
		return
	}
	d := time.Duration(now - a.started)
	a.Target.observeFirst(d, a.w.req.Stream)
	if a.Target.hedged.Load() != 0 {
		a.Target.hedged.Store(0) // it answers again
	}
}

// TTFB returns the time from sending the attempt to its first content, 0
// before it came.
func (a *Attempt) TTFB() time.Duration {
	if at := a.firstAt.Load(); at != 0 {
		return time.Duration(at - a.started)
	}
	return 0
}

// Used corrects the target's token-rate reservation with the tokens the
// answer's usage reported. Call it once, with the final count.
func (a *Attempt) Used(tokens int) { a.tokens.Settle(tokens) }

// Succeed reports that a delivered answer completed.
func (a *Attempt) Succeed() {
	if a.w.req.Stream {
		a.watch.observePace()
	}
	if !a.finish(aierr.Verdict{Kind: aierr.Success}) {
		return
	}
	a.Target.endSuspicion()
	if s := a.w.req.Session; s != "" {
		a.w.r.sticky.put(a.w.req.Flow, a.w.req.Flow+"\x00"+a.w.alias.Name+"\x00"+s, a.Target, a.w.r.now())
	}
}

// Fail reports that a delivered answer failed before anything of it reached
// the client (it broke off, or was no answer): the next call to Next goes
// on down the ladder as the verdict says. A watchdog's verdict, when one
// cut the attempt, replaces v.
func (a *Attempt) Fail(v aierr.Verdict) {
	v = a.own(v)
	a.finish(v)
	a.Verdict = v
	a.w.after(a)
	a.Final = false
}

// Broke reports that a delivered answer failed after part of it reached
// the client: its target hears of the failure, and the walk ends there
// unless the caller continues it with Next. It returns the verdict, a
// watchdog's when one cut the attempt.
func (a *Attempt) Broke(v aierr.Verdict) aierr.Verdict {
	v = a.own(v)
	a.finish(v)
	a.Verdict = v
	a.w.broken = a
	return v
}

// own returns the verdict an attempt that failed with v deserves: its
// watchdog's when one cut it; a cancellation when the request itself ended
// (the client left, the deadline passed), which is not the target's doing.
func (a *Attempt) own(v aierr.Verdict) aierr.Verdict {
	if cut := a.Cut(); cut != nil {
		return *cut
	}
	if err := a.w.ctx.Err(); err != nil {
		if v, over := a.watch.overdue(); over {
			return v
		}
		return aierr.Verdict{Kind: aierr.Canceled, Code: aierr.CodeCanceled, Message: err.Error()}
	}
	return v
}

// Abandon reports that the client went away: the attempt says nothing about
// the target's health, unless a watchdog cut it first or one of its
// budgets had run out by now (the silence the client gave up on counts
// as the watchdog would have counted it).
func (a *Attempt) Abandon() {
	if v, over := a.watch.overdue(); over {
		a.onCut(v)
		return
	}
	a.finish(aierr.Verdict{Kind: aierr.Canceled})
}

// finish records the attempt's end once: its watchdogs stop, its slot is
// freed, and its verdict goes to the breaker, the key and the target's
// health. It reports whether this call was the one that did.
func (a *Attempt) finish(v aierr.Verdict) bool {
	if !a.done.CompareAndSwap(false, true) {
		return false
	}
	a.watch.stop()
	if a.Target.bulk != nil {
		a.Target.bulk.Release()
	}
	a.report(v)
	return true
}

// report records a finished attempt's verdict in the breaker, the key and
// the target's health.
func (a *Attempt) report(v aierr.Verdict) {
	w, t := a.w, a.Target
	t.inFlight.Add(-1)
	if a.unservable != nil {
		a.permit.Ignore() // nothing was sent: nothing to learn of the target
		a.tokens.Cancel()
		return
	}
	now := w.r.now()
	if v.Sub == aierr.StreamStalled {
		t.streamFailAt.Store(now)
	}
	switch v.Breaker() {
	case aierr.BreakerSuccess:
		a.permit.Success()
	case aierr.BreakerFailure:
		a.permit.Report(breaker.Outcome{Result: breaker.Failure, RetryAfter: v.Wait})
	default:
		a.permit.Ignore()
	}
	switch v.Kind {
	case aierr.Throttle:
		// Without a hint the key still rests a moment, so the walk moves
		// to another key instead of hammering this one. Providers count
		// limits per model: the key rests for this target only.
		rest := v.Wait
		if rest <= 0 {
			rest = minThrottleRest
		}
		t.rest(a.Key, now+int64(rest))
	case aierr.Auth, aierr.Quota:
		w.r.refuseKey(t, a.Key, v)
	}
	if v.Kind != aierr.Canceled {
		t.health.observe(time.Duration(now-a.started), v.Breaker() == aierr.BreakerFailure)
	}
	if w.r.onAttempt != nil || w.req.Observer != nil {
		e := AttemptEvent{Alias: w.alias.Name, Target: t, Verdict: v, Duration: time.Duration(now - a.started),
			Retry: a.retry, Queued: a.queued, Hedge: a.hedge}
		if w.r.onAttempt != nil {
			w.r.onAttempt(e)
		}
		if o := w.req.Observer; o != nil {
			o.Ended(a, e)
		}
	}
}

// minThrottleRest is how long a key rests for a target after a throttle
// that named no wait.
const minThrottleRest = time.Second

// classify reads an error answer into a verdict, buffering its body so it
// can still be returned.
func (a *Attempt) classify(resp *http.Response, err error) {
	c := a.Target.prov.classifier
	if err != nil {
		a.Verdict = c.ClassifyError(err)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, aierr.MaxBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	a.Resp = resp
	a.Verdict = c.Classify(resp.StatusCode, resp.Header, body)
}
