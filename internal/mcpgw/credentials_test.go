package mcpgw

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

func TestUpstreamCredentialsAreTheGatewaysNotTheClients(t *testing.T) {
	m := sim.NewMCP("creds")
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		m.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { m.Close(); ts.CloseClientConnections(); ts.Close() })
	cfg := parse(t, "clients:\n  - {name: web, key: key-web}\n"+
		serverYAML("c", "      url: "+ts.URL+"/mcp\n      headers: {Authorization: Bearer upstream-token}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "key-web", nil)
	if _, isErr := call(t, cs, "c__search", map[string]any{"q": "x"}); isErr {
		t.Fatal("call failed")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, a := range seen {
		if a != "Bearer upstream-token" {
			t.Fatalf("request %d upstream had Authorization %q; want the configured one, never the client's", i, a)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no request reached the upstream")
	}
}
