package mcpgw

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

func TestHungServerTripsItsBreakerWithinConsecutive(t *testing.T) {
	m, url := upstream(t, "slowpoke")
	m.SetFaults(sim.MCPFaults{Hang: time.Minute})
	cfg := parse(t, serverYAML("slow", "      url: "+url+"\n      breaker: {consecutive: 3, open: 30s}\n      timeouts: {total: 150ms}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	for i := range 3 {
		got, isErr := call(t, cs, "slow__search", map[string]any{"q": "x"})
		if !isErr || !strings.Contains(got, "did not answer within 150ms") {
			t.Fatalf("call %d = %q (isError %v); want a timeout the model can read", i+1, got, isErr)
		}
	}
	got, isErr := call(t, cs, "slow__search", map[string]any{"q": "x"})
	if !isErr || !strings.Contains(got, "Tool slow__search is unavailable") || !strings.Contains(got, "Retry after 30 s") {
		t.Fatalf("call 4 = %q (isError %v); want the open breaker's answer", got, isErr)
	}
	if n := m.Calls("search"); n != 3 {
		t.Fatalf("upstream saw %d calls; want 3 (the 4th refused at the gateway)", n)
	}
	st := h.gw.Status()[0].Replicas[0]
	if st.State != "open" || st.RetryIn <= 0 {
		t.Fatalf("status = %+v; want open", st)
	}
	if c := h.calls(); c[0].Outcome != "timeout" || c[3].Outcome != "open" || c[3].Attempts != 0 {
		t.Fatalf("calls = %+v", c)
	}
}

func TestReadOnlyToolRetriedOnReplicaWritingToolNever(t *testing.T) {
	a, urlA := upstream(t, "a")
	b, urlB := upstream(t, "b")
	a.SetFaults(sim.MCPFaults{Error: true})
	cfg := parse(t, serverYAML("items", "      replicas: ["+urlA+", "+urlB+"]\n      breaker: {consecutive: 5}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)

	if got, isErr := call(t, cs, "items__search", map[string]any{"q": "x"}); isErr || got != `results for "x" from b` {
		t.Fatalf("search = %q (isError %v); want b's answer after a's error", got, isErr)
	}
	if a.Calls("search") != 1 || b.Calls("search") != 1 {
		t.Fatalf("search calls: a %d, b %d; want 1 and 1", a.Calls("search"), b.Calls("search"))
	}
	got, isErr := call(t, cs, "items__create_item", map[string]any{"q": "x"})
	if !isErr || !strings.Contains(got, "failed: server items had an error") {
		t.Fatalf("create_item = %q (isError %v); want the failure, not a retry", got, isErr)
	}
	if a.Calls("create_item") != 1 || b.Calls("create_item") != 0 {
		t.Fatalf("create_item calls: a %d, b %d; want 1 and 0 (never retried)", a.Calls("create_item"), b.Calls("create_item"))
	}
	if c := h.calls(); c[0].Attempts != 2 || c[0].Replica != "items#1" || c[1].Attempts != 1 {
		t.Fatalf("calls = %+v", c)
	}
}

func TestWritingToolGoesToReplicaWhenFirstIsOpen(t *testing.T) {
	a, urlA := upstream(t, "a")
	_, urlB := upstream(t, "b")
	cfg := parse(t, serverYAML("items", "      replicas: ["+urlA+", "+urlB+"]\n      breaker: {consecutive: 1, open: 1m}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	a.SetFaults(sim.MCPFaults{Error: true})
	call(t, cs, "items__search", map[string]any{"q": "x"}) // a fails and opens; b answers
	// Nothing is sent to a, so sending the write to b is no repeat.
	if got, isErr := call(t, cs, "items__create_item", map[string]any{"q": "y"}); isErr || got != `created "y" on b` {
		t.Fatalf("create_item = %q (isError %v)", got, isErr)
	}
	if a.Calls("create_item") != 0 {
		t.Fatalf("a saw create_item %d times; want 0", a.Calls("create_item"))
	}
}

func TestUpstreamRestartReestablishesTheSession(t *testing.T) {
	m, url := upstream(t, "phoenix")
	cfg := parse(t, serverYAML("p", "      url: "+url+"\n      tools: {create_item: {retry: \"no\"}}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	call(t, cs, "p__search", map[string]any{"q": "1"})
	m.LoseSessions() // a restart: the server knows no session
	// A session the server does not know never reached it: even a write is
	// sent again, once, on a new session.
	if got, isErr := call(t, cs, "p__create_item", map[string]any{"q": "2"}); isErr || got != `created "2" on phoenix` {
		t.Fatalf("after restart = %q (isError %v)", got, isErr)
	}
	if n := m.Calls("create_item"); n != 1 {
		t.Fatalf("create_item reached the server %d times; want 1", n)
	}
	if names := toolNames(t, cs); len(names) != 3 {
		t.Fatalf("tools after restart = %v", names)
	}
}

func TestClientLeavingMidCallIsNotAnOutage(t *testing.T) {
	m, url := upstream(t, "hang")
	m.SetFaults(sim.MCPFaults{Hang: time.Minute})
	cfg := parse(t, serverYAML("h", "      url: "+url+"\n      breaker: {consecutive: 1}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "h__search", Arguments: map[string]any{"q": "x"}})
		done <- err
	}()
	for m.Calls("search") == 0 {
		time.Sleep(time.Millisecond) // until the call is upstream
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a canceled call returned no error")
	}
	for len(h.calls()) == 0 {
		time.Sleep(time.Millisecond) // the gateway hears of the cancellation
	}
	if c := h.calls()[0]; c.Outcome != "canceled" {
		t.Fatalf("outcome = %q; want canceled", c.Outcome)
	}
	if st := h.gw.Status()[0].Replicas[0].State; st != "closed" {
		t.Fatalf("breaker %s after a client left; want closed (consecutive: 1 would have tripped)", st)
	}
}

func TestBreakerPerToolKeepsTheOtherToolsOpenToCalls(t *testing.T) {
	m, url := upstream(t, "mixed")
	cfg := parse(t, serverYAML("mx", "      url: "+url+"\n      breaker_per_tool: true\n      breaker: {consecutive: 2, open: 1m}\n      timeouts: {total: 100ms}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	call(t, cs, "mx__search", map[string]any{"q": "warm"}) // the session opens
	m.SetFaults(sim.MCPFaults{Slow: time.Second})          // search times out
	for range 2 {
		call(t, cs, "mx__search", map[string]any{"q": "x"})
	}
	m.SetFaults(sim.MCPFaults{})
	st := h.gw.Status()[0].Replicas[0]
	if st.Tools["search"] != "open" || st.State != "closed" {
		t.Fatalf("status = %+v; want search's own breaker open, the replica's closed", st)
	}
	if got, isErr := call(t, cs, "mx__search", map[string]any{"q": "x"}); !isErr || !strings.Contains(got, "unavailable") {
		t.Fatalf("search = %q; want refused while its breaker is open", got)
	}
	if got, isErr := call(t, cs, "mx__create_item", map[string]any{"q": "y"}); isErr || got != `created "y" on mixed` {
		t.Fatalf("create_item = %q (isError %v); want it answered, its breaker closed", got, isErr)
	}
}

// Many writes at once while the first replica fails: each reaches one
// replica at most, never both. The writes answered are exactly the
// healthy replica's, the failed ones exactly the failing replica's.
func TestHammerWritesAreNeverSentTwice(t *testing.T) {
	a, urlA := upstream(t, "a")
	b, urlB := upstream(t, "b")
	cfg := parse(t, serverYAML("items", "      replicas: ["+urlA+", "+urlB+"]\n      breaker: {consecutive: 4, open: 1m}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	call(t, cs, "items__search", map[string]any{"q": "warm"})
	a.SetFaults(sim.MCPFaults{Error: true})
	const n = 40
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, isErr := call(t, cs, "items__create_item", map[string]any{"q": strconv.Itoa(i)}); isErr {
				failed.Add(1)
			} else {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	ca, cb := a.Calls("create_item"), b.Calls("create_item")
	if ca+cb != n || ok.Load() != cb || failed.Load() != ca {
		t.Fatalf("a got %d, b %d; %d answered, %d failed: want a+b = %d, answered = b's, failed = a's", ca, cb, ok.Load(), failed.Load(), n)
	}
	if ca < 4 {
		t.Fatalf("a got %d writes; want at least the 4 that open its breaker", ca)
	}
}
