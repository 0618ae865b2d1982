package transport

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/limit"
)

// endpoint is an Endpoint made ready: parsed, with its limiters and the
// state that takes a refused key out of rotation.
type endpoint struct {
	Endpoint
	index int
	base  *url.URL
	pacer *limit.Pacer    // nil: no rate limits
	bulk  *limit.Bulkhead // nil: no concurrency limit
	// disabledUntil is when a refused key comes back, ns on the
	// transport's stopwatch; 0: in rotation.
	disabledUntil atomic.Int64
	// breakers caches this endpoint's breakers by model: a copy-on-write
	// map, so the lookup of a model read from a request body allocates
	// nothing. The Group stays the owner.
	breakers atomic.Pointer[map[string]*breaker.Breaker]
}

// breaker returns the endpoint's breaker for model (bytes, to look up
// without allocating), made through t's Group on first use.
func (ep *endpoint) breaker(t *Transport, model []byte) (*breaker.Breaker, error) {
	if m := ep.breakers.Load(); m != nil {
		if b, ok := (*m)[string(model)]; ok {
			return b, nil
		}
	}
	b, err := t.breakers.Get(breakerKey{ep, string(model)})
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := ep.breakers.Load()
	m := make(map[string]*breaker.Breaker, 1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[string(model)] = b
	ep.breakers.Store(&m)
	return b, nil
}

func newEndpoint(t *Transport, i int, e Endpoint, base *url.URL) (*endpoint, error) {
	if e.Name == "" {
		e.Name = base.Host
	}
	e.Header = canonicalClone(e.Header) // ours: the caller may change theirs
	ep := &endpoint{Endpoint: e, index: i, base: base}
	l := t.cfg.Limits
	if e.Limits.set() {
		l = e.Limits
	}
	if l.MaxWait == 0 {
		l.MaxWait = DefaultLimitWait
	}
	if l.RequestsPerMinute > 0 || l.TokensPerMinute > 0 {
		p, err := limit.NewPacer(limit.PacerSettings{
			Limits:  limit.Limits{RequestsPerMinute: l.RequestsPerMinute, TokensPerMinute: l.TokensPerMinute},
			MaxWait: l.MaxWait,
			Clock:   t.cfg.Clock,
		})
		if err != nil {
			return nil, err
		}
		ep.pacer = p
	}
	if l.MaxInFlight > 0 {
		b, err := limit.NewBulkhead(limit.BulkheadSettings{MaxInFlight: l.MaxInFlight, MaxWait: l.MaxWait, Clock: t.cfg.Clock})
		if err != nil {
			return nil, err
		}
		ep.bulk = b
	}
	return ep, nil
}

// matches reports whether u falls under the endpoint's base URL.
func (ep *endpoint) matches(u *url.URL) bool {
	if !strings.EqualFold(u.Host, ep.base.Host) || u.Scheme != ep.base.Scheme {
		return false
	}
	p := ep.base.Path
	return p == "" || u.Path == p || strings.HasPrefix(u.Path, p+"/")
}

// url returns the endpoint's URL for a path relative to the API root.
func (ep *endpoint) url(suffix, rawQuery string) *url.URL {
	u := *ep.base
	u.Path += suffix
	u.RawQuery = rawQuery
	return &u
}

// authStyle returns how ep sends its key: as configured, else in the style
// the caller's headers h already use, else bearer.
func (ep *endpoint) authStyle(h http.Header) string {
	switch {
	case ep.Auth != "":
		return ep.Auth
	case h.Get("X-Api-Key") != "":
		return "x-api-key"
	case h.Get("Api-Key") != "":
		return "api-key"
	}
	return "bearer"
}

// authorize sets the endpoint's key on h (canonical keys) in style, after
// removing every other key the caller's headers carry.
func (ep *endpoint) authorize(h http.Header, style string) {
	if ep.APIKey == "" {
		return
	}
	for _, k := range keyHeaders {
		delete(h, k)
	}
	switch style {
	case "x-api-key":
		h.Set("X-Api-Key", ep.APIKey)
	case "api-key":
		h.Set("Api-Key", ep.APIKey)
	default:
		h.Set("Authorization", "Bearer "+ep.APIKey)
	}
}

func (ep *endpoint) disabled(now time.Duration) bool {
	until := ep.disabledUntil.Load()
	return until != 0 && int64(now) < until
}
