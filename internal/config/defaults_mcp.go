package config

import (
	"cmp"
	"strconv"
	"time"
)

// The MCP endpoint's defaults.
const (
	DefaultMCPMaxBodyBytes = 1 << 20
	DefaultMCPSessionIdle  = 30 * time.Minute
	DefaultMCPConnect      = 10 * time.Second
	DefaultMCPTotal        = 30 * time.Second
	DefaultMCPAttempts     = 2
)

// mcpDefaults fills the defaults of the mcp block; breaker is
// defaults.breaker as the file wrote it.
func (c *Config) mcpDefaults(breaker Breaker) {
	m := &c.MCP
	m.MaxBodyBytes = cmp.Or(m.MaxBodyBytes, DefaultMCPMaxBodyBytes)
	m.SessionIdle = cmp.Or(m.SessionIdle, DefaultMCPSessionIdle)
	for i := range m.Servers {
		s, path := &m.Servers[i], "mcp.servers["+strconv.Itoa(i)+"]"
		if s.Transport == "" {
			s.Transport = MCPStreamable
			if len(s.Command) > 0 {
				s.Transport = MCPStdio
			}
		}
		inherit(&s.Breaker, breaker, path+".breaker", c.lines)
		breakerDefaults(&s.Breaker)
		s.Attempts = cmp.Or(s.Attempts, DefaultMCPAttempts)
		s.Timeouts.Connect = cmp.Or(s.Timeouts.Connect, DefaultMCPConnect)
		s.Timeouts.Total = cmp.Or(s.Timeouts.Total, DefaultMCPTotal)
		for name, t := range s.Tools {
			t.Retry = cmp.Or(t.Retry, MCPRetryAuto)
			t.Timeouts.Connect = cmp.Or(t.Timeouts.Connect, s.Timeouts.Connect)
			t.Timeouts.Total = cmp.Or(t.Timeouts.Total, s.Timeouts.Total)
			t.Timeouts.Deadline = cmp.Or(t.Timeouts.Deadline, s.Timeouts.Deadline)
			s.Tools[name] = t
		}
	}
}

// Endpoints returns the server's HTTP endpoints, its url or its replicas;
// none for stdio.
func (s MCPServer) Endpoints() []string {
	if s.URL != "" {
		return []string{s.URL}
	}
	return s.Replicas
}

// Tool returns the settings of the server's tool name: its own entry, or
// the server's timeouts with retry auto.
func (s MCPServer) Tool(name string) MCPTool {
	if t, ok := s.Tools[name]; ok {
		return t
	}
	return MCPTool{Retry: MCPRetryAuto, Timeouts: s.Timeouts}
}
