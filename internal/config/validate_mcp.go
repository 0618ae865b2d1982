package config

import (
	"net/textproto"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// mcpName is what an MCP server may be called: its name prefixes its
// tools as name__tool, so it holds no "__" and does not end in "_" (either
// would make two servers' prefixed names collide).
var mcpName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// checkMCP checks the mcp block and the clients' mcp rights.
func (c *Config) checkMCP(r *report) {
	negatives(r, "mcp", reflect.ValueOf(c.MCP))
	seen := map[string]string{} // name → path
	for i := range c.MCP.Servers {
		c.checkMCPServer(r, i, seen)
	}
	for i, cl := range c.Clients {
		p := "clients[" + strconv.Itoa(i) + "].mcp"
		negatives(r, p, reflect.ValueOf(cl.MCP))
		if cl.MCP.RPM != 0 && len(c.MCP.Servers) == 0 {
			r.field(p+".rpm", "is set, but there are no MCP servers (mcp.servers)")
		}
		checkMCPGlobs(r, p+".servers", cl.MCP.Servers)
		checkMCPGlobs(r, p+".tools", cl.MCP.Tools)
	}
}

// checkMCPServer checks mcp.servers[i]; seen holds the names so far.
func (c *Config) checkMCPServer(r *report, i int, seen map[string]string) {
	s, p := c.MCP.Servers[i], "mcp.servers["+strconv.Itoa(i)+"]"
	switch {
	case s.Name == "":
		r.field(p+".name", "MCP server has no name")
	case seen[s.Name] != "":
		r.field(p+".name", "duplicate MCP server "+quote(s.Name)+" (first "+r.place(seen[s.Name])+"): its tools' names would collide")
	case !mcpName.MatchString(s.Name) || strings.Contains(s.Name, "__") || strings.HasSuffix(s.Name, "_"):
		r.field(p+".name", "bad MCP server name "+quote(s.Name)+": letters, digits, - and _, at most 32, without \"__\" or a final \"_\" (it prefixes tools as name__tool)")
	default:
		seen[s.Name] = p + ".name"
	}
	if !slices.Contains(mcpTransports, s.Transport) {
		r.field(p+".transport", "unknown MCP transport "+quote(string(s.Transport))+" (known: http, sse, stdio)")
		return
	}
	c.checkMCPReach(r, p, s)
	checkBreaker(r, p+".breaker", s.Breaker)
	negatives(r, p, reflect.ValueOf(s))
	negatives(r, p+".timeouts", reflect.ValueOf(s.Timeouts))
	for _, name := range sortedKeys(s.Tools) {
		t, tp := s.Tools[name], p+".tools."+name
		if t.Retry != MCPRetryAuto && t.Retry != MCPRetryYes && t.Retry != MCPRetryNo {
			r.field(tp+".retry", "unknown retry mode "+quote(string(t.Retry))+" (known: auto, yes, no)")
		}
		negatives(r, tp+".timeouts", reflect.ValueOf(t.Timeouts))
	}
}

// checkMCPReach checks how server s at p is reached: endpoints for http and
// sse, a command for stdio, and the credentials each may carry.
func (c *Config) checkMCPReach(r *report, p string, s MCPServer) {
	if s.Transport == MCPStdio {
		switch {
		case len(s.Command) == 0 || s.Command[0] == "":
			r.field(p+".command", "a stdio MCP server needs a command (program and arguments)")
		case s.URL != "" || len(s.Replicas) > 0:
			r.field(p+".url", "a stdio MCP server is started from its command; url and replicas are for http and sse")
		}
		if len(s.Headers) > 0 {
			r.field(p+".headers", "a stdio MCP server has no HTTP headers; give its credentials in env")
		}
		for _, k := range sortedKeys(s.Env) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				r.field(p+".env", "bad environment variable name "+quote(k))
			}
		}
		return
	}
	switch {
	case len(s.Command) > 0:
		r.field(p+".command", "is set, but transport is "+string(s.Transport)+"; a command is for stdio")
	case s.URL != "" && len(s.Replicas) > 0:
		r.field(p+".replicas", "give url or replicas, not both")
	case s.URL == "" && len(s.Replicas) == 0:
		r.field(p+".url", "an "+string(s.Transport)+" MCP server needs a url (or replicas)")
	}
	if len(s.Env) > 0 {
		r.field(p+".env", "env is for stdio servers; give an HTTP server's credentials in headers")
	}
	if s.URL != "" {
		checkMCPURL(r, p+".url", s.URL)
	}
	for j, u := range s.Replicas {
		checkMCPURL(r, p+".replicas["+strconv.Itoa(j)+"]", u)
	}
	for _, k := range sortedKeys(s.Headers) {
		if k == "" || textproto.CanonicalMIMEHeaderKey(k) == "" || strings.ContainsAny(k, " :\r\n\t") {
			r.field(p+".headers", "bad header name "+quote(k))
		}
	}
}

// checkMCPURL checks an MCP server's endpoint u at field.
func checkMCPURL(r *report, field, u string) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		r.field(field, "want an http:// or https:// URL, got "+quote(u))
	} else if pu.User != nil {
		r.field(field, "has credentials in the URL; give them in headers, which are not shown")
	}
}

// checkMCPGlobs checks a client's globs at field.
func checkMCPGlobs(r *report, field string, globs []string) {
	for j, g := range globs {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			r.field(field+"["+strconv.Itoa(j)+"]", "bad glob "+quote(g)+" (want * ? [a-z] patterns)")
		}
	}
}
