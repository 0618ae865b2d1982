package router

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
)

// Prober is an Upstream that can check a key with a request that costs no
// tokens (listing the models).
type Prober interface {
	Probe(ctx context.Context, key string) (*http.Response, error)
}

// probeTimeout bounds one background probe.
const probeTimeout = 10 * time.Second

// refuseKey takes k out of rotation after an auth or quota refusal on t,
// for its provider's auth rest, tells the operator, and starts checking it
// when the provider probes refused keys.
func (r *Router) refuseKey(t *Target, k *Key, v aierr.Verdict) {
	p := t.prov
	if k.disabledUntil.Load() < 0 {
		return // disabled by hand: stays so
	}
	k.disabledUntil.Store(r.now() + int64(p.authRest))
	if r.onKey != nil {
		r.onKey(KeyEvent{Key: k.ID, Target: t.Name, Verdict: v, For: p.authRest})
	}
	if _, ok := p.up.(Prober); ok && p.authProbe > 0 && k.probing.CompareAndSwap(false, true) {
		r.clk.AfterFunc(p.authProbe, func() { go r.probeKey(p, k) })
	}
}

// probeKey checks a refused key: back in rotation when it works, checked
// again later while it stays refused.
func (r *Router) probeKey(p *provider, k *Key) {
	if d := k.disabledUntil.Load(); d <= r.now() {
		k.probing.Store(false) // back by itself, or disabled by hand
		return
	}
	ctx, cancel := r.timeout(probeTimeout)
	resp, err := p.up.(Prober).Probe(ctx, k.secret)
	cancel()
	ok := err == nil && resp.StatusCode >= 200 && resp.StatusCode < 300
	if err == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}
	if ok && k.disabledUntil.Load() > 0 {
		k.disabledUntil.Store(0)
		k.probing.Store(false)
		if r.onKey != nil {
			r.onKey(KeyEvent{Key: k.ID, Back: true})
		}
		return
	}
	r.clk.AfterFunc(p.authProbe, func() { go r.probeKey(p, k) })
}

// timeout returns a context canceled after d on the router's clock.
func (r *Router) timeout(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t := r.clk.AfterFunc(d, cancel)
	return ctx, func() { t.Stop(); cancel() }
}

// restOf returns when the last of k's rests after a throttle ends
// (stopwatch ns).
func (r *Router) restOf(k *Key) int64 {
	until := int64(0)
	r.rests(k, func(rest *atomic.Int64) { until = max(until, rest.Load()) })
	return until
}

// clearRests ends k's rests after throttles, on every target.
func (r *Router) clearRests(k *Key) {
	r.rests(k, func(rest *atomic.Int64) { rest.Store(0) })
}

// rests calls fn with k's rest on each target that uses k.
func (r *Router) rests(k *Key, fn func(*atomic.Int64)) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.targets {
		if k.idx < len(t.keys) && t.keys[k.idx] == k {
			fn(&t.rests[k.idx])
		}
	}
}

// probeRecheck is how soon a background probe that could not be sent
// looks again.
const probeRecheck = 50 * time.Millisecond

// probeAgain looks again, probeRecheck later, for a background probe that
// could not be sent while its breaker stays undecided: open with its
// period over (the breaker's own timer for that instant had not fired
// when this one did), or half-open with the probe taken by a client's
// request, whose end may leave it half-open still. A breaker closed again,
// or open anew (its opening scheduled the next probe), needs none: so
// that no half-open breaker waits for a client request that, with
// background probes, never comes.
func (r *Router) probeAgain(t *Target) {
	s := t.breaker.Snapshot()
	switch {
	case s.State == breaker.StateHalfOpen:
	case s.State == breaker.StateOpen && !r.clk.Now().Before(s.OpenUntil):
	default:
		return
	}
	r.clk.AfterFunc(probeRecheck, func() { go r.probeTarget(t) })
}

// probeBody is a background probe's request: as cheap as a chat
// completion gets.
func probeBody(model string) []byte {
	return []byte(`{"model":` + strconv.Quote(model) + `,"messages":[{"role":"user","content":"ping"}],"max_tokens":1}`)
}

// streamProbeBody is the probe of a target whose streams failed: a short
// stream, read to its end under the target's budgets, so that a target
// that answers plain calls but drips or stalls its streams is not taken
// back by a plain answer.
func streamProbeBody(model string) []byte {
	return []byte(`{"model":` + strconv.Quote(model) + `,"messages":[{"role":"user","content":"Count from one to ten."}],"max_tokens":16,"stream":true}`)
}

// streamProbeWindow is how long after one of its streams failed a target
// is probed with a stream.
const streamProbeWindow = 10 * time.Minute

// probeBudgets takes an alias's budgets for t into its probes' bounds:
// the smallest ttfb of its aliases, and the smallest suspicion threshold
// (idle without one) for a streamed probe's silences.
func (t *Target) probeBudgets(b Budgets) {
	lowest(&t.probeTTFB, b.TTFB)
	lowest(&t.probeSilence, cmp.Or(b.SuspectAfter, b.Idle))
}

// lowest lowers v to d (ns) if d is set and v is unset or above it.
func lowest(v *atomic.Int64, d time.Duration) {
	for d > 0 {
		old := v.Load()
		if old != 0 && old <= int64(d) || v.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// scheduleProbe arranges a background probe of t for when its breaker,
// just opened, admits probes again.
func (r *Router) scheduleProbe(t *Target, tr breaker.Transition) {
	if tr.To != breaker.StateOpen {
		return
	}
	wait := max(tr.OpenUntil.Sub(r.clk.Now()), 0)
	r.clk.AfterFunc(wait, func() { go r.probeTarget(t) })
}

// probeTarget sends t a cheap request as a half-open probe, when no client
// request took the probe first; its outcome closes or reopens the breaker.
func (r *Router) probeTarget(t *Target) {
	key, _ := t.pickKey(r.now())
	if key == nil {
		r.probeAgain(t) // its keys rest: look again shortly
		return
	}
	permit, err := t.breaker.Allow()
	if err != nil {
		r.probeAgain(t)
		return
	}
	if t.breaker.State() != breaker.StateHalfOpen {
		permit.Ignore() // closed again meanwhile: nothing to learn
		return
	}
	v := r.sendProbe(t, key)
	switch v.Breaker() {
	case aierr.BreakerSuccess:
		permit.Success()
	case aierr.BreakerFailure:
		permit.Report(breaker.Outcome{Result: breaker.Failure, RetryAfter: v.Wait})
	default:
		// Nothing learned (no key, a throttle): the breaker stays
		// half-open, so probe again rather than leave it undecided.
		permit.Ignore()
		r.clk.AfterFunc(max(t.openFor, time.Second), func() { go r.probeTarget(t) })
	}
	if r.onProbe != nil {
		r.onProbe(t, v)
	}
}
