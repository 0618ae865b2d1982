package router

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
)

// Slow and half-broken streams: a stream must keep a pace (Budgets.MinRate
// and AutoRate), and a target that turns suspect, or whose breaker opens,
// has its stalled streams cut at once instead of after their idle budget.

// rateSlack is how far a stream may fall behind its rate floor: the k-th
// content event after the first is due rateSlack + k / floor after it.
const rateSlack = 2 * time.Second

// Adaptive rate floor: a third (1 / autoFactor) of the pace of the
// target's slower streams (p90 of their time per event), from streams of
// at least rateMinEvents events.
const (
	rateQuantile  = 0.9
	rateMinEvents = 8
)

// CodeTooSlow is the verdict code of a stream cut because it delivered
// content more slowly than its rate floor.
const CodeTooSlow = "stream_too_slow"

// errTooSlow is the cause of a stream cut by its rate floor.
var errTooSlow = errors.New("router: the stream delivered content more slowly than its minimum rate")

// tooSlow is the verdict of a stream cut by its rate floor: a stall of
// its target, so that it takes the stall's road (failover, continuation,
// the breaker).
func tooSlow() aierr.Verdict {
	return aierr.Verdict{Kind: aierr.Outage, Sub: aierr.StreamStalled, Code: CodeTooSlow, Message: errTooSlow.Error()}
}

// minRate returns the rate floor of streams on t (content events per
// second; 0: none).
func (a *Alias) minRate(t *Target, now int64) float64 {
	b := a.of(t)
	if !b.AutoRate {
		return b.MinRate
	}
	pace := t.auto.pace.get(now, func() time.Duration {
		if p, n := t.paces.Quantile(rateQuantile); n >= autoMinSamples {
			return p
		}
		return 0
	})
	if pace <= 0 {
		return b.MinRate
	}
	return max(b.MinRate, float64(time.Second)/float64(autoFactor*pace))
}

// observePace records the pace of a stream that succeeded: its time per
// content event after the first.
func (w *watch) observePace() {
	w.mu.Lock()
	n, from, last := w.count, w.idleSince, w.last
	w.mu.Unlock()
	if n >= rateMinEvents {
		w.a.Target.paces.Observe(last.Sub(from) / time.Duration(n))
	}
}

// track adds a stream watched for silence to its target's, once its first
// content came; untrack takes it out. w.mu is held.
func (w *watch) track() {
	t := w.a.Target
	t.streamsMu.Lock()
	if t.streams == nil {
		t.streams = map[*watch]struct{}{}
	}
	t.streams[w] = struct{}{}
	t.streamsMu.Unlock()
	w.tracked = true
}

func (w *watch) untrack() {
	if !w.tracked {
		return
	}
	w.tracked = false
	t := w.a.Target
	t.streamsMu.Lock()
	delete(t.streams, w)
	t.streamsMu.Unlock()
}

// cutStalled cuts, with a stall verdict, every stream on t silent for at
// least its suspicion threshold now: they would only wait out their idle
// budget. It returns how many it cut.
func (t *Target) cutStalled() int {
	t.streamsMu.Lock()
	ws := make([]*watch, 0, len(t.streams))
	for w := range t.streams {
		ws = append(ws, w)
	}
	t.streamsMu.Unlock()
	n := 0
	for _, w := range ws {
		if w.cutIfStalled() {
			n++
		}
	}
	return n
}

// cutIfStalled cuts the stream if it has been silent for its suspicion
// threshold, and reports whether it did.
func (w *watch) cutIfStalled() bool {
	now := w.clk.Now()
	w.mu.Lock()
	if w.ended || !w.inIdle || w.suspect <= 0 || w.writeFrom.Load() != 0 || now.Sub(w.lastChunk()) < w.suspect {
		w.mu.Unlock()
		return false
	}
	w.ended = true
	w.unmark()
	w.mu.Unlock()
	w.a.onCut(aierr.ClassifyError(aierr.ErrStreamStalled))
	w.a.cancel(aierr.ErrStreamStalled)
	return true
}

// turnSuspect makes t suspect (if it was not) and cuts its stalled
// streams.
func (r *Router) turnSuspect(t *Target) {
	if t.suspected.CompareAndSwap(false, true) {
		gap := t.letThroughFrom(r.now())
		if t.background {
			r.clk.AfterFunc(gap, func() { go r.probeSuspect(t, gap) })
		}
	}
	t.cutStalled()
}

// letThroughFrom starts t's let-through periods at now: the first request
// let through comes its breaker's open period later, the next ones
// periods grown as its open period grows. It returns the first period.
func (t *Target) letThroughFrom(now int64) time.Duration {
	gap := t.openFor
	t.probeGap.Store(int64(t.grow(gap)))
	t.probeAt.Store(now + int64(gap))
	return gap
}

// endSuspicion ends t's suspicion: it answers again.
func (t *Target) endSuspicion() {
	if t.suspected.Load() {
		t.suspected.Store(false)
	}
	if t.hedged.Load() != 0 {
		t.hedged.Store(0)
	}
}

