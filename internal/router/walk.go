package router

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/retry"
)

// Request is a client request as the walk needs it.
type Request struct {
	// Path is "/chat/completions" or "/embeddings".
	Path string
	// Body is the client's JSON body and Fields what aireq read of it; the
	// model is replaced per target.
	Body   []byte
	Fields aireq.Fields
	Stream bool
	// Tokens estimates the call's tokens for the pacers.
	Tokens int
	// IdempotencyKey is the client's, or "". Upstream attempts carry a key
	// derived from it (or a random one), renewed after a refusal.
	IdempotencyKey string
	// Native is the client's Anthropic Messages body when it came in that
	// format; targets whose upstream speaks Messages get it untouched.
	Native []byte
	// Session, if set, is a conversation's hint (x-fusebox-session or the
	// request's user): the target that last served it is tried first.
	Session string
	// Flow names the caller (a client key) and Weight its share: when a
	// target is at its rate or concurrency limit, the requests waiting for
	// it are served by weighted fair queueing across flows. Weight 0 counts
	// as 1.
	Flow   string
	Weight float64
}

// Walk is one request's way down an alias's ladder. It is not safe for
// concurrent use; one goroutine drives it with Next.
type Walk struct {
	r     *Router
	alias *Alias
	req   *Request
	order []*Target
	i     int // current target
	n     int // attempts on it
	wait  time.Duration
	// Attempts counts upstream attempts made.
	Attempts int
	// Skips lists every target passed over or failed, in order.
	Skips    []Skip
	soonest  int64 // ns on the router's stopwatch, 0: unknown
	idemBase string
	idemGen  int
	pending  *Attempt
	// ctx is the context of the Next call in progress: after reads its
	// deadline.
	ctx context.Context
}

// Attempt is an upstream answer handed to the caller.
type Attempt struct {
	Target *Target
	// Key identifies the API key used (never the key itself).
	Key *Key
	// Resp is the upstream's response: a 2xx to deliver (report its end with
	// Succeed or Fail), or, when Final, an error answer to return as it is
	// (body buffered, already reported).
	Resp    *http.Response
	Final   bool
	Verdict aierr.Verdict
	// Start is when the attempt was sent, on the router's clock.
	Start time.Time
	// Native reports that Resp is in Anthropic's Messages format (the
	// request went to its target untouched); otherwise it is OpenAI's.
	Native bool

	w       *Walk
	permit  breaker.Permit
	started int64
	queued  time.Duration // waited for the target's limits
	retry   bool          // not the walk's first attempt on this target
	done    bool
}

// Start begins a walk for req on alias a.
func (r *Router) Start(a *Alias, req *Request) *Walk {
	w := &Walk{r: r, alias: a, req: req, order: a.order(r.rand), ctx: context.Background()}
	if req.Session != "" {
		if t := r.sticky.get(a.Name+"\x00"+req.Session, r.now()); t != nil {
			w.order = first(w.order, t)
		}
	}
	w.idemBase = req.IdempotencyKey
	if w.idemBase == "" {
		var b [12]byte
		rand.Read(b[:])
		w.idemBase = hex.EncodeToString(b[:])
	}
	a.budget.Request()
	return w
}

