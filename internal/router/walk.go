package router

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/limit"
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
	// Prepare, if set, reads a streamed 2xx answer until its first content
	// (the attempt's TTFB watchdog running), keeping what it read in
	// Attempt.Held and calling Attempt.Progress for each event. A verdict
	// other than Success fails the attempt before the client sees it, and
	// the walk goes on. Plain answers are read to their first byte by the
	// walk itself. (An interface, so that a caller passes itself without
	// the allocation of a method value.)
	Prepare Preparer
	// Flow names the caller (a client key) and Weight its share: when a
	// target is at its rate or concurrency limit, the requests waiting for
	// it are served by weighted fair queueing across flows. Weight 0 counts
	// as 1.
	Flow   string
	Weight float64
	// Header are the client's headers to pass to the upstream (already
	// chosen: never its credentials); each adapter sends what its provider
	// understands.
	Header http.Header
	// Observer, if set, is told of this request's attempts and skips.
	Observer Observer
	// Responses is the client's own Responses API body, when it may go as
	// it is to targets whose upstream serves that API (the model
	// rewritten); the others get Body, its chat translation. Unservable,
	// when the request has no chat translation, refuses it to those.
	Responses  []byte
	Unservable *Unservable
}

// An Observer follows one request's walk (for its trace): Sending as an
// attempt is about to be sent (the call's Header is the attempt's own, to
// add to), Ended when it has been reported, Skipped for each target passed
// over. Sending and Skipped run on the walk's goroutine; Ended may run on
// an attempt's own (a hedge, a watchdog).
type Observer interface {
	Sending(a *Attempt, c *Call)
	Ended(a *Attempt, e AttemptEvent)
	Skipped(t *Target, reason string)
}

// Walk is one request's way down an alias's ladder. It is not safe for
// concurrent use; one goroutine drives it with Next.
type Walk struct {
	r        *Router
	released bool // see Release
	alias    *Alias
	req      *Request
	order    []*Target
	i        int // current target
	n        int // attempts on it
	wait     time.Duration
	// Attempts counts upstream attempts made.
	Attempts int
	// Skips lists every target passed over or failed, in order.
	Skips   []Skip
	soonest int64 // ns on the router's stopwatch, 0: unknown
	// refused is the first target's refusal of the request's fields, and
	// refusals how many targets refused them.
	refused  *Unservable
	refusals int
	// idemRaw is the walk's random idempotency key, or the hash of a
	// client's key too long to send on; idemTag the client's own tag for
	// a key it chose (see idempotencyKey).
	idemRaw [12]byte
	idemTag [4]byte
	idemGen int
	pending *Attempt
	// Lost lists the targets of hedged attempts canceled because another
	// won: sent, their cost unknown.
	Lost []*Target
	// HedgeWait is how long the request waited for attempts that lost a
	// race before the attempt that won was sent (the hedge delays spent
	// on them): upstream time, not the gateway's own.
	HedgeWait time.Duration
	// failed is the attempt the walk failed over from, until the next
	// target is sent a request (that is a failover); broken the
	// delivered attempt that broke after commit.
	failed, broken *Attempt
	// suspects are the targets skipped as suspect; lastResort is set
	// once the walk tries them after the rest of the ladder failed.
	suspects   []*Target
	lastResort bool
	// prefill is a continuation's body for targets that continue a final
	// assistant message (Continue).
	prefill []byte
	// ctx is the context of the Next call in progress: after reads its
	// deadline.
	ctx context.Context
}

// Continue makes the rest of the walk a continuation of an answer that
// broke after part of it reached the client: the targets after the one
// that broke are sent body (which asks to go on from the text delivered)
// or, when their upstream continues a final assistant message (Anthropic's
// prefill), prefill. Call Next next.
func (w *Walk) Continue(body, prefill []byte) {
	w.req.Body, w.req.Fields, w.req.Native, w.prefill = body, aireq.Scan(body), nil, prefill
}

