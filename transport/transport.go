package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/retry"
)

// Transport is an http.RoundTripper that gives any HTTP client of an AI API
// breakers, retries, pacing, failover and stream guards. It is safe for
// concurrent use; build one and share it.
type Transport struct {
	cfg       Config
	clk       clock.Clock
	sw        clock.Stopwatch
	endpoints []*endpoint
	breakers  *breaker.Group[breakerKey]
	budget    *retry.Budget

	// mu guards implicit, the endpoints made on the fly for requests
	// outside every configured one (keyed by scheme://host).
	mu       sync.Mutex
	implicit map[string]*endpoint
}

// breakerKey names a breaker: an endpoint and a model.
type breakerKey struct {
	endpoint *endpoint
	model    string
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport, or an error naming the Config field that is
// wrong.
func New(cfg Config) (*Transport, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := breaker.New(cfg.Breaker); err != nil {
		return nil, errors.New("transport: Breaker: " + err.Error())
	}
	budget, err := retry.NewBudget(cfg.Budget)
	if err != nil {
		return nil, errors.New("transport: Budget: " + err.Error())
	}
	t := &Transport{
		cfg:      cfg,
		clk:      clock.Or(cfg.Clock),
		sw:       clock.NewStopwatch(cfg.Clock),
		budget:   budget,
		implicit: map[string]*endpoint{},
	}
	t.breakers = breaker.NewGroup(func(k breakerKey) breaker.Config {
		c := cfg.Breaker
		c.Name = k.endpoint.Name + "/" + k.model
		return c
	})
	for i, e := range cfg.Endpoints {
		base, _ := parseBase(e.BaseURL)
		ep, err := newEndpoint(t, i, e, base)
		if err != nil {
			return nil, err
		}
		t.endpoints = append(t.endpoints, ep)
	}
	return t, nil
}

// Breakers returns a snapshot of every breaker made so far, by name.
func (t *Transport) Breakers() []breaker.Snapshot { return t.breakers.Snapshots() }

// RoundTrip sends req to the first endpoint able to answer it. See the
// package documentation for the walk.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Host == "" {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on an error
		}
		return nil, errors.New("transport: no Host in request URL")
	}
	r, err := readRequest(req, t.cfg.MaxBodyBuffer)
	if err != nil {
		req.Body.Close()
		return nil, err
	}
	w := walk{t: t, req: req, r: r}
	w.ladder, w.suffix = t.ladder(req)
	if req.Method == http.MethodPost && t.cfg.IdempotencyHeader != "-" {
		w.idemKey = getFold(req.Header, t.cfg.IdempotencyHeader)
		w.addKey = w.idemKey == ""
		if w.addKey {
			w.idemKey = newKey()
		}
	}
	return w.run()
}

// ladder returns the endpoints to try in order and the request's path
// relative to the API root.
func (t *Transport) ladder(req *http.Request) ([]*endpoint, string) {
	for _, ep := range t.endpoints {
		if ep.matches(req.URL) {
			suffix := strings.TrimPrefix(req.URL.Path, ep.base.Path)
			if ep.index == 0 {
				return t.endpoints, suffix
			}
			ladder := make([]*endpoint, 0, len(t.endpoints))
			ladder = append(ladder, ep)
			for _, o := range t.endpoints {
				if o != ep {
					ladder = append(ladder, o)
				}
			}
			return ladder, suffix
		}
	}
	home := t.implicitEndpoint(req)
	suffix := req.URL.Path
	if strings.HasPrefix(suffix, "/v1/") {
		suffix = suffix[len("/v1"):]
	}
	ladder := make([]*endpoint, 0, 1+len(t.endpoints))
	return append(append(ladder, home), t.endpoints...), suffix
}

// implicitEndpoint returns the endpoint standing for the request's own
// origin, made on first use.
func (t *Transport) implicitEndpoint(req *http.Request) *endpoint {
	key := req.URL.Scheme + "://" + req.URL.Host
	t.mu.Lock()
	defer t.mu.Unlock()
	if ep, ok := t.implicit[key]; ok {
		return ep
	}
	base, _ := parseBase(key)
	ep, _ := newEndpoint(t, -1, Endpoint{Name: req.URL.Host}, base)
	t.implicit[key] = ep
	return ep
}

// sleep waits d on the transport's clock, or until ctx ends.
func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	return clock.Sleep(ctx, t.clk, d)
}

// now returns the time on the transport's stopwatch.
func (t *Transport) now() time.Duration { return t.sw.Elapsed() }
