package gateway

import (
	"errors"
	"fmt"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/limit"
)

// state is everything the gateway builds from one configuration. A request
// takes the state current when it arrives and keeps it to its end, so a
// reload never changes the rules under a request in flight.
type state struct {
	cfg     *config.Config
	router  *router.Router
	clients []client
	// caches holds the response cache of each alias that has one;
	// degraded the static answers.
	caches   map[string]*aliasCache
	degraded map[string]config.Degraded
	cors     *corsPolicy // nil: no origin allowed
	// upstreams describe the providers for the spans (with otel on).
	upstreams map[string]upstreamInfo
	// forward are server.forward_headers, canonical.
	forward []string
}

// client is a gateway API key and what it may do.
type client struct {
	name   string
	key    []byte
	weight float64         // its share of a saturated target
	models map[string]bool // nil: all
	pacer  *limit.Pacer    // the client's rpm/tpm; nil: none
	budget *budget         // the client's USD budget; nil: none
	fp     string          // the limits' fingerprint, for reloads
}

// allows reports whether client c may use model (an alias, or a
// provider/model): a nil client (an open gateway) or one without a list
// may use every model.
func (c *client) allows(model string) bool { return c == nil || c.models == nil || c.models[model] }

// buildState builds the state for cfg. With prev, the parts whose
// settings did not change carry on from it: targets (breakers, limits,
// health), provider keys and connections, response caches, client pacers,
// and every client's spending.
func (s *Server) buildState(cfg *config.Config, prev *state) (*state, error) {
	spec, err := routerSpec(cfg, s.opts.Transport)
	if err != nil {
		return nil, err
	}
	spec.Clock = s.opts.Clock
	s.metrics.Hooks(&spec)
	if on := s.opts.OnTransition; on != nil {
		record := spec.OnTransition
		spec.OnTransition = func(t breaker.Transition) {
			if record != nil {
				record(t)
			}
			on(t)
		}
	}
	s.events.hook(&spec)
	spec.OnKeyDisabled = s.events.keyEvent
	if cfg.AdminToken.Value() != "" { // the dashboard is on
		s.dash.hook(&spec)
	}
	if f := s.fleet; f != nil {
		spec.Share = f.Join
		spec.Sessions = f
		spec.SharePacer = func(target string, p *limit.Pacer, l limit.Limits) { f.ShareLimits("target:"+target, p, l) }
		forget := spec.OnRemove
		spec.OnRemove = func(t *router.Target) {
			if forget != nil {
				forget(t)
			}
			f.Leave(t.Name)
			f.UnshareLimits("target:" + t.Name)
		}
	}
	if prev != nil {
		spec.Keep = prev.router
	}
	r, err := router.New(spec)
	if err != nil {
		return nil, err
	}
	st := &state{cfg: cfg, router: r, degraded: map[string]config.Degraded{}, cors: newCORS(cfg.CORS),
		forward: canonicalHeaders(cfg.Server.ForwardHeaders)}
	if s.tel != nil {
		st.upstreams = upstreams(cfg)
	}
	var prevCaches map[string]*aliasCache
	if prev != nil {
		prevCaches = prev.caches
	}
	if st.caches, err = newCaches(cfg, s.opts, prevCaches); err != nil {
		return nil, err
	}
	for _, md := range cfg.Models {
		if md.Degraded.Enabled() {
			st.degraded[md.Name] = md.Degraded
		}
	}
	old := map[string]*client{}
	if prev != nil {
		for i := range prev.clients {
			old[prev.clients[i].name] = &prev.clients[i]
		}
	}
	for _, c := range cfg.Clients {
		cl, err := s.newClient(c, old[c.Name])
		if err != nil {
			return nil, err
		}
		st.clients = append(st.clients, cl)
	}
	return st, nil
}