// Start begins a walk for req on alias a.
func (r *Router) Start(a *Alias, req *Request) *Walk {
	w := &Walk{r: r, alias: a, req: req, order: a.order(r.rand), ctx: context.Background()}
	if req.Session != "" {
		if t := r.sticky.get(req.Flow+"\x00"+a.Name+"\x00"+req.Session, a, r.now()); t != nil {
			w.order = first(w.order, t)
		}
	}
	w.idemKeys()
	a.budget.Request()
	if a.hedges != nil {
		a.hedges.Request()
	}
	return w
}

// Next returns the next answer worth handing to the client: a 2xx to
// deliver, or a Final client error. It returns *NoTargetError when the
// ladder is exhausted, or the context's error. After an attempt Broke, Next
// goes on from the target after it.
func (w *Walk) Next(ctx context.Context) (*Attempt, error) {
	if w.released {
		return nil, errReleased
	}
	w.ctx = ctx
	if p := w.pending; p != nil && !p.done.Load() {
		p.Abandon()
	}
	w.pending = nil
	if b := w.broken; b != nil {
		w.broken = nil
		w.addSkip(b.Target, describe(b.Verdict)+" after it began")
		w.failoverFrom(b)
	}
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
		a, deliver := w.attempt(ctx, w.order[w.i])
		if deliver {
			w.pending = a
			return a, nil
		}
		if a != nil && a.Final {
			return a, nil
		}
		if a != nil && a.Verdict.Kind == aierr.Canceled {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, context.Canceled
		}
	}
	if len(w.suspects) > 0 && !w.lastResort {
		// Suspicion only puts a target last: when nothing after it could
		// answer, it is tried after all.
		w.order, w.i, w.n, w.lastResort = w.suspects, 0, 0, true
		return w.Next(ctx)
	}
	return nil, w.noTarget()
}

// unservable passes over a target that refused the request's fields: it
// was not an attempt, and the next target may serve them.
func (w *Walk) unservable(t *Target, u *Unservable) {
	w.Attempts--
	w.n--
	w.refusals++
	if w.refused == nil {
		w.refused = u
	}
	w.skip(t, "cannot serve "+u.Param, 0)
}

// failover moves to the next target.
func (w *Walk) failover() { w.i, w.n = w.i+1, 0 }

// failoverFrom moves to the next target after a failed attempt; the
// failover is counted when the next target is sent the request.
func (w *Walk) failoverFrom(a *Attempt) {
	w.failed = a
	w.failover()
}

func (w *Walk) skip(t *Target, reason string, until int64) {
	reason = w.addSkip(t, reason)
	if w.r.onSkip != nil {
		w.r.onSkip(t, reason)
	}
	if o := w.req.Observer; o != nil {
		o.Skipped(t, reason)
	}
	if until > 0 && (w.soonest == 0 || until < w.soonest) {
		w.soonest = until
	}
	w.failover()
}

// attempt tries t: once, or as a race with hedges on the targets after it
// when the alias hedges. It returns the attempt and whether it is a 2xx to
// deliver; otherwise it has already moved the walk on (or made the attempt
// Final).
func (w *Walk) attempt(ctx context.Context, t *Target) (*Attempt, bool) {
	if w.hedging() {
		return w.race(ctx, t)
	}
	a := w.admit(ctx, t)
	if a == nil {
		return nil, false
	}
	return a, w.send(ctx, a)
}

// admit readies an attempt on t: a usable key, its breaker's permit, room
// in its limits. It returns nil, having skipped t, when t cannot take it.
func (w *Walk) admit(ctx context.Context, t *Target) *Attempt {
	now := w.r.now()
	if w.i < len(w.order)-1 && !w.lastResort && w.alias.suspect(t, now) {
		w.suspects = append(w.suspects, t)
		w.skip(t, "suspected stalled", 0)
		return nil
	}
	if t.background && w.i < len(w.order)-1 && probing(t.breaker.State()) {
		// Its background probe decides: a client's request that took the
		// probe's place would wait on a target that may hang or drip.
		w.skip(t, "breaker open", 0)
		return nil
	}
	key, until := t.pickKey(now)
	if key == nil {
		w.skip(t, "no usable key", until)
		return nil
	}
	permit, err := t.breaker.Allow()
	if err != nil {
		var open *breaker.OpenError
		errors.As(err, &open)
		w.skip(t, "breaker open", now+int64(open.RetryAfter()))
		return nil
	}
	a := &Attempt{Target: t, Key: key, w: w, permit: permit}
	if t.Limited() {
		// Only a target with limits can make the attempt wait.
		queued := w.r.now()
		if reason, until, ok := w.limits(ctx, a); !ok {
			permit.Ignore()
			w.skip(t, reason, until)
			return nil
		}
		a.queued = time.Duration(w.r.now() - queued)
	}
	return a
}

