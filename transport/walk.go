package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/limit"
	"github.com/fuseboxhq/fusebox/retry"
)

// walk is one request's way down the ladder of endpoints.
type walk struct {
	t       *Transport
	req     *http.Request
	r       request
	ladder  []*endpoint
	suffix  string
	idemKey string
	addKey  bool // the key is ours: renew it after a refusal

	n        int            // attempts made
	skips    []Skip         // endpoints passed over without an attempt
	soonest  time.Duration  // shortest wait among skips
	lastResp *http.Response // the last error answer, body buffered
	lastErr  error          // the last transport error
}

// step is what one attempt leads to.
type step struct {
	next Next
	wait time.Duration
	resp *http.Response
	err  error
}

func (w *walk) run() (*http.Response, error) {
	w.t.budget.Request()
	for i, ep := range w.ladder {
		last := i == len(w.ladder)-1
		for n := 1; ; n++ {
			s := w.attempt(ep, n, last)
			if s.next == Return {
				return s.resp, s.err
			}
			if s.next == Failover {
				break
			}
			if err := w.t.sleep(w.req.Context(), s.wait); err != nil {
				return nil, err
			}
		}
		if !w.r.replay && w.n > 0 {
			break // a body we could not keep cannot be sent again
		}
	}
	return w.giveUp()
}

// giveUp answers when every endpoint has been tried or skipped: with the
// last error answer an upstream gave, else the last transport error, else
// an UnavailableError listing the skips.
func (w *walk) giveUp() (*http.Response, error) {
	if w.lastResp != nil {
		return w.lastResp, nil
	}
	if w.lastErr != nil {
		return nil, w.lastErr
	}
	return nil, &UnavailableError{Skips: w.skips, Wait: w.soonest}
}

func (w *walk) skip(ep *endpoint, model string, err error, wait time.Duration) step {
	w.skips = append(w.skips, Skip{Endpoint: ep.Name, Err: err})
	if wait > 0 && (w.soonest == 0 || wait < w.soonest) {
		w.soonest = wait
	}
	if w.t.cfg.OnAttempt != nil {
		w.t.cfg.OnAttempt(Attempt{Endpoint: ep.Name, Model: model, Skipped: err, Next: Failover})
	}
	return step{next: Failover}
}

// attempt tries ep once (the n-th time); last says no endpoint follows.
func (w *walk) attempt(ep *endpoint, n int, last bool) step {
	ctx := w.req.Context()
	modelBytes := w.r.Model
	if bytes.IndexByte(modelBytes, '\\') >= 0 {
		modelBytes = []byte(w.r.ModelName()) // one breaker per model as the upstream reads it
	}
	if ep.Model != "" {
		modelBytes = []byte(ep.Model)
	}
	if ep.disabled(w.t.now()) {
		return w.skip(ep, string(modelBytes), ErrKeyDisabled, time.Duration(ep.disabledUntil.Load())-w.t.now())
	}
	br, err := ep.breaker(w.t, modelBytes)
	if err != nil {
		return step{err: err}
	}
	model := br.Name()[len(ep.Name)+1:] // the breaker's name is endpoint/model: no allocation
	permit, err := br.Allow()
	if err != nil {
		var open *breaker.OpenError
		errors.As(err, &open)
		return w.skip(ep, model, err, open.RetryAfter())
	}
	if s, ok := w.admit(ctx, ep, model, permit); !ok {
		return s
	}

	w.n++
	out, g, cross := w.outgoing(ctx, ep, model)
	start := w.t.now()
	resp, err := w.t.cfg.Base.RoundTrip(out)
	if err == nil && cross {
		scrubResponse(resp)
	}
	a := answer{ep: ep, permit: permit, guard: g}
	a.classify(w, resp, err)
	dur := w.t.now() - start

	if a.verdict.Kind == aierr.Success {
		resp := a.deliver(w)
		w.report(ep, model, br, &a, dur, step{next: Return})
		return step{next: Return, resp: resp}
	}
	a.release()
	switch a.verdict.Breaker() {
	case aierr.BreakerFailure:
		permit.Report(breaker.Outcome{Result: breaker.Failure, RetryAfter: a.verdict.Wait})
	default:
		permit.Ignore()
	}
	s := w.decide(ep, n, last, &a)
	w.report(ep, model, br, &a, dur, s)
	return s
}

// admit waits for ep's limits; when they cannot admit in time it frees the
// permit and skips the endpoint.
func (w *walk) admit(ctx context.Context, ep *endpoint, model string, p breaker.Permit) (step, bool) {
	if ep.pacer != nil {
		if _, err := ep.pacer.Wait(ctx, w.r.tokens()); err != nil {
			p.Ignore()
			if ctx.Err() != nil {
				return step{err: ctx.Err()}, false
			}
			var le *limit.LimitedError
			errors.As(err, &le)
			var wait time.Duration
			if le != nil {
				wait = le.RetryAfter
			}
			return w.skip(ep, model, err, wait), false
		}
	}
	if ep.bulk != nil {
		if err := ep.bulk.Acquire(ctx); err != nil {
			p.Ignore()
			if ctx.Err() != nil {
				return step{err: ctx.Err()}, false
			}
			return w.skip(ep, model, err, 0), false
		}
	}
	return step{}, true
}