// newClient builds the client of c; was, if set, is the client of that
// name before a reload or a change, whose spending carries on, and whose
// pacer does if its limits did not change.
func (s *Server) newClient(c config.Client, was *client) (client, error) {
	cl := client{name: c.Name, key: []byte(c.Key.Value()), weight: float64(max(c.Weight, 1)),
		fp: config.Fingerprint(c.Limits)}
	if c.Budget.Daily > 0 || c.Budget.Monthly > 0 {
		var spent *spending
		if was != nil && was.budget != nil {
			spent = was.budget.spending
		}
		cl.budget = newBudget(c.Budget, spent, s.opts.Clock)
		if s.fleet != nil {
			cl.budget.ledger = s.fleet.Ledger(c.Name) // one figure for the fleet
		}
	}
	switch {
	case was != nil && was.fp == cl.fp:
		cl.pacer = was.pacer
	case c.Limits.RPM > 0 || c.Limits.TPM > 0:
		ps := c.Limits.Pacer()
		ps.Clock = s.opts.Clock
		var err error
		if cl.pacer, err = limit.NewPacer(ps); err != nil {
			return client{}, fmt.Errorf("client %s: %w", c.Name, err)
		}
		if s.fleet != nil {
			s.fleet.ShareLimits("client:"+c.Name, cl.pacer, ps.Limits) // the replica's share
		}
	}
	if len(c.Models) > 0 {
		cl.models = map[string]bool{}
		for _, m := range c.Models {
			cl.models[m] = true
		}
	}
	return cl, nil
}

// state returns the current state.
func (s *Server) state() *state { return s.st.Load() }

// ReloadResult says what a reload changed.
type ReloadResult struct {
	router.Reuse
	// Warnings are settings that changed but take effect only after a
	// restart.
	Warnings []string `json:"warnings"`
}

// ErrNoLoader is returned by Reload when the server was built without a
// way to read its configuration again.
var ErrNoLoader = errors.New("gateway: no configuration loader; reload is not available")

// Reload reads the configuration again with Options.Load and, if it is
// valid, puts it in force: requests in flight finish under the old one,
// new requests get the new one. Targets, keys, caches and client limits
// whose settings did not change carry on as they were, breaker state
// included; client spending always carries on. A configuration that fails
// to load or build is refused with the reason, and the old one stays in
// force.
func (s *Server) Reload() (ReloadResult, error) {
	if s.opts.Load == nil {
		return ReloadResult{}, ErrNoLoader
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	cfg, err := s.opts.Load()
	if err != nil {
		return ReloadResult{}, err
	}
	prev := s.state()
	st, err := s.buildState(cfg, prev)
	if err != nil {
		return ReloadResult{}, err
	}
	res := ReloadResult{Reuse: st.router.ReuseFrom(prev.router), Warnings: []string{}}
	if cfg.Listen != prev.cfg.Listen {
		res.Warnings = append(res.Warnings, "listen changed from "+prev.cfg.Listen+" to "+cfg.Listen+"; it takes effect after a restart")
	}
	if cfg.State.Value() != prev.cfg.State.Value() || config.Fingerprint(cfg.Fleet) != config.Fingerprint(prev.cfg.Fleet) {
		res.Warnings = append(res.Warnings, "state and fleet take effect after a restart; the gateway goes on with "+prev.cfg.State.String())
	}
	if o, n := prev.cfg.Server, cfg.Server; o.ReadHeaderTimeout != n.ReadHeaderTimeout || o.IdleTimeout != n.IdleTimeout {
		res.Warnings = append(res.Warnings, "server.read_header_timeout and server.idle_timeout take effect after a restart")
	}
	if config.Fingerprint(cfg.Keys) != config.Fingerprint(prev.cfg.Keys) || config.Fingerprint(cfg.RequestLog) != config.Fingerprint(prev.cfg.RequestLog) {
		res.Warnings = append(res.Warnings, "keys and request_log take effect after a restart")
	}
	if config.Fingerprint(cfg.Idempotency) != config.Fingerprint(prev.cfg.Idempotency) {
		s.idem.configure(cfg.Idempotency)
	}
	s.st.Store(st)
	if cfg.AdminToken.Value() != prev.cfg.AdminToken.Value() {
		s.dash.hub.dropAll() // streams opened with the old token end
	}
	if cfg.AdminToken.Value() != "" {
		s.dash.hist.start() // the admin API may have just been turned on
	} else {
		s.dash.hist.stop()
	}
	live := map[*router.Target]bool{}
	for _, t := range st.router.Targets() {
		live[t] = true
	}
	s.metrics.Forget(res.Removed, func(t *router.Target) bool { return live[t] })
	if s.fleet != nil {
		for _, name := range res.Removed {
			s.fleet.Leave(name)
			s.fleet.UnshareLimits("target:" + name)
		}
	}
	s.log.Info("configuration reloaded", "file", cfg.File, "targets_added", res.Added, "targets_kept", res.Kept, "targets_rebuilt", res.Rebuilt,
		"targets_removed", res.Removed, "warnings", res.Warnings)
	return res, nil
}