// send sends an admitted attempt, and reports whether it is a 2xx to
// deliver; otherwise the attempt is reported and the walk moved on.
func (w *Walk) send(ctx context.Context, a *Attempt) bool {
	if err := w.launch(ctx, a); err == nil {
		return true
	}
	w.after(a)
	return false
}

// launch sends an admitted attempt under its watchdogs and waits for its
// first content. It returns nil for a 2xx to deliver; otherwise the
// attempt is reported, its verdict set, and the error is its reason.
func (w *Walk) launch(ctx context.Context, a *Attempt) error {
	return w.exchange(ctx, a, w.begin(ctx, a))
}

// errReleased is Next after Release: there is no request left to send.
var errReleased = errors.New("router: the walk's request was released")

// Release lets go of the request's bodies, for a caller that will ask for
// no other attempt: a stream that has begun and will not be continued
// holds its conversation no longer, though it lasts minutes. Next fails
// after it. Call it from the goroutine that calls Next.
func (w *Walk) Release() {
	w.released = true
	w.req.Body, w.req.Native, w.req.Responses, w.prefill = nil, nil, nil, nil
	w.req.Fields = w.req.Fields.Detached()
}

// begin counts an attempt about to be sent and builds its call. It runs
// on the walk's goroutine; exchange may then run on another.
func (w *Walk) begin(ctx context.Context, a *Attempt) *Call {
	t := a.Target
	w.n++
	w.Attempts++
	if f := w.failed; f != nil && f.Target != t && w.r.onFailover != nil {
		w.r.onFailover(f.Target, f.Verdict)
	}
	w.failed = nil
	a.started, a.Start, a.retry = w.r.now(), w.r.clk.Now(), w.n > 1
	a.holdable = w.i < len(w.order)-1
	t.inFlight.Add(1)
	call := w.call(t, a.Key)
	if ms, ok := t.prov.up.(messagesSpeaker); ok && w.req.Native != nil && ms.SpeaksMessages(t.Model) {
		call.Native = aireq.Scan(w.req.Native).WithModel(w.req.Native, t.Model)
		a.Native = true
	}
	if rs, ok := t.prov.up.(responsesSpeaker); ok && w.req.Responses != nil && rs.SpeaksResponses() {
		call.Path, call.Body = "/responses", aireq.Scan(w.req.Responses).WithModel(w.req.Responses, t.Model)
		a.Responses = true
	}
	a.ctx, a.cancel = context.WithCancelCause(ctx)
	a.watch.a, a.watch.clk = a, w.r.clk
	if o := w.req.Observer; o != nil {
		call.Header = call.Header.Clone() // the attempt's own, for its trace context
		if call.Header == nil {
			call.Header = http.Header{}
		}
		o.Sending(a, call)
	}
	return call
}

// exchange sends call under the attempt's watchdogs and waits for its
// first content; see launch. It touches nothing of the walk's but what
// is read-only while attempts run.
func (w *Walk) exchange(ctx context.Context, a *Attempt, call *Call) error {
	t := a.Target
	ttfb, idle, total := w.alias.budgets(t, w.req.Stream, a.started)
	a.watch.start(ttfb, idle, total, w.bounds(a, idle))
	var resp *http.Response
	var err error
	if u := w.req.Unservable; u != nil && !a.Responses {
		err = u // no chat translation: only a Responses target can serve it
	} else {
		resp, err = t.prov.up.Send(a.ctx, call)
	}
	if u := unservable(err); u != nil {
		a.unservable = u
		a.Verdict = aierr.Verdict{Kind: aierr.ClientError, Code: u.Code, Message: u.Message}
		a.finish(a.Verdict)
		a.cancel(nil)
		return err
	}
	if err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a.Resp = resp
		if err = w.ready(a); err == nil {
			return nil
		}
		a.Resp.Body.Close()
		a.Verdict = w.verdict(ctx, a, err)
	} else if err == nil {
		a.classify(resp, nil)
		if cut := a.Cut(); cut != nil {
			a.Verdict = *cut // its body stalled
		}
	} else {
		a.Verdict = w.verdict(ctx, a, err)
	}
	a.finish(a.Verdict)
	a.cancel(nil)
	if err := a.Verdict.Err(); err != nil {
		return err
	}
	return errNoAnswer // a status no verdict calls a failure (a 3xx)
}

