package gateway

import (
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/mcpgw"
)

// startMCP serves the configuration's MCP servers (mcp:) at /mcp, for the
// same client keys as the models, each with its clients[].mcp rights. The
// MCP block is read at start: a reload does not change it (its sessions
// and stdio processes belong to the running instance).
func (s *Server) startMCP(cfg *config.Config) error {
	if len(cfg.MCP.Servers) == 0 {
		return nil
	}
	o := mcpgw.Options{Config: cfg.MCP, Clients: cfg.Clients, Identify: s.Identify, Clock: s.opts.Clock,
		Logger: s.log, Transport: s.opts.Transport, OnTransition: s.opts.OnTransition, Telemetry: s.tel}
	if s.fleet != nil {
		o.Share = s.fleet.Join // the replicas' breakers are the fleet's, as the targets' are
	}
	var g *mcpgw.Gateway
	m := s.metrics.NewMCP(func() []*breaker.Breaker { return g.Breakers() })
	o.OnCall = func(c mcpgw.Call) { m.Call(c.Server, c.Tool, c.Outcome, c.Duration) }
	g, err := mcpgw.New(o)
	if err != nil {
		return err
	}
	s.mcp = g
	s.mux.Handle("/mcp", g.Handler())
	s.mux.Handle("/mcp/", g.Handler())
	return nil
}

// mcpStatus is the MCP servers' part of the status document.
func (s *Server) mcpStatus() []mcpgw.ServerStatus {
	if s.mcp == nil {
		return nil
	}
	return s.mcp.Status()
}