// breakerMoved follows t's breaker: an open breaker cuts t's stalled
// streams, a closed one ends its suspicion.
func (r *Router) breakerMoved(t *Target, tr breaker.Transition) {
	switch tr.To {
	case breaker.StateOpen, breaker.StateForcedOpen:
		t.cutStalled()
	case breaker.StateClosed, breaker.StateForcedClosed:
		t.endSuspicion()
	}
}

// probeSuspect sends a suspect target a cheap request, off the client
// path, after a let-through period of gap: success ends its suspicion, a
// failure counts for its breaker and the next probe comes a grown period
// later. While its breaker is not closed the breaker's own probes take
// over: its closing ends the suspicion.
func (r *Router) probeSuspect(t *Target, gap time.Duration) {
	if !t.suspected.Load() || t.breaker.State() != breaker.StateClosed {
		return
	}
	key, _ := t.pickKey(r.now())
	permit, err := t.breaker.Allow()
	if key == nil || err != nil {
		if err == nil {
			permit.Ignore()
		}
		next := t.grow(gap)
		r.clk.AfterFunc(next, func() { go r.probeSuspect(t, next) })
		return
	}
	v := r.sendProbe(t, key)
	switch v.Breaker() {
	case aierr.BreakerSuccess:
		permit.Success()
	case aierr.BreakerFailure:
		permit.Report(breaker.Outcome{Result: breaker.Failure, RetryAfter: v.Wait})
	default:
		permit.Ignore()
	}
	// What follows the probe is in place before it is told (onProbe).
	if v.Kind == aierr.Success {
		t.endSuspicion()
	} else {
		next := t.grow(gap)
		r.clk.AfterFunc(next, func() { go r.probeSuspect(t, next) })
	}
	if r.onProbe != nil {
		r.onProbe(t, v)
	}
}

// sendProbe sends t the probe request with key and classifies its answer.
// A probe is bounded as a client's attempt would be, by the smallest ttfb
// of t's aliases (a streamed one, which must also stream its short answer
// to the end, by twice that), at most probeTimeout; one that runs out of
// its budget is a timeout of t, not nothing learned. A target whose
// streams failed lately is probed with a stream, which must also keep
// going: silent for the smallest suspicion threshold of t's aliases, it
// is a stall.
func (r *Router) sendProbe(t *Target, key *Key) aierr.Verdict {
	stream := t.streamFailAt.Load() != 0 && r.now()-t.streamFailAt.Load() < int64(streamProbeWindow)
	budget := time.Duration(t.probeTTFB.Load())
	if stream {
		budget *= 2
	}
	if budget <= 0 || budget > probeTimeout {
		budget = probeTimeout
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	timer := r.clk.AfterFunc(budget, func() { cancel(errProbeTimeout) })
	defer timer.Stop()
	call := &Call{Path: "/chat/completions", Model: t.Model, Key: key.secret, Body: probeBody(t.Model)}
	moved := func() {}
	if stream {
		call.Body, call.Stream = streamProbeBody(t.Model), true
		if gap := time.Duration(t.probeSilence.Load()); gap > 0 {
			var silence clock.Timer // from the first bytes on
			defer func() {
				if silence != nil {
					silence.Stop()
				}
			}()
			moved = func() {
				if silence == nil {
					silence = r.clk.AfterFunc(gap, func() { cancel(errProbeStalled) })
				}
				silence.Reset(gap)
			}
		}
	}
	v := sendProbeCall(ctx, t, call, moved)
	switch context.Cause(ctx) {
	case errProbeTimeout:
		return aierr.Verdict{Kind: aierr.Outage, Sub: aierr.FirstByteTimeout, Code: "probe_timeout",
			Message: "the background probe had no answer within the target's budget"}
	case errProbeStalled:
		return aierr.Verdict{Kind: aierr.Outage, Sub: aierr.StreamStalled, Code: "probe_stream_stalled",
			Message: "the background probe's stream fell silent for the target's suspicion threshold"}
	}
	return v
}

// errProbeTimeout is a probe that ran out of its budget; errProbeStalled
// a streamed probe that fell silent.
var (
	errProbeTimeout = errors.New("probe timeout")
	errProbeStalled = errors.New("probe stream stalled")
)

// sendProbeCall sends a probe and classifies its answer; a stream's is
// read to its end, which must be [DONE]; moved is called when the stream's first bytes come and whenever more
// do.
func sendProbeCall(ctx context.Context, t *Target, call *Call, moved func()) aierr.Verdict {
	resp, err := t.prov.up.Send(ctx, call)
	if err != nil {
		return t.prov.classifier.ClassifyError(err)
	}
	defer resp.Body.Close()
	if !call.Stream || resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, aierr.MaxBody))
		return t.prov.classifier.Classify(resp.StatusCode, resp.Header, body)
	}
	var tail []byte
	buf := make([]byte, 4<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			moved()
		}
		tail = append(tail, buf[:n]...)
		if len(tail) > 64 {
			tail = tail[len(tail)-64:]
		}
		if err == io.EOF {
			if bytes.Contains(tail, []byte("[DONE]")) {
				return aierr.Verdict{Kind: aierr.Success}
			}
			return aierr.Verdict{Kind: aierr.Outage, Sub: aierr.StreamStalled, Code: "probe_stream_cut", Message: "the probe's stream ended before [DONE]"}
		}
		if err != nil {
			return t.prov.classifier.ClassifyError(err)
		}
	}
}