// bounds returns a streamed attempt's bounds beyond its budgets (none for
// a plain answer): a stream is held (Budgets.CommitAfter) only while a
// later target could take the request.
func (w *Walk) bounds(a *Attempt, idle time.Duration) bounds {
	if !w.req.Stream {
		return bounds{}
	}
	t := a.Target
	b := bounds{suspect: w.alias.suspectAfter(t, a.started), rate: w.alias.minRate(t, a.started), maxEvents: w.req.Fields.MaxTokens}
	if n := w.alias.of(t).CommitAfter; n > 1 && a.holdable {
		b.hold, b.holdGap = n-1, cmp.Or(b.suspect, idle)
	}
	return b
}

// unservable returns err's target refusal, if it is one; its pointer
// escapes only for an error.
func unservable(err error) *Unservable {
	if err == nil {
		return nil
	}
	var u *Unservable
	if errors.As(err, &u) {
		return u
	}
	return nil
}

// errNoAnswer is an attempt whose answer was neither a 2xx nor a failure.
var errNoAnswer = errors.New("router: the answer was not a 2xx")

// verdict classifies an attempt that failed with err: a watchdog's cut, the
// request's own end (canceled: the target is not to blame), or what err
// says.
func (w *Walk) verdict(ctx context.Context, a *Attempt, err error) aierr.Verdict {
	if cut := a.Cut(); cut != nil {
		return *cut
	}
	if a.lost.Load() {
		if v := a.outrun.Load(); v != nil {
			return *v
		}
		return aierr.Verdict{Kind: aierr.Canceled, Code: aierr.CodeCanceled, Message: "another attempt answered first"}
	}
	if err := ctx.Err(); err != nil {
		return aierr.Verdict{Kind: aierr.Canceled, Code: aierr.CodeCanceled, Message: err.Error()}
	}
	var v *verdictError
	if errors.As(err, &v) {
		return v.v
	}
	return a.Target.prov.classifier.ClassifyError(err)
}

// Preparer reads a streamed 2xx answer until its first content; see
// Request.Prepare.
type Preparer interface {
	Prepare(*Attempt) aierr.Verdict
}

// PrepareFunc is a function as a Preparer.
type PrepareFunc func(*Attempt) aierr.Verdict

// Prepare calls f.
func (f PrepareFunc) Prepare(a *Attempt) aierr.Verdict { return f(a) }

// verdictError is a Prepare failure that carries its verdict.
type verdictError struct{ v aierr.Verdict }

func (e *verdictError) Error() string { return e.v.String() }

// ready waits for a 2xx answer's first content: the first byte of a plain
// answer, or what Request.Prepare waits for in a stream.
func (w *Walk) ready(a *Attempt) error {
	body := &watchedBody{rc: a.Resp.Body, a: a, plain: !w.req.Stream}
	a.Resp.Body = body
	if w.req.Stream {
		if p := w.req.Prepare; p != nil {
			if v := p.Prepare(a); v.Kind != aierr.Success {
				return &verdictError{v}
			}
		}
		if cut := a.Cut(); cut != nil {
			// A watchdog cut it as Prepare saw its last event: it was
			// told as a failure, and is not delivered.
			return &verdictError{*cut}
		}
		return nil
	}
	return body.peek()
}

