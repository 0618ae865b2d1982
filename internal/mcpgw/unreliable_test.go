package mcpgw

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
)

// badUpstream serves h as an MCP server that is not one.
func badUpstream(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		default:
			h(w, r)
		}
	}))
	t.Cleanup(func() {
		close(done)
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

func TestBrokenUpstreamsAreLeftOutOfTheListing(t *testing.T) {
	_, good := upstream(t, "good")
	release := make(chan struct{})
	hang := badUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		select { // hangs before headers
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	garbage := badUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("\x00\xffnot json at all{{{"))
	})
	reset := badUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	cfg := parse(t, "mcp:\n  servers:\n"+
		"    - {name: good, url: "+good+"}\n"+
		"    - {name: hang, url: "+hang+", timeouts: {connect: 200ms}}\n"+
		"    - {name: garbage, url: "+garbage+"}\n"+
		"    - {name: reset, url: "+reset+"}\n")
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	names := toolNames(t, cs)
	if !slices.Equal(names, []string{"good__count", "good__create_item", "good__search"}) {
		t.Fatalf("tools = %v; want only good's", names)
	}
	for _, s := range h.gw.Status()[1:] {
		if s.Listed || s.Replicas[0].Connected {
			t.Fatalf("%s = %+v; want neither listed nor connected", s.Name, s)
		}
	}
	if snap := h.gw.server("hang").replicas[0].breaker.Snapshot(); snap.ConsecutiveFailures != 1 {
		t.Fatalf("hang's breaker counted %d failures; want 1", snap.ConsecutiveFailures)
	}
}

func TestACallWaitsOnlyForTheServerItNames(t *testing.T) {
	_, good := upstream(t, "good")
	var asked atomic.Int64
	down := badUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	cfg := parse(t, "mcp:\n  servers:\n    - {name: down, url: "+down+"}\n    - {name: good, url: "+good+"}\n")
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	if got, isErr := call(t, cs, "good__search", map[string]any{"q": "x"}); isErr {
		t.Fatalf("good__search = %q", got)
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("the down server was asked %d times for a call of another server's tool; want 0", n)
	}
}
