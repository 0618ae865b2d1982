package router

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/latency"
	"github.com/fuseboxhq/fusebox/limit"
)

// Price is what a target costs, in USD per million tokens.
type Price struct {
	Input, Output, CachedInput float64
}

// Cost returns the USD cost of a call's usage.
func (p Price) Cost(input, cachedInput, output int) float64 {
	return (float64(input-cachedInput)*p.Input + float64(cachedInput)*p.CachedInput + float64(output)*p.Output) / 1e6
}

// Target is one (provider, model) that aliases route to. Its breaker,
// limits and health are shared by every alias that lists it.
type Target struct {
	// Name is "provider/model".
	Name     string
	Provider string
	Model    string

	prov    *provider
	keys    []*Key // its provider's, or its own (ownKeys)
	ownKeys bool
	breaker *breaker.Breaker
	pacer   *limit.Pacer    // nil: no rate limit
	turn    *limit.Bulkhead // with a pacer: one waiter at a time reserves, in fair order
	bulk    *limit.Bulkhead // nil: no concurrency limit
	maxWait time.Duration   // the longest wait for the limits
	health  health
	fp      string        // the breaker settings' fingerprint, for reloads
	openFor time.Duration // its breaker's open period before backoff
	// inFlight counts attempts sent and not yet reported.
	inFlight atomic.Int64
	// mature counts streams whose content has flowed for the alias's
	// suspect_after, and silent those of them quiet for as long: when
	// every mature stream is silent the target is suspect. hedged
	// counts the hedges it needed in a row without producing a first
	// content; from hedgedSuspect on, the target is suspect too. While suspect, one
	// request per probe period (probeAt, stopwatch ns) still goes to it.
	mature, silent, hedged atomic.Int64
	probeAt, probeGap      atomic.Int64
	// suspected is set once the target turned suspect and its stalled
	// streams were cut (which takes them out of the counts above); it
	// ends when its breaker closes, a background probe succeeds, or an
	// answer on it succeeds or flows for suspect_after. Its let-through
	// period starts at openFor and grows by openBackoff up to maxOpen, as
	// its breaker's open period does; with background, no client request
	// is let through, a background probe is sent instead.
	suspected   atomic.Bool
	openBackoff float64
	maxOpen     time.Duration
	background  bool
	// streams are its streams in flight watched for silence, so that
	// those stalled can be cut when it turns suspect or its breaker
	// opens.
	streamsMu sync.Mutex
	streams   map[*watch]struct{}
	// probeTTFB bounds a background probe of the target (ns; 0:
	// probeTimeout): the smallest ttfb of the aliases it is in, as a
	// client's attempt is bounded. streamFailAt is when one of its
	// streams last stalled or fell behind its pace (stopwatch ns): a
	// target whose streams fail is probed with a stream, since a plain
	// answer says nothing of them.
	probeTTFB, streamFailAt atomic.Int64
	// probeSilence bounds the silences of a streamed probe (ns; 0:
	// none): the smallest suspicion threshold of its aliases.
	probeSilence atomic.Int64
	// paces are the recent times per content event of its streams that
	// succeeded, for the adaptive rate floor.
	paces *latency.Window
	// gaps are the recent gaps between chunks of its streams, for the
	// adaptive suspicion threshold.
	gaps *latency.Window
	// rests[i] is when the provider's key i may serve this target again
	// after a throttle (stopwatch ns): providers count limits per model.
	rests []atomic.Int64
	// firstStream and firstPlain are the recent times to first content
	// of streamed and plain answers, for hedge delays and adaptive
	// budgets; auto caches their derived budgets.
	firstStream, firstPlain *latency.Window
	auto                    autoCache
}

// InFlight returns the number of upstream attempts to the target under
// way.
func (t *Target) InFlight() int64 { return t.inFlight.Load() }

// Limited reports whether the target has a rate or concurrency limit.
func (t *Target) Limited() bool { return t.pacer != nil || t.bulk != nil }

// Breaker returns the target's breaker.
func (t *Target) Breaker() *breaker.Breaker { return t.breaker }