// limits waits for t's limits. A call the rate limit cannot take at once
// queues for the target's turn, in the request's flow with its weight, so
// waiting requests reach the rate limit in weighted fair order; the one
// holding the turn reserves its slot and waits for it. Turn and slot
// together wait at most the target's MaxWait.
func (w *Walk) limits(ctx context.Context, a *Attempt) (reason string, until int64, ok bool) {
	t := a.Target
	if t.pacer != nil {
		r, ok, _ := t.pacer.TryReserve(w.req.Tokens)
		if !ok {
			if r, reason, until, ok = w.paced(ctx, t); !ok {
				return reason, until, false
			}
		}
		a.tokens = r
	}
	if t.bulk != nil {
		if err := t.bulk.AcquireFlow(ctx, w.req.Flow, w.req.Weight); err != nil {
			return "at its concurrency limit", 0, false
		}
	}
	return "", 0, true
}

// paced waits for t's turn and then for a slot of its rate limit.
func (w *Walk) paced(ctx context.Context, t *Target) (res limit.Reservation, reason string, until int64, ok bool) {
	start := w.r.now()
	if err := t.turn.AcquireFlow(ctx, w.req.Flow, w.req.Weight); err != nil {
		return res, "rate limited", 0, false
	}
	defer t.turn.Release()
	r, wait := t.pacer.Reserve(w.req.Tokens)
	if wait == 0 {
		return r, "", 0, true
	}
	now := w.r.now()
	left := t.maxWait - time.Duration(now-start)
	if dl, ok := ctx.Deadline(); ok {
		left = min(left, time.Until(dl))
	}
	if wait > left {
		r.Cancel()
		return res, "rate limited", now + int64(wait), false
	}
	if err := clock.Sleep(ctx, w.r.clk, wait); err != nil {
		r.Cancel()
		return res, "rate limited", 0, false
	}
	return r, "", 0, true
}

// call builds the upstream call: the body with t's model, the key, and the
// attempt's idempotency key.
func (w *Walk) call(t *Target, k *Key) *Call {
	body, f := w.req.Body, w.req.Fields
	if ms, ok := t.prov.up.(messagesSpeaker); ok && ms.SpeaksMessages(t.Model) && w.prefill != nil {
		body, f = w.prefill, aireq.Scan(w.prefill)
	}
	body = f.WithModel(body, t.Model)
	return &Call{
		Path: w.req.Path, Model: t.Model, Key: k.secret, Body: body, Stream: w.req.Stream,
		IdempotencyKey: w.idempotencyKey(), Header: w.req.Header,
	}
}

// maxClientIdem is the longest client Idempotency-Key sent on as it is;
// a longer one is sent as its hash.
const maxClientIdem = 64

// idemKeys draws the walk's idempotency key, or derives it from the
// client's own.
func (w *Walk) idemKeys() {
	k := w.req.IdempotencyKey
	switch {
	case k == "":
		rand.Read(w.idemRaw[:])
	case len(k) > maxClientIdem:
		h := sha256.New()
		h.Write([]byte(w.req.Flow))
		h.Write([]byte{0})
		h.Write([]byte(k))
		copy(w.idemRaw[:], h.Sum(nil))
	case w.req.Flow != "":
		sum := sha256.Sum256([]byte(w.req.Flow))
		copy(w.idemTag[:], sum[:])
	}
}

// idempotencyKey returns the Idempotency-Key of the walk's next attempt:
// the client's own key, tagged with the client (so that two clients that
// chose the same key never share an upstream's stored answer), or the
// walk's random one, then the attempt's generation (a hedge, or a retry
// after a throttle, gets its own).
func (w *Walk) idempotencyKey() string {
	var buf [maxClientIdem + 24]byte
	b := buf[:0]
	if k := w.req.IdempotencyKey; k != "" && len(k) <= maxClientIdem {
		b = append(b, k...)
		if w.req.Flow != "" {
			b = hex.AppendEncode(append(b, '-'), w.idemTag[:])
		}
	} else {
		b = hex.AppendEncode(b, w.idemRaw[:])
	}
	return string(strconv.AppendInt(append(b, '-'), int64(w.idemGen), 10))
}

