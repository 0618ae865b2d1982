package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMCPDefaults(t *testing.T) {
	c, err := Parse("f.yaml", with(
		"mcp:", // 8
		"  servers:",
		"    - {name: web, url: http://h/mcp, timeouts: {total: 5s}, tools: {write: {retry: \"no\"}}}",
		"    - {name: files, command: [srv, /data], env: {TOKEN: s3cret}}",
	), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	m := c.MCP
	web, files := m.Servers[0], m.Servers[1]
	switch {
	case m.MaxBodyBytes != 1<<20 || m.SessionIdle != 30*time.Minute:
		t.Errorf("mcp = %+v", m)
	case web.Transport != MCPStreamable || files.Transport != MCPStdio || web.Attempts != 2:
		t.Errorf("transports %q %q, attempts %d", web.Transport, files.Transport, web.Attempts)
	case web.Timeouts != (MCPTimeouts{Connect: 10 * time.Second, Total: 5 * time.Second}):
		t.Errorf("timeouts = %+v", web.Timeouts)
	case web.Tool("write").Retry != MCPRetryNo || web.Tool("write").Timeouts.Total != 5*time.Second:
		t.Errorf("write = %+v", web.Tool("write"))
	case web.Tool("other").Retry != MCPRetryAuto || web.Breaker.Open != 5*time.Second:
		t.Errorf("other = %+v, breaker %+v", web.Tool("other"), web.Breaker)
	case strings.Contains(c.String(), "s3cret"):
		t.Error("a stdio server's env is shown")
	}
}

func TestMCPErrors(t *testing.T) {
	got := parseErrors(t, with(
		"clients:",                                                   // 8
		"  - name: web",                                              // 9
		"    key: k-web",                                             // 10
		"    mcp: {tools: [\"[bad\"], rpm: -1}",                      // 11
		"mcp:",                                                       // 12
		"  servers:",                                                 // 13
		"    - {name: web, url: http://h/mcp}",                       // 14
		"    - {name: web, url: http://h2/mcp}",                      // 15: the collision
		"    - {name: a__b, url: http://h/mcp}",                      // 16
		"    - {name: x_, url: http://h/mcp}",                        // 17
		"    - {name: s, transport: stdio}",                          // 18
		"    - {name: h, url: ftp://h, replicas: [http://a]}",        // 19
		"    - {name: u, url: \"http://user:pw@h/mcp\"}",             // 20
		"    - {name: t, url: http://h, tools: {w: {retry: maybe}}}", // 21
		"    - {name: q, transport: grpc, url: http://h}",            // 22
	))
	want := []string{
		`f.yaml:11: clients[0].mcp.rpm: must not be negative, got -1`,
		`f.yaml:11: clients[0].mcp.tools[0]: bad glob "[bad" (want * ? [a-z] patterns)`,
		`f.yaml:15: mcp.servers[1].name: duplicate MCP server "web" (first on line 14): its tools' names would collide`,
		`f.yaml:16: mcp.servers[2].name: bad MCP server name "a__b": letters, digits, - and _, at most 32, without "__" or a final "_" (it prefixes tools as name__tool)`,
		`f.yaml:17: mcp.servers[3].name: bad MCP server name "x_": letters, digits, - and _, at most 32, without "__" or a final "_" (it prefixes tools as name__tool)`,
		`f.yaml:18: mcp.servers[4].command: a stdio MCP server needs a command (program and arguments)`,
		`f.yaml:19: mcp.servers[5].replicas: give url or replicas, not both`,
		`f.yaml:19: mcp.servers[5].url: want an http:// or https:// URL, got "ftp://h"`,
		`f.yaml:20: mcp.servers[6].url: has credentials in the URL; give them in headers, which are not shown`,
		`f.yaml:21: mcp.servers[7].tools.w.retry: unknown retry mode "maybe" (known: auto, yes, no)`,
		`f.yaml:22: mcp.servers[8].transport: unknown MCP transport "grpc" (known: http, sse, stdio)`,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %s", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d errors, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, g := range got {
		if strings.Contains(g, "pw@") {
			t.Errorf("a secret is shown: %s", g)
		}
	}
}
