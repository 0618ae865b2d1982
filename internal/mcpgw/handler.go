package mcpgw

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tenantKey is the context key of the caller's *tenant.
type tenantKey struct{}

// Handler returns the /mcp endpoint: Streamable HTTP at /mcp, and the
// older HTTP+SSE transport at /mcp/sse (its messages are posted to the
// URL its stream names). Mount it at both paths.
func (g *Gateway) Handler() http.Handler { return g.handler }

// newHandler builds the handler: authentication, then the SDK's.
func (g *Gateway) newHandler() http.Handler {
	getServer := func(r *http.Request) *mcp.Server {
		t, _ := r.Context().Value(tenantKey{}).(*tenant)
		if t == nil {
			return nil // not reached: serve puts the tenant in
		}
		return t.server
	}
	limit := int64(g.o.Config.MaxBodyBytes)
	streamable := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout: g.o.Config.SessionIdle, MaxRequestBodyBytes: limit, Logger: g.o.Logger})
	// An SSE handler per client: a session id is looked up only among
	// the sessions of the client that presents it.
	sse := map[*tenant]*mcp.SSEHandler{}
	for _, t := range g.tenants {
		sse[t] = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return t.server }, &mcp.SSEOptions{MaxRequestBodyBytes: limit})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, ok := g.identify(w, r)
		if !ok {
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), tenantKey{}, t))
		if strings.HasSuffix(r.URL.Path, "/sse") {
			sse[t].ServeHTTP(w, r)
			return
		}
		streamable.ServeHTTP(w, r)
	})
}

// identify returns the caller's view, or false after writing a 401, or a
// 404 for a session another client opened (as for one that does not
// exist: the caller learns nothing of others' sessions).
func (g *Gateway) identify(w http.ResponseWriter, r *http.Request) (*tenant, bool) {
	name := ""
	if g.o.Identify != nil {
		var ok bool
		if name, ok = g.o.Identify(w, r); !ok {
			return nil, false
		}
	}
	t := g.tenants[name]
	if t == nil {
		http.Error(w, "this client may not use /mcp", http.StatusForbidden)
		return nil, false
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" && !strings.HasPrefix(id, t.tag+"-") {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil, false
	}
	return t, true
}
