package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPFaults are the faults a simulated MCP server injects into its tool
// calls, set live with MCP.SetFaults or POST /sim/mcp/faults.
type MCPFaults struct {
	// Hang makes every tool call wait this long (or until the caller
	// gives up) before it is answered. 0: no hang.
	Hang time.Duration `json:"hang"`
	// Slow adds this much latency to every tool call.
	Slow time.Duration `json:"slow"`
	// Error answers every tool call with a JSON-RPC internal error.
	Error bool `json:"error"`
	// Throttle answers every tool call with a rate-limit error.
	Throttle bool `json:"throttle"`
}

// MCP is a simulated MCP server with scripted faults: a read-only tool
// (search), a writing tool (create_item), a tool that reports progress
// (count), a prompt (greeting) and a resource (sim://readme). Serve it
// over Streamable HTTP with Handler or over stdio with Run. It is safe for
// concurrent use.
type MCP struct {
	name   string
	server *mcp.Server
	calls  sync.Map // tool name → *atomic.Int64
	// release ends the hangs in flight (Close, LoseSessions).
	mu      sync.Mutex
	faults  MCPFaults
	release chan struct{}
	// handler serves Streamable HTTP; LoseSessions replaces it.
	handler atomic.Pointer[mcp.StreamableHTTPHandler]
}

// NewMCP returns a simulated MCP server called name (its answers name it).
func NewMCP(name string) *MCP {
	m := &MCP{name: name, release: make(chan struct{})}
	m.server = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}}}`)
	m.server.AddTool(&mcp.Tool{Name: "search", Description: "Search (read-only).", InputSchema: obj,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, m.tool("search", m.search))
	m.server.AddTool(&mcp.Tool{Name: "create_item", Description: "Create an item (writes).", InputSchema: obj},
		m.tool("create_item", m.create))
	m.server.AddTool(&mcp.Tool{Name: "count", Description: "Count to n, reporting progress.", InputSchema: obj,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, m.tool("count", m.count))
	m.server.AddPrompt(&mcp.Prompt{Name: "greeting", Description: "A greeting."}, m.greeting)
	m.server.AddResource(&mcp.Resource{URI: "sim://" + name + "/readme", Name: "readme", MIMEType: "text/plain"}, m.readme)
	m.LoseSessions()
	return m
}

// Offer adds a read-only tool called name, which answers its own name:
// the server tells its clients that its tool list changed.
func (m *MCP) Offer(name string) {
	m.server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, m.tool(name, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(name + " from " + m.name), nil
	}))
}

// Handler serves the server over Streamable HTTP at any path, and its
// faults at /sim/mcp/faults (GET reads, POST sets, DELETE clears).
func (m *MCP) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sim/mcp/faults" {
			m.serveFaults(w, r)
			return
		}
		m.handler.Load().ServeHTTP(w, r)
	})
}

// Run serves the server on t (mcp.StdioTransport for a subprocess) until
// ctx ends or the client leaves.
func (m *MCP) Run(ctx context.Context, t mcp.Transport) error { return m.server.Run(ctx, t) }

// SetFaults replaces the faults.
func (m *MCP) SetFaults(f MCPFaults) {
	m.mu.Lock()
	m.faults = f
	m.mu.Unlock()
}

// LoseSessions forgets every Streamable HTTP session, as a restarted
// server does: clients' next requests get 404 and must start again.
func (m *MCP) LoseSessions() {
	m.handler.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.server }, nil))
	m.closeSessions()
}

// closeSessions ends the server's sessions, their streams with them.
func (m *MCP) closeSessions() {
	for ss := range m.server.Sessions() {
		ss.Close()
	}
}

// Close ends the hangs in flight and the sessions.
func (m *MCP) Close() {
	m.mu.Lock()
	select {
	case <-m.release:
	default:
		close(m.release)
	}
	m.mu.Unlock()
	m.closeSessions()
}

// Calls returns how many times tool was called (faulted calls included).
func (m *MCP) Calls(tool string) int64 {
	if c, ok := m.calls.Load(tool); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

// tool wraps a tool's handler with the counting and the faults.
func (m *MCP) tool(name string, h mcp.ToolHandler) mcp.ToolHandler {
	c, _ := m.calls.LoadOrStore(name, new(atomic.Int64))
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c.(*atomic.Int64).Add(1)
		m.mu.Lock()
		f, release := m.faults, m.release
		m.mu.Unlock()
		if d := f.Hang + f.Slow; d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server shutting down"}
			}
		}
		switch {
		case f.Throttle:
			return nil, &jsonrpc.Error{Code: -32000, Message: "rate limit exceeded, slow down"}
		case f.Error:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "simulated internal error"}
		}
		return h(ctx, req)
	}
}

// args reads a call's arguments, q and n.
func args(req *mcp.CallToolRequest) (q string, n int) {
	var a struct {
		Q string `json:"q"`
		N int    `json:"n"`
	}
	json.Unmarshal(req.Params.Arguments, &a)
	return a.Q, a.N
}

func (m *MCP) search(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, _ := args(req)
	if q == "" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "search needs q"}}}, nil
	}
	return text("results for " + strconv.Quote(q) + " from " + m.name), nil
}

func (m *MCP) create(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, _ := args(req)
	return text("created " + strconv.Quote(q) + " on " + m.name), nil
}

func (m *MCP) count(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	_, n := args(req)
	tok := req.Params.GetProgressToken()
	for i := 1; i <= n && tok != nil; i++ {
		req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(n)})
		t := time.NewTimer(10 * time.Millisecond) // a step of work, as a real tool takes
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	return text("counted to " + strconv.Itoa(n)), nil
}

func (m *MCP) greeting(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + m.name}}}}, nil
}

func (m *MCP) readme(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "readme of " + m.name}}}, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// serveFaults reads, sets or clears the faults.
func (m *MCP) serveFaults(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		var f struct {
			Hang, Slow   string
			Error        bool
			Throttle     bool
			LoseSessions bool `json:"lose_sessions"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&f); err != nil {
			http.Error(w, "bad faults: "+err.Error(), http.StatusBadRequest)
			return
		}
		hang, err1 := optDuration(f.Hang)
		slow, err2 := optDuration(f.Slow)
		if err1 != nil || err2 != nil {
			http.Error(w, "bad duration in hang or slow", http.StatusBadRequest)
			return
		}
		m.SetFaults(MCPFaults{Hang: hang, Slow: slow, Error: f.Error, Throttle: f.Throttle})
		if f.LoseSessions {
			m.LoseSessions()
		}
	case http.MethodDelete:
		m.SetFaults(MCPFaults{})
	case http.MethodGet:
	default:
		http.Error(w, "GET, POST or DELETE", http.StatusMethodNotAllowed)
		return
	}
	m.mu.Lock()
	f := m.faults
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"hang":%q,"slow":%q,"error":%t,"throttle":%t}`+"\n", f.Hang, f.Slow, f.Error, f.Throttle)
}

// optDuration parses a duration, "" being 0.
func optDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}
