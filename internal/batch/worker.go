package batch

import (
	"context"
	"errors"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/retry"
)

// backoff paces retries after outages and throttles without a wait hint:
// full jitter from 1s, doubling to 30s.
var backoff = retry.Policy{Base: time.Second, Max: 30 * time.Second}

// maxHint caps the wait an answer may ask for between two attempts.
const maxHint = 10 * time.Minute

// runLine runs one admitted line to its end: written to the output or the
// dead-letter file, or, when the run stops first, left for a later run.
func (r *Runner) runLine(ctx context.Context, l Line, k lineKey, est float64) {
	defer r.room.settle()
	o := r.serve(ctx, &l)
	r.cap.settle(est, o.Cost)
	if o.left {
		return
	}
	r.finish(k, &l, nil, o, o.Cost)
}

// finish writes a finished line and counts it. A line the room refuses
// is not written: the run stops, and the line is left for a later run.
func (r *Runner) finish(k lineKey, l *Line, raw []byte, o *Outcome, cost float64) {
	line := appendOutput(make([]byte, 0, 512+len(o.Body)), requestID(r.batchID, l), l, raw, o)
	switch err := r.sink.write(k, line, !o.ok(), cost); {
	case errors.Is(err, errNoRoom):
		r.halt(StoppedStorage, "the output files have no room for a result of "+itoa(len(line))+" bytes")
		return
	case err != nil:
		r.halt(StoppedError, "writing the output: "+err.Error())
		return
	}
	r.room.wrote(len(line))
	if o.ok() {
		r.p.ok.Add(1)
	} else {
		r.p.dead.Add(1)
	}
}

// requestID is the "id" of a line's output: batch_req_ and its key.
func requestID(batchID string, l *Line) string {
	return "batch_req_" + IdempotencyKey(batchID, l.CustomID+"\x00"+itoa(l.N))[len("fbx-batch-"):][:24]
}

// serve sends l until it has a final answer, its deadline passes during an
// outage, or the run stops (then the Outcome is left for a later run).
func (r *Runner) serve(ctx context.Context, l *Line) *Outcome {
	o := &Outcome{}
	deadline := r.clk.Now().Add(r.o.LineDeadline)
	defer r.p.waiting.Add(-1)
	outages, throttles := 0, 0
	for {
		a, ok := r.attempt(ctx, l, o)
		if !ok {
			return abandoned(o)
		}
		var d time.Duration
		switch classify(a) {
		case kindOK:
			r.aimd.OnSuccess()
			return r.answered(o, a, "")
		case kindClient:
			return r.answered(o, a, "client_error")
		case kindBudget:
			r.halt(StoppedBudget, errorMessage(a))
			return abandoned(o)
		case kindAuth:
			r.halt(StoppedAuth, errorMessage(a))
			return abandoned(o)
		case kindThrottle:
			throttles++
			r.p.throttled.Add(1)
			r.aimd.OnBackoff()
			d = r.hintOr(a, throttles)
		case kindOutage:
			outages++
			left := deadline.Sub(r.clk.Now())
			if left <= 0 {
				return r.answered(o, a, "outage")
			}
			if w := wait(a, r.clk.Now); w > 0 {
				r.aimd.OnBackoff()
			}
			d = min(r.hintOr(a, outages), left)
		}
		if clock.Sleep(r.stopCtx, r.clk, d) != nil {
			return abandoned(o)
		}
		r.p.retried.Add(1)
	}
}

// attempt sends l once, when the gate lets it. It reports false when the
// run stopped first or the send was cut by ctx.
func (r *Runner) attempt(ctx context.Context, l *Line, o *Outcome) (*answer, bool) {
	if r.gate.Acquire(r.stopCtx) != nil {
		return nil, false
	}
	r.p.sending.Add(1)
	a := r.send(ctx, l)
	r.p.sending.Add(-1)
	r.gate.Release()
	o.Attempts++
	c := cost(a.h)
	o.Cost += c
	addFloat(&r.p.costBits, c)
	if ctx.Err() != nil {
		return nil, false
	}
	return a, true
}

// hintOr is the answer's wait hint (capped), or the backoff after the n-th
// such answer.
func (r *Runner) hintOr(a *answer, n int) time.Duration {
	if w := wait(a, r.clk.Now); w > 0 {
		return min(w, maxHint)
	}
	return backoff.Backoff(n)
}

// answered fills o from the final answer a; verdict "" is a success.
func (r *Runner) answered(o *Outcome, a *answer, verdict string) *Outcome {
	o.Status, o.RequestID = a.status, a.h.Get("X-Request-Id")
	o.Target, o.Tried = a.h.Get("X-Fusebox-Target"), a.h.Get("X-Fusebox-Tried")
	o.Body = a.body.Bytes()
	o.Verdict = verdict
	switch {
	case a.tooMuch:
		o.Verdict, o.Err, o.Body = "answer_too_large", "the answer is larger than the limit of "+itoa(r.o.MaxAnswerBytes)+" bytes", nil
	case verdict != "":
		o.Err = errorMessage(a)
	default:
		o.TokensIn, o.TokensOut = usage(o.Body)
		r.p.tokensIn.Add(int64(o.TokensIn))
		r.p.tokensOut.Add(int64(o.TokensOut))
		raiseFloat(&r.p.maxBits, o.Cost)
	}
	return o
}

// abandoned marks o as left for a later run.
func abandoned(o *Outcome) *Outcome {
	o.left = true
	return o
}
