package mcpgw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sseUpstream serves a simulated tool server over the older HTTP+SSE
// transport: one with a single tool, "echo".
func sseUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "old", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo over sse"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() {
		for ss := range s.Sessions() {
			ss.Close()
		}
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

func TestSSEOnBothSides(t *testing.T) {
	cfg := parse(t, serverYAML("old", "      transport: sse\n      url: "+sseUpstream(t)+"\n"))
	h := start(t, cfg, Options{})
	c := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: h.url + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, isErr := call(t, cs, "old__echo", nil); isErr || got != "echo over sse" {
		t.Fatalf("old__echo = %q (isError %v)", got, isErr)
	}
}