// Next returns the next answer worth handing to the client: a 2xx to
// deliver, or a Final client error. It returns *NoTargetError when the
// ladder is exhausted, or the context's error.
func (w *Walk) Next(ctx context.Context) (*Attempt, error) {
	w.ctx = ctx
	if w.pending != nil && !w.pending.done {
		w.pending.Abandon()
	}
	w.pending = nil
	for w.i < len(w.order) {
		if w.wait > 0 {
			if err := clock.Sleep(ctx, w.r.clk, w.wait); err != nil {
				return nil, err
			}
			w.wait = 0
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, deliver := w.try(ctx, w.order[w.i])
		if deliver {
			w.pending = a
			return a, nil
		}
		if a != nil && a.Final {
			return a, nil
		}
		if a != nil && a.Verdict.Kind == aierr.Canceled {
			return nil, context.Canceled
		}
	}
	return nil, w.noTarget()
}

func (w *Walk) noTarget() *NoTargetError {
	e := &NoTargetError{Alias: w.alias.Name, Skips: w.Skips}
	if w.soonest > 0 {
		e.RetryAfter = max(time.Duration(w.soonest-w.r.now()), 0)
	}
	return e
}

// failover moves to the next target.
func (w *Walk) failover() { w.i, w.n = w.i+1, 0 }

// failoverFrom moves to the next target after a failed attempt, and says
// so when there is a next target.
func (w *Walk) failoverFrom(a *Attempt) {
	if w.r.onFailover != nil && w.i < len(w.order)-1 {
		w.r.onFailover(a.Target, a.Verdict)
	}
	w.failover()
}

func (w *Walk) skip(t *Target, reason string, until int64) {
	w.Skips = append(w.Skips, Skip{Target: t.Name, Reason: reason})
	if w.r.onSkip != nil {
		w.r.onSkip(t, reason)
	}
	if until > 0 && (w.soonest == 0 || until < w.soonest) {
		w.soonest = until
	}
	w.failover()
}

// try makes one attempt on t. It returns the attempt and whether it is a
// 2xx to deliver; otherwise it has already moved the walk on (or made the
// attempt Final).
func (w *Walk) try(ctx context.Context, t *Target) (*Attempt, bool) {
	now := w.r.now()
	key, until := t.prov.pickKey(now)
	if key == nil {
		w.skip(t, "no usable key", until)
		return nil, false
	}
	permit, err := t.breaker.Allow()
	if err != nil {
		var open *breaker.OpenError
		errors.As(err, &open)
		w.skip(t, "breaker open", now+int64(open.RetryAfter()))
		return nil, false
	}
	a := &Attempt{Target: t, Key: key, w: w, permit: permit}
	if t.Limited() {
		// Only a target with limits can make the attempt wait.
		queued := w.r.now()
		if reason, until, ok := w.admit(ctx, t); !ok {
			permit.Ignore()
			w.skip(t, reason, until)
			return nil, false
		}
		a.queued = time.Duration(w.r.now() - queued)
	}
	w.n++
	w.Attempts++
	a.started, a.Start, a.retry = w.r.now(), w.r.clk.Now(), w.n > 1
	t.inFlight.Add(1)
	call := w.call(t, key)
	if ms, ok := t.prov.up.(messagesSpeaker); ok && w.req.Native != nil && ms.SpeaksMessages() {
		call.Native = aireq.Scan(w.req.Native).WithModel(w.req.Native, t.Model)
		a.Native = true
	}
	resp, err := t.prov.up.Send(ctx, call)
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a.Resp = resp
		return a, true
	}
	a.classify(resp, err)
	a.release()
	a.report(a.Verdict)
	w.after(a)
	return a, false
}

// admit waits for t's limits. A call the rate limit cannot take at once
// queues for the target's turn, in the request's flow with its weight, so
// waiting requests reach the rate limit in weighted fair order; the one
// holding the turn reserves its slot and waits for it. Turn and slot
// together wait at most the target's MaxWait.
func (w *Walk) admit(ctx context.Context, t *Target) (reason string, until int64, ok bool) {
	if t.pacer != nil {
		if _, ok, _ := t.pacer.TryReserve(w.req.Tokens); !ok {
			if reason, until, ok := w.paced(ctx, t); !ok {
				return reason, until, false
			}
		}
	}
	if t.bulk != nil {
		if err := t.bulk.AcquireFlow(ctx, w.req.Flow, w.req.Weight); err != nil {
			return "at its concurrency limit", 0, false
		}
	}
	return "", 0, true
}

// paced waits for t's turn and then for a slot of its rate limit.
func (w *Walk) paced(ctx context.Context, t *Target) (reason string, until int64, ok bool) {
	start := w.r.now()
	if err := t.turn.AcquireFlow(ctx, w.req.Flow, w.req.Weight); err != nil {
		return "rate limited", 0, false
	}
	defer t.turn.Release()
	r, wait := t.pacer.Reserve(w.req.Tokens)
	if wait == 0 {
		return "", 0, true
	}
	now := w.r.now()
	left := t.maxWait - time.Duration(now-start)
	if dl, ok := ctx.Deadline(); ok {
		left = min(left, time.Until(dl))
	}
	if wait > left {
		r.Cancel()
		return "rate limited", now + int64(wait), false
	}
	if err := clock.Sleep(ctx, w.r.clk, wait); err != nil {
		r.Cancel()
		return "rate limited", 0, false
	}
	return "", 0, true
}

// call builds the upstream call: the body with t's model, the key, and the
// attempt's idempotency key.
func (w *Walk) call(t *Target, k *Key) *Call {
	body := w.req.Fields.WithModel(w.req.Body, t.Model)
	return &Call{
		Path: w.req.Path, Model: t.Model, Key: k.secret, Body: body, Stream: w.req.Stream,
		IdempotencyKey: w.idemBase + "-" + strconv.Itoa(w.idemGen),
	}
}

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

