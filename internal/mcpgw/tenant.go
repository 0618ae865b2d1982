package mcpgw

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/limit"
)

// tenant is one client's view of the federation: an MCP server of its
// own holding only the tools, prompts and resources it may use, and its
// rate limit. A call of a tool it may not use finds no such tool.
type tenant struct {
	gw     *Gateway
	name   string
	rights config.ClientMCP
	// pacer caps the client's tool calls (rights.RPM); nil: no cap.
	pacer *limit.Pacer
	// tag starts every session id the tenant's server hands out, so that
	// a session is only ever used by the client that opened it.
	tag    string
	server *mcp.Server

	// mu guards shown: what is registered on server, by upstream server.
	mu    sync.Mutex
	shown map[string]*shown
}

// shown is what a tenant's server holds of one upstream server.
type shown struct {
	tools, prompts, resources, templates []string
}

// buildTenants builds each client's view (one open view without clients).
func (g *Gateway) buildTenants() error {
	clients := g.o.Clients
	if len(clients) == 0 {
		clients = []config.Client{{}}
	}
	for _, c := range clients {
		t := &tenant{gw: g, name: c.Name, rights: c.MCP, shown: map[string]*shown{}}
		sum := sha256.Sum256([]byte("fusebox-mcp:" + c.Name))
		t.tag = hex.EncodeToString(sum[:6])
		if c.MCP.RPM > 0 {
			p, err := limit.NewPacer(limit.PacerSettings{Clock: g.o.Clock,
				Limits: limit.Limits{RequestsPerMinute: float64(c.MCP.RPM)}})
			if err != nil {
				return err
			}
			t.pacer = p
		}
		t.server = mcp.NewServer(&mcp.Implementation{Name: "fusebox", Version: "1"}, &mcp.ServerOptions{
			GetSessionID: func() string { return t.tag + "-" + rand.Text() },
			Capabilities: &mcp.ServerCapabilities{
				Tools:     &mcp.ToolCapabilities{ListChanged: true},
				Prompts:   &mcp.PromptCapabilities{ListChanged: true},
				Resources: &mcp.ResourceCapabilities{ListChanged: true},
			},
		})
		t.server.AddReceivingMiddleware(t.listFirst)
		g.tenants[c.Name] = t
	}
	return nil
}

// listFirst opens the sessions of the servers not yet listed before a
// client's listing is answered; before a call (whose tool may be one of a
// server not listed yet), only the session of the server it names, so
// that a server that is down delays no call to the others.
func (t *tenant) listFirst(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read":
			t.gw.listed(ctx, t, "")
		case "tools/call", "prompts/get":
			if server, _, ok := strings.Cut(calledName(req), sep); ok {
				t.gw.listed(ctx, t, server)
			}
		}
		return next(ctx, method, req)
	}
}

// calledName is the tool or prompt a call names.
func calledName(req mcp.Request) string {
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		return p.Name
	case *mcp.GetPromptParams:
		return p.Name
	}
	return ""
}

// seesServer reports whether the client may see anything of server: a
// listing opens only those servers' sessions.
func (t *tenant) seesServer(server string) bool {
	return t.seesWhole(server) || len(t.rights.Tools) > 0
}

// seesTool reports whether the client may list and call the federated
// tool name of server.
func (t *tenant) seesTool(server, name string) bool {
	if len(t.rights.Servers) == 0 && len(t.rights.Tools) == 0 {
		return true
	}
	return matchAny(t.rights.Servers, server) || matchAny(t.rights.Tools, name)
}

// seesWhole reports whether the client may use a server's prompts and
// resources: only a servers glob (or no rights set) grants them.
func (t *tenant) seesWhole(server string) bool {
	return len(t.rights.Servers) == 0 && len(t.rights.Tools) == 0 || matchAny(t.rights.Servers, server)
}

// matchAny reports whether a glob of globs matches name.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// close closes the sessions of the tenant's clients.
func (t *tenant) close() {
	for ss := range t.server.Sessions() {
		ss.Close()
	}
}
