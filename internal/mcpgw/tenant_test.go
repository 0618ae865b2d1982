package mcpgw

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// tenants is a configuration of two servers and three clients: web may
// call docs__search only, ops every docs tool, all everything.
func tenants(t *testing.T, docs, wiki string, rpm int) *config.Config {
	t.Helper()
	return parse(t, "clients:\n"+
		"  - {name: web, key: key-web, mcp: {tools: [docs__search], rpm: "+strconv.Itoa(rpm)+"}}\n"+
		"  - {name: ops, key: key-ops, mcp: {servers: [docs]}}\n"+
		"  - {name: all, key: key-all}\n"+
		"mcp:\n  servers:\n    - {name: docs, url: "+docs+"}\n    - {name: wiki, url: "+wiki+"}\n")
}

func TestClientSeesAndCallsOnlyWhatItMay(t *testing.T) {
	docs, docsURL := upstream(t, "docs")
	_, wikiURL := upstream(t, "wiki")
	h := start(t, tenants(t, docsURL, wikiURL, 0), Options{})

	web := h.connect(t, "key-web", nil)
	if names := toolNames(t, web); !slices.Equal(names, []string{"docs__search"}) {
		t.Fatalf("web lists %v; want only docs__search", names)
	}
	if prompts, err := web.ListPrompts(context.Background(), nil); err != nil || len(prompts.Prompts) != 0 {
		t.Fatalf("web lists prompts %+v, %v; want none (a tool glob grants no prompts)", prompts, err)
	}
	for _, name := range []string{"docs__create_item", "wiki__search"} {
		_, err := web.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"q": "x"}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("web calling %s: err = %v; want refused as unknown", name, err)
		}
	}
	if docs.Calls("create_item") != 0 {
		t.Fatal("a refused call reached the server")
	}
	ops := h.connect(t, "key-ops", nil)
	if names := toolNames(t, ops); len(names) != 3 || !strings.HasPrefix(names[0], "docs__") {
		t.Fatalf("ops lists %v; want docs' three", names)
	}
	if names := toolNames(t, h.connect(t, "key-all", nil)); len(names) != 6 {
		t.Fatalf("all lists %v; want six", names)
	}
}

func TestSessionOfAnotherClientIsNotFound(t *testing.T) {
	_, docsURL := upstream(t, "docs")
	_, wikiURL := upstream(t, "wiki")
	h := start(t, tenants(t, docsURL, wikiURL, 0), Options{})
	web := h.connect(t, "key-web", nil)
	send := func(key string) int {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Mcp-Session-Id", web.ID())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send("key-all"); code != http.StatusNotFound {
		t.Fatalf("another client's session: status %d; want 404", code)
	}
	if code := send("wrong"); code != http.StatusUnauthorized {
		t.Fatalf("bad key: status %d; want 401", code)
	}
}

func TestRateLimitHoldsUnderConcurrency(t *testing.T) {
	docs, docsURL := upstream(t, "docs")
	_, wikiURL := upstream(t, "wiki")
	clk := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) // never moves: nothing refills
	h := start(t, tenants(t, docsURL, wikiURL, 5), Options{Clock: clk})
	web := h.connect(t, "key-web", nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	limited := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, isErr := call(t, web, "docs__search", map[string]any{"q": "x"})
			if isErr {
				if !strings.Contains(got, "over their rate limit (5 a minute)") {
					t.Errorf("refusal = %q", got)
				}
				mu.Lock()
				limited++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if limited != 15 || docs.Calls("search") != 5 {
		t.Fatalf("limited %d, upstream %d; want 15 and 5", limited, docs.Calls("search"))
	}
}

func TestSSESessionOfAnotherClientIsNotFound(t *testing.T) {
	_, docsURL := upstream(t, "docs")
	_, wikiURL := upstream(t, "wiki")
	h := start(t, tenants(t, docsURL, wikiURL, 0), Options{})
	var endpoint string
	c := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: h.url + "/sse",
		HTTPClient: &http.Client{Transport: recordPost{bearer{"key-web"}, &endpoint}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if endpoint == "" {
		t.Fatal("no message endpoint seen")
	}
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer key-all")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("web's SSE session posted to with all's key: status %d; want 404", resp.StatusCode)
	}
}

// recordPost records the URL of the POSTs it carries.
type recordPost struct {
	base http.RoundTripper
	url  *string
}

func (rp recordPost) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		*rp.url = r.URL.String()
	}
	return rp.base.RoundTrip(r)
}