// Health returns the target's recent figures.
func (t *Target) Health() Health { return t.health.snapshot() }

// Queued returns the number of requests waiting for the target's rate or
// concurrency limit (the one holding the rate limit's turn not counted).
func (t *Target) Queued() int {
	n := 0
	if t.turn != nil {
		n += t.turn.Waiting()
	}
	if t.bulk != nil {
		n += t.bulk.Waiting()
	}
	return n
}

// observeFirst records the time to an answer's first content.
func (t *Target) observeFirst(d time.Duration, stream bool) {
	if stream {
		t.health.observeTTFB(d)
		t.firstStream.Observe(d)
		return
	}
	t.firstPlain.Observe(d)
}

// firsts returns the window of times to first content of a kind of answer.
func (t *Target) firsts(stream bool) *latency.Window {
	if stream {
		return t.firstStream
	}
	return t.firstPlain
}

// rest takes key k out of this target's rotation until (stopwatch ns).
func (t *Target) rest(k *Key, until int64) {
	r := &t.rests[k.idx]
	for {
		old := r.Load()
		if old >= until || r.CompareAndSwap(old, until) {
			return
		}
	}
}

// pickKey returns the next of t's keys usable for t now, or nil
// and the soonest time one comes back (0 if never by itself).
func (t *Target) pickKey(now int64) (*Key, int64) {
	n := uint32(len(t.keys))
	start := t.prov.next.Add(1)
	soonest := int64(0)
	for i := range n {
		k := t.keys[(start+i)%n]
		ok, until := k.usable(now)
		if r := t.rests[k.idx].Load(); ok && r > now {
			ok, until = false, r
		}
		if ok {
			return k, 0
		}
		if until > 0 && (soonest == 0 || until < soonest) {
			soonest = until
		}
	}
	return nil, soonest
}

// provider is an upstream with its keys.
type provider struct {
	name       string
	up         Upstream
	keys       []*Key
	next       atomic.Uint32
	classifier *aierr.Classifier
	limits     Limits
	fp         string // the settings' fingerprint, for reloads
	// authRest is how long a refused key stays out; authProbe, if set,
	// how often a refused key is checked.
	authRest, authProbe time.Duration
	// price is that of its "provider/model" requests.
	price Price
}

// Key is one API key of a provider. An auth refusal on a key takes only
// that key out of rotation, for the provider's auth rest; a throttle takes
// it out for the throttled target only, for the provider's wait.
type Key struct {
	secret string
	// ID names the key in logs and the admin API without revealing it:
	// "provider#index".
	ID  string
	idx int // its index among the provider's keys
	// disabledUntil is ns on the router's stopwatch; 0: not set; < 0:
	// disabled until enabled by hand. probing is set while a probe
	// checks a refused key.
	disabledUntil atomic.Int64
	probing       atomic.Bool
}

// usable reports whether the key may be used at now, and if not, when it may.
func (k *Key) usable(now int64) (bool, int64) {
	d := k.disabledUntil.Load()
	if d < 0 {
		return false, 0
	}
	return d <= now, d
}

// SendNative sends the client's own Messages body (its model already the
// target's) to t, once, outside any walk: one of its usable keys, and no
// breaker, limits or retries, for calls that cost nothing such as counting
// tokens. It reports false, sending nothing, when t's upstream does not
// speak Messages, its breaker is open, or it has no usable key. header
// are the client's headers to pass on, as Call.Header.
func (r *Router) SendNative(ctx context.Context, t *Target, path string, body []byte, header http.Header) (*http.Response, bool, error) {
	ms, ok := t.prov.up.(messagesSpeaker)
	if !ok || !ms.SpeaksMessages(t.Model) || t.breaker.State() == breaker.StateOpen {
		return nil, false, nil
	}
	k, _ := t.pickKey(r.now())
	if k == nil {
		return nil, false, nil
	}
	resp, err := t.prov.up.Send(ctx, &Call{Path: path, Model: t.Model, Key: k.secret, Native: body, Header: header})
	return resp, true, err
}