// after decides, from a failed attempt's verdict, where the walk goes next.
func (w *Walk) after(a *Attempt) {
	if u := a.unservable; u != nil {
		w.unservable(a.Target, u)
		return
	}
	v := a.Verdict
	t := a.Target
	last := w.i == len(w.order)-1
	if v.NewIdempotencyKey || v.Kind == aierr.Throttle {
		w.idemGen++
	}
	w.addSkip(t, describe(v))
	switch v.Kind {
	case aierr.Canceled:
		return
	case aierr.ClientError:
		// A model the target does not have (not deployed, not enabled in
		// its region) is no bug of the client's: the next may have it.
		if !last && (v.Sub == aierr.NotDeployed || slices.Contains(w.alias.spec.FailoverOn, v.Sub)) {
			w.failoverFrom(a)
			return
		}
		a.Final = true
		return
	case aierr.Auth, aierr.Quota:
		// only this key is out: the next attempt on t takes another
		if _, until := t.pickKey(w.r.now()); until == 0 && w.hasKey(t) {
			return
		}
		w.failoverFrom(a)
		return
	case aierr.Throttle:
		if w.hasKey(t) {
			return // another key of the same target, at once
		}
		if !last {
			if !w.waitThrottle(t) {
				w.failoverFrom(a)
			}
			return
		}
	default: // Outage, Capacity
		if !last {
			if !w.retrySame(a) {
				w.failoverFrom(a)
			}
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

// retrySame decides whether a transient failure (one 5xx, a reset) on a
// target whose breaker is still closed is retried once on the same target
// before the walk fails over: the user asked for that model. Timeouts are
// not retried there (the budget was spent once already), nor is anything
// past the alias's retry budget, nor a failure whose provider asks for a
// longer wait, nor anything when the retry policy allows one call per
// target (attempts: 1).
func (w *Walk) retrySame(a *Attempt) bool {
	v, wait := a.Verdict, w.alias.spec.SameTargetWait
	if !w.mayRetrySame() || v.Kind != aierr.Outage || !transient(v.Sub) || v.Wait > wait {
		return false
	}
	if a.Target.breaker.State() != breaker.StateClosed || !w.alias.budget.TryRetry() {
		return false
	}
	backoff, _ := w.alias.spec.Retry.Next(1, v.Err(), retry.Remaining(w.ctx, w.r.clk.Now()))
	w.wait = min(backoff, wait)
	return true
}

// mayRetrySame reports whether the walk's first attempt on its target may
// be followed by one more there: the alias has a same-target wait, and its
// retry policy allows more than one call per target.
func (w *Walk) mayRetrySame() bool {
	return w.alias.spec.SameTargetWait > 0 && w.n == 1 && w.alias.spec.Retry.Attempts != 1
}

// transient reports a failure worth one more try at once: not a timeout,
// a connection that could not be made, or a model that is not ready.
func transient(s aierr.SubKind) bool {
	switch s {
	case aierr.Timeout, aierr.FirstByteTimeout, aierr.StreamStalled, aierr.Connect, aierr.TLS, aierr.NotReady:
		return false
	}
	return true
}

// waitThrottle decides whether to wait out a throttle on t, the key's rest
// for this target, when it ends within the alias's same-target wait; past
// it the walk fails over.
func (w *Walk) waitThrottle(t *Target) bool {
	limit := w.alias.spec.SameTargetWait
	if !w.mayRetrySame() {
		return false
	}
	_, until := t.pickKey(w.r.now())
	wait := time.Duration(until - w.r.now())
	if until == 0 || wait > limit || !w.alias.budget.TryRetry() {
		return false
	}
	w.wait = max(wait, 0)
	return true
}

// hasKey reports whether t has a usable key now.
func (w *Walk) hasKey(t *Target) bool {
	k, _ := t.pickKey(w.r.now())
	return k != nil
}

// describe says in a few words why an attempt failed.
func describe(v aierr.Verdict) string {
	s := v.Kind.String()
	if v.Status > 0 {
		s = strconv.Itoa(v.Status) + " " + s
	}
	if v.Code != "" {
		s += " (" + v.Detail() + ")"
	}
	return s
}

// probing reports a breaker state in which a target probed in the
// background is left to its probe: open, or half-open.
func probing(s breaker.State) bool { return s == breaker.StateOpen || s == breaker.StateHalfOpen }
