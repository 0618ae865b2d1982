package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// The dashboard's MCP cards, in a real browser: a server's replicas with
// their breakers; the hung replica's shows open once its calls time out.
func TestDashboardShowsMCPServers(t *testing.T) {
	exe := findBrowser(t)
	a, sa := simMCP(t, "a")
	_, sb := simMCP(t, "b")
	cfg, err := parse(`admin_token: ` + dashboardToken + `
providers: {openai: {keys: [k]}}
models: [{name: chat, targets: [{provider: openai, model: m}]}]
mcp:
  servers:
    - {name: tools, replicas: ["` + sa.URL + `/mcp", "` + sb.URL + `/mcp"], breaker: {consecutive: 1, open: 1m}, timeouts: {total: 100ms, deadline: 30s}}
`)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Config: cfg, DashboardInterval: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(s.Handler())
	t.Cleanup(s.Close)
	t.Cleanup(gw.Close)
	t.Cleanup(gw.CloseClientConnections)

	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: gw.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	a.SetFaults(sim.MCPFaults{Hang: time.Minute})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tools__search", Arguments: map[string]any{"q": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("call = %+v, %v; want b's answer", res, err)
	}

	tab := openBrowser(t, exe)
	tab.viewport(1280, 800)
	if code := tab.navigate(gw.URL + "/dashboard#token=" + dashboardToken); code != http.StatusOK {
		t.Fatalf("dashboard answered %d", code)
	}
	const card = `document.querySelector('article[data-mcp="tools"]')`
	tab.waitTrue(card+` !== null`, 10*time.Second)
	if got := tab.evalString(card + `.querySelector('li[data-replica="tools#0"] .state').dataset.state`); got != "open" {
		t.Errorf("the hung replica shows %q; want open", got)
	}
	if got := tab.evalString(card + `.querySelector('li[data-replica="tools#1"] .state').innerText`); got != "● closed" {
		t.Errorf("the healthy replica shows %q; want closed", got)
	}
	tab.screenshot(artifacts(t), "dashboard-mcp.png")
	tab.noExceptions()
}
