package mcpgw

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// post sends a raw JSON-RPC message on session cs, as a hostile client
// would write it, and returns the status and body.
func (h *harness) post(t *testing.T, key string, cs *mcp.ClientSession, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDuplicateAndUnknownFieldsCannotReachAForbiddenTool(t *testing.T) {
	docs, docsURL := upstream(t, "docs")
	_, wikiURL := upstream(t, "wiki")
	h := start(t, tenants(t, docsURL, wikiURL, 0), Options{})
	web := h.connect(t, "key-web", nil)
	toolNames(t, web)
	bodies := []string{
		// The name is read once, by the SDK, and that reading is what is
		// both checked and sent upstream: no second parser to disagree.
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"docs__search","name":"docs__create_item","arguments":{"q":"x"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"docs__search","NAME":"docs__create_item","arguments":{"q":"x"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"docs\u005f_create_item","arguments":{"q":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","method":"tools/list","params":{"name":"docs__create_item","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"docs__create_item","x-fusebox-admin":true,"arguments":{}}}`,
	}
	for _, b := range bodies {
		status, got := h.post(t, "key-web", web, b)
		if status >= 500 {
			t.Fatalf("%s: status %d %s", b, status, got)
		}
	}
	if n := docs.Calls("create_item"); n != 0 {
		t.Fatalf("create_item reached the server %d times through a crafted message; want 0", n)
	}
}

func TestHugeArgumentsAreRefusedBeforeTheServer(t *testing.T) {
	docs, docsURL := upstream(t, "docs")
	cfg := parse(t, "mcp:\n  max_body_bytes: 4096\n  servers:\n    - {name: docs, url: "+docsURL+"}\n")
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	toolNames(t, cs)
	status, _ := h.post(t, "", cs, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"docs__search","arguments":{"q":"`+
		strings.Repeat("a", 1<<20)+`"}}}`)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 1 MiB message: status %d; want 413", status)
	}
	if docs.Calls("search") != 0 {
		t.Fatal("the huge call reached the server")
	}
	// The session is still good for a call of a sane size.
	if got, isErr := call(t, cs, "docs__search", map[string]any{"q": "x"}); isErr {
		t.Fatalf("after the refusal: %q", got)
	}
}
