package mcpgw

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// benchCalls calls tool on cs b.N times, one at a time, and reports the
// median and p99 latency beside the mean.
func benchCalls(b *testing.B, cs *mcp.ClientSession, tool string) {
	b.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"q": "fox"}}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), p)
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", res, err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// benchSession opens an SDK client session to url.
func benchSession(b *testing.B, url string) *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchUpstream serves a simulated MCP server.
func benchUpstream(b *testing.B) string {
	m := sim.NewMCP("bench")
	ts := httptest.NewServer(m.Handler())
	b.Cleanup(func() { m.Close(); ts.CloseClientConnections(); ts.Close() })
	return ts.URL + "/mcp"
}

// BenchmarkToolCallDirect is an SDK client calling the server itself.
func BenchmarkToolCallDirect(b *testing.B) {
	cs := benchSession(b, benchUpstream(b))
	benchCalls(b, cs, "search")
}

// BenchmarkToolCallProxied is the same call through the gateway: the
// client's session, the tenant's rights, the breaker, the deadline and the
// upstream session, over one more loopback hop.
func BenchmarkToolCallProxied(b *testing.B) {
	url := benchUpstream(b)
	cfg, err := config.Parse("b.yaml", []byte("providers: {openai: {keys: [k]}}\nmodels: [{name: c, targets: [{provider: openai, model: m}]}]\n"+
		"mcp:\n  servers: [{name: s, url: \""+url+"\"}]\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	gw, err := New(Options{Config: cfg.MCP, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(gw.Handler())
	b.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); gw.Close() })
	cs := benchSession(b, ts.URL+"/mcp")
	benchCalls(b, cs, "s__search")
}
