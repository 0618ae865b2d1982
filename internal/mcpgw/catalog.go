package mcpgw

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// sep joins a server's name and its tool's or prompt's: server__tool.
// Server names hold no "__" and do not end in "_" (config checks it), so
// the first "__" of a federated name is always the separator, and two
// servers' names can never collide.
const sep = "__"

// server is one configured upstream server: its replicas and what it
// offers, as last listed by any of them (replicas are copies).
type server struct {
	gw         *Gateway
	cfg        config.MCPServer
	replicas   []*replica
	httpClient *http.Client

	// mu guards the catalog.
	mu  sync.Mutex
	cat catalog
}

// catalog is what one server offers.
type catalog struct {
	tools     []*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	// listed is set once a replica listed the server.
	listed bool
}

// newServer builds server sc's replicas and breakers.
func (g *Gateway) newServer(sc config.MCPServer) (*server, error) {
	s := &server{gw: g, cfg: sc}
	base := g.o.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	h := http.Header{}
	for k, v := range sc.Headers {
		h.Set(k, v.Value())
	}
	s.httpClient = &http.Client{Transport: headerTransport{base: base, headers: h}}
	endpoints := sc.Endpoints()
	if sc.Transport == config.MCPStdio {
		endpoints = []string{""}
	}
	for i, ep := range endpoints {
		r := &replica{srv: s, name: replicaName(sc.Name, i, len(endpoints)), endpoint: ep}
		var err error
		if r.breaker, err = g.newBreaker(r.name, sc.Breaker); err != nil {
			return nil, err
		}
		s.replicas = append(s.replicas, r)
	}
	return s, nil
}

// refresh lists what the server offers on session cs and publishes it to
// the clients' views. Only what the server says it has is asked for.
func (s *server) refresh(ctx context.Context, cs *mcp.ClientSession) error {
	var c catalog
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	var err error
	if caps.Tools != nil {
		if c.tools, err = collect(cs.Tools(ctx, nil)); err != nil {
			return err
		}
	}
	if caps.Prompts != nil {
		if c.prompts, err = collect(cs.Prompts(ctx, nil)); err != nil {
			return err
		}
	}
	if caps.Resources != nil {
		if c.resources, err = collect(cs.Resources(ctx, nil)); err != nil {
			return err
		}
		if c.templates, err = collect(cs.ResourceTemplates(ctx, nil)); err != nil {
			return err
		}
	}
	c.tools = slices.DeleteFunc(c.tools, func(t *mcp.Tool) bool { return !servable(t) })
	c.listed = true
	s.mu.Lock()
	s.cat = c
	s.mu.Unlock()
	for _, t := range s.gw.tenants {
		t.publish(s, c)
	}
	return nil
}

// collect gathers an SDK listing's pages; the listing is bounded by the
// session's own message size limit.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// servable reports whether an upstream tool can be offered: its name is
// one a client can call and its input schema an object, as the SDK's
// server requires (a tool that is not would make it panic).
func servable(t *mcp.Tool) bool {
	if t == nil || t.Name == "" || len(t.Name) > 128 || strings.ContainsAny(t.Name, " \t\r\n/") {
		return false
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return false
	}
	var m struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(b, &m) == nil && m.Type == "object"
}

// changed re-lists the server of session cs, which said its list changed.
func (g *Gateway) changed(cs *mcp.ClientSession) {
	v, ok := g.sessions.Load(cs)
	if !ok {
		return
	}
	r := v.(*replica)
	g.wg.Add(1)
	go func() { // not on the session's reading goroutine, which the listing needs
		defer g.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), r.srv.cfg.Timeouts.Connect)
		defer cancel()
		if err := r.srv.refresh(ctx, cs); err != nil {
			g.log.Warn("mcp: listing after a change failed", "server", r.srv.cfg.Name, "err", err)
		}
	}()
}

// listed makes sure every server (only the one named only, when set)
// whose breakers let it has been listed: a client's first listing opens
// the sessions. A server that cannot be reached is left out of the
// listing, and tried again at the next.
func (g *Gateway) listed(ctx context.Context, t *tenant, only string) {
	var wg sync.WaitGroup
	for _, s := range g.servers {
		s.mu.Lock()
		done := s.cat.listed
		s.mu.Unlock()
		if done || !t.seesServer(s.cfg.Name) || only != "" && s.cfg.Name != only {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.open(ctx)
		}()
	}
	wg.Wait()
}

// open opens a session on the first replica whose breaker is closed.
func (s *server) open(ctx context.Context) {
	for _, r := range s.replicas {
		p, err := r.breaker.Allow()
		if err != nil {
			continue
		}
		_, err = r.session(ctx)
		p.Report(verdictOutcome(classify(ctx, err))) // opening is the replica's own doing
		if err == nil {
			return
		}
		s.gw.log.Warn("mcp: cannot open a session", "replica", r.name, "err", err)
	}
}

// federated returns the name clients see for a server's tool or prompt.
func federated(server, name string) string { return server + sep + name }
