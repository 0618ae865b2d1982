package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// keyed adds a client key to every request.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Api-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPThroughTheGateway(t *testing.T) {
	_, up := simMCP(t, "tools-a")
	u := newUpstream(t, chatOK("a"))
	_, hs := start(t, Options{}, `
admin_token: adm
providers: {a: {type: openai, base_url: "%s", keys: [k]}}
models: [{name: chat, targets: [{provider: a, model: m}]}]
clients:
  - {name: agent, key: sk-agent, mcp: {servers: [tools]}}
  - {name: other, key: sk-other, mcp: {tools: ["tools__search"]}}
mcp:
  servers: [{name: tools, url: "`+up.URL+`/mcp", headers: {Authorization: "Bearer upstream-secret"}}]
`, u)
	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp",
		HTTPClient: &http.Client{Transport: keyed{"sk-agent"}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tools__search", Arguments: map[string]any{"q": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if _, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp",
		HTTPClient: &http.Client{Transport: keyed{"sk-wrong"}}, MaxRetries: -1}, nil); err == nil {
		t.Fatal("a wrong key opened a session")
	}

	eventually(t, "the call's metrics", func() bool {
		return strings.Contains(scrape(t, hs.URL), `fusebox_mcp_calls_total{outcome="ok",server="tools",tool="search"} 1`)
	})
	if body := scrape(t, hs.URL); !strings.Contains(body, `fusebox_mcp_breaker_state{breaker="tools",state="closed"} 1`) {
		t.Fatal("no breaker state for the MCP server in /metrics")
	}
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/fusebox/status", nil)
	req.Header.Set("Authorization", "Bearer adm")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		MCP []struct {
			Name     string
			Tools    int
			Replicas []struct{ Name, State string }
		}
	}
	raw, _ := io.ReadAll(resp.Body)
	json.Unmarshal(raw, &doc)
	if len(doc.MCP) != 1 || doc.MCP[0].Tools != 3 || doc.MCP[0].Replicas[0].State != "closed" {
		t.Fatalf("status mcp = %+v", doc.MCP)
	}
	if strings.Contains(string(raw), "upstream-secret") {
		t.Fatal("the upstream credential is in the status")
	}
}

// With state: redis://…, an MCP replica's breaker is the fleet's: one
// gateway's timeouts open it for the other, which then sends nothing to
// the hung replica.
func TestMCPBreakersAreSharedByTheFleet(t *testing.T) {
	state := "state: " + redistest.Start(t).URL() + "\nfleet: {sync: 10ms, timeout: 2s}\n"
	a, sa := simMCP(t, "a")
	_, sb := simMCP(t, "b")
	yaml := state + `providers: {openai: {keys: [k]}}
models: [{name: chat, targets: [{provider: openai, model: m}]}]
mcp:
  servers:
    - {name: tools, replicas: ["` + sa.URL + `/mcp", "` + sb.URL + `/mcp"], breaker: {consecutive: 2, open: 1m}, timeouts: {total: 100ms, deadline: 30s}}
`
	s1, hs1 := start(t, Options{}, yaml)
	s2, hs2 := start(t, Options{}, yaml)
	connect := func(base string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	c1, c2 := connect(hs1.URL), connect(hs2.URL)
	a.SetFaults(sim.MCPFaults{Hang: time.Minute})
	for range 2 {
		if res, err := c1.CallTool(context.Background(), &mcp.CallToolParams{Name: "tools__search", Arguments: map[string]any{"q": "x"}}); err != nil || res.IsError {
			t.Fatalf("via gateway 1: %+v, %v", res, err)
		}
	}
	if st := s1.mcp.Status()[0].Replicas[0].State; st != "open" {
		t.Fatalf("gateway 1's breaker of the hung replica is %s; want open", st)
	}
	eventually(t, "gateway 2 to learn of the trip", func() bool { return s2.mcp.Status()[0].Replicas[0].State == "open" })
	before := a.Calls("search")
	if res, err := c2.CallTool(context.Background(), &mcp.CallToolParams{Name: "tools__search", Arguments: map[string]any{"q": "x"}}); err != nil || res.IsError {
		t.Fatalf("via gateway 2: %+v, %v", res, err)
	}
	if a.Calls("search") != before {
		t.Fatal("gateway 2 sent a call to the replica the fleet's breaker holds open")
	}
}

// simMCP serves a simulated MCP server called name over Streamable HTTP,
// at the returned server's /mcp.
func simMCP(t *testing.T, name string) (*sim.MCP, *httptest.Server) {
	t.Helper()
	m := sim.NewMCP(name)
	ts := httptest.NewServer(m.Handler())
	t.Cleanup(func() {
		m.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return m, ts
}