// report records a finished attempt's verdict in the breaker, the key and
// the target's health.
func (a *Attempt) report(v aierr.Verdict) {
	a.done = true
	w, t := a.w, a.Target
	t.inFlight.Add(-1)
	now := w.r.now()
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
		// to another key instead of hammering this one.
		a.Key.throttledUntil.Store(now + int64(max(v.Wait, w.throttleWait())))
	case aierr.Auth, aierr.Quota:
		a.Key.disabledUntil.Store(now + int64(w.r.authCooldown))
		if w.r.onKey != nil {
			w.r.onKey(KeyEvent{Key: a.Key.ID, Target: t.Name, Verdict: v, For: w.r.authCooldown})
		}
	}
	if v.Kind != aierr.Canceled {
		t.health.observe(time.Duration(now-a.started), v.Breaker() == aierr.BreakerFailure)
	}
	if w.r.onAttempt != nil {
		w.r.onAttempt(AttemptEvent{Alias: w.alias.Name, Target: t, Verdict: v, Duration: time.Duration(now - a.started),
			Retry: a.retry, Queued: a.queued})
	}
}

func (a *Attempt) release() {
	if a.Target.bulk != nil {
		a.Target.bulk.Release()
	}
}

// after decides, from a failed attempt's verdict, where the walk goes next.
func (w *Walk) after(a *Attempt) {
	v := a.Verdict
	t := a.Target
	last := w.i == len(w.order)-1
	if v.NewIdempotencyKey || v.Kind == aierr.Throttle {
		w.idemGen++
	}
	w.Skips = append(w.Skips, Skip{Target: t.Name, Reason: describe(v)})
	switch v.Kind {
	case aierr.Canceled:
		return
	case aierr.ClientError:
		if !last && slices.Contains(w.alias.spec.FailoverOn, v.Sub) {
			w.failoverFrom(a)
			return
		}
		a.Final = true
		return
	case aierr.Auth, aierr.Quota:
		// only this key is out: the next attempt on t takes another
		if _, until := t.prov.pickKey(w.r.now()); until == 0 && w.hasKey(t) {
			return
		}
		w.failoverFrom(a)
		return
	case aierr.Throttle:
		if w.hasKey(t) {
			return // another key of the same target, at once
		}
		if !last && v.Wait > w.throttleWait() {
			w.failoverFrom(a)
			return
		}
	default: // Outage, Capacity
		if !last {
			w.failoverFrom(a)
			return
		}
	}
	wait, reason := w.alias.spec.Retry.Next(w.n, v.Err(), retry.Remaining(w.ctx, w.r.clk.Now()))
	if reason == retry.ReasonNone && w.alias.budget.TryRetry() {
		w.wait = wait
		return
	}
	w.failoverFrom(a)
}

// hasKey reports whether t's provider has a usable key now.
func (w *Walk) hasKey(t *Target) bool {
	k, _ := t.prov.pickKey(w.r.now())
	return k != nil
}

func (w *Walk) throttleWait() time.Duration {
	if d := w.alias.spec.ThrottleWait; d > 0 {
		return d
	}
	return time.Second
}

// describe says in a few words why an attempt failed.
func describe(v aierr.Verdict) string {
	s := v.Kind.String()
	if v.Status > 0 {
		s = strconv.Itoa(v.Status) + " " + s
	}
	if v.Code != "" {
		s += " (" + v.Code + ")"
	}
	return s
}

// Succeed reports that a delivered answer completed; ttfb is the time to
// its first content (0 if not streamed).
func (a *Attempt) Succeed(ttfb time.Duration) {
	if a.done {
		return
	}
	a.release()
	if ttfb > 0 {
		a.Target.ObserveTTFB(ttfb)
	}
	a.report(aierr.Verdict{Kind: aierr.Success})
	if s := a.w.req.Session; s != "" {
		a.w.r.sticky.put(a.w.alias.Name+"\x00"+s, a.Target, a.w.r.now())
	}
}

// Fail reports that a delivered answer failed (a stream that stalled or
// broke). Before the answer was committed to the client, the next call to
// Next goes on down the ladder as the verdict says.
func (a *Attempt) Fail(v aierr.Verdict) {
	if a.done {
		return
	}
	a.release()
	a.Verdict = v
	a.report(v)
	a.w.after(a)
	a.Final = false
}

// Abandon reports that the client went away: the attempt says nothing about
// the target's health.
func (a *Attempt) Abandon() {
	if a.done {
		return
	}
	a.release()
	a.report(aierr.Verdict{Kind: aierr.Canceled})
}
