package transport

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

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
}

func newEndpoint(t *Transport, i int, e Endpoint, base *url.URL) (*endpoint, error) {
	if e.Name == "" {
		e.Name = base.Host
	}
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

// authorize sets the endpoint's key on h in the configured style, or in the
// style h already uses.
func (ep *endpoint) authorize(h http.Header) {
	if ep.APIKey == "" {
		return
	}
	style := ep.Auth
	if style == "" {
		switch {
		case h.Get("X-Api-Key") != "":
			style = "x-api-key"
		case h.Get("Api-Key") != "":
			style = "api-key"
		default:
			style = "bearer"
		}
	}
	h.Del("Authorization")
	h.Del("X-Api-Key")
	h.Del("Api-Key")
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