// outgoing builds the request for ep: its URL, model, credentials, headers
// and idempotency key, with a guard when a budget applies. cross says ep is
// on another origin than the caller's URL.
func (w *walk) outgoing(ctx context.Context, ep *endpoint, model string) (out *http.Request, g *guard, cross bool) {
	cfg := &w.t.cfg
	idle := time.Duration(0)
	if w.r.Stream {
		idle = cfg.Idle // a plain answer's body is not paced
	}
	if cfg.FirstByte > 0 || idle > 0 {
		g = newGuard(ctx, w.t, cfg.FirstByte, idle)
		ctx = g.ctx
	}
	out = w.req.WithContext(ctx) // a shallow copy: the URL and headers are copied below if changed
	if ep.index >= 0 && !w.home(ep) {
		out.URL = ep.url(w.suffix, w.req.URL.RawQuery)
		out.Host = ""
	}
	cross = !sameOrigin(out.URL, w.req.URL)
	if cross || ep.APIKey != "" {
		if q := withoutParam(out.URL.RawQuery, keyParam); q != out.URL.RawQuery {
			u := *out.URL // maybe the caller's
			u.RawQuery = q
			out.URL = &u
		}
	}
	out.Header = w.header(ep, cross, model)
	if w.r.body != nil {
		body := w.r.body
		if ep.Model != "" {
			body = w.r.withModel(model)
		}
		rb := &replayBody{}
		rb.Reset(body)
		out.Body = rb
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) {
			rb := &replayBody{}
			rb.Reset(body)
			return rb, nil
		}
	}
	if g != nil {
		g.armFirstByte()
	}
	return out, g, cross
}

// header returns the headers of the attempt on ep: the caller's, without
// its credentials when ep is on another origin (cross), then ep's Header,
// ep's key in place of the caller's, and the idempotency key. With nothing
// to change it returns the caller's own map.
func (w *walk) header(ep *endpoint, cross bool, model string) http.Header {
	key := w.idemKey
	if key != "" && ep.Model != "" && w.r.Model != nil && string(w.r.Model) != ep.Model {
		key = bodyKey(key, model) // the body is rewritten: not the key of the caller's body
	}
	setKey := key != "" && (w.addKey || key != w.idemKey)
	if !cross && ep.APIKey == "" && len(ep.Header) == 0 && !setKey && w.req.Header != nil {
		return w.req.Header
	}
	h := canonicalClone(w.req.Header)
	style := ep.authStyle(h) // read before the caller's credentials go
	if cross {
		for _, k := range credentialHeaders {
			delete(h, k)
		}
	}
	for k, v := range ep.Header {
		h[k] = v[:len(v):len(v)] // an Add appends to a copy, never to the config's
	}
	ep.authorize(h, style)
	if setKey {
		h.Set(w.t.cfg.IdempotencyHeader, key)
	}
	return h
}

// home reports whether ep is the endpoint the request's URL already points
// at, so the URL can be sent as it is.
func (w *walk) home(ep *endpoint) bool { return ep == w.ladder[0] && ep.matches(w.req.URL) }

// replayBody is a request body read from the buffered copy; one allocation
// where a bytes.Reader in an io.NopCloser would be two.
type replayBody struct{ bytes.Reader }

func (*replayBody) Close() error { return nil }

// decide picks what follows a refused or failed attempt.
func (w *walk) decide(ep *endpoint, n int, last bool, a *answer) step {
	v := a.verdict
	ctx := w.req.Context()
	if v.NewIdempotencyKey || v.Kind == aierr.Throttle {
		w.renewKey()
	}
	fail := w.fail(a)
	if !w.r.replay {
		return fail // the body is gone: no second attempt
	}
	switch v.Kind {
	case aierr.Canceled:
		return step{err: a.err}
	case aierr.ClientError:
		// A model the endpoint does not have (not deployed, not enabled
		// in its region) is no bug of the caller's: the next may have it.
		if !last && (v.Sub == aierr.NotDeployed || slices.Contains(w.t.cfg.FailoverOn, v.Sub)) {
			return step{next: Failover}
		}
		return fail
	case aierr.Auth, aierr.Quota:
		ep.disabledUntil.Store(int64(w.t.now() + w.t.cfg.AuthCooldown))
		if last {
			return fail
		}
		return step{next: Failover}
	case aierr.Throttle:
		if ep.pacer != nil && v.Wait > 0 {
			ep.pacer.Block(w.t.clk.Now().Add(v.Wait))
		}
		if !last && v.Wait > w.t.cfg.ThrottleWait {
			return step{next: Failover}
		}
	default: // Outage, Capacity
		if !last {
			return step{next: Failover}
		}
	}
	wait, reason := w.t.cfg.Retry.Next(n, v.Err(), retry.Remaining(ctx, w.t.clk.Now()))
	if reason == retry.ReasonNone && w.t.budget.TryRetry() {
		return step{next: Retry, wait: wait}
	}
	if last {
		return fail
	}
	return step{next: Failover}
}

// fail keeps a's answer as the one to give if nothing better comes, and
// returns the step that gives it now.
func (w *walk) fail(a *answer) step {
	if a.resp != nil {
		if w.lastResp != nil && w.lastResp != a.resp {
			w.lastResp.Body.Close()
		}
		w.lastResp, w.lastErr = a.resp, nil
		return step{next: Return, resp: a.resp}
	}
	w.lastErr = a.err
	return step{next: Return, err: a.err}
}

func (w *walk) renewKey() {
	if w.addKey {
		w.idemKey = newKey()
	}
}

// report passes the attempt to Config.OnAttempt.
func (w *walk) report(ep *endpoint, model string, br *breaker.Breaker, a *answer, dur time.Duration, s step) {
	if w.t.cfg.OnAttempt == nil {
		return
	}
	w.t.cfg.OnAttempt(Attempt{
		Endpoint: ep.Name, Model: model, N: w.n,
		Verdict: a.verdict, Err: a.err, Duration: dur,
		Next: s.next, Wait: s.wait, Breaker: br.State(),
	})
}
