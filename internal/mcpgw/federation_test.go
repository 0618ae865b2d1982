package mcpgw

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListAndCallOverStreamableHTTP(t *testing.T) {
	_, docs := upstream(t, "docs-a")
	_, wiki := upstream(t, "wiki-a")
	cfg := parse(t, "mcp:\n  servers:\n    - {name: docs, url: "+docs+"}\n    - {name: wiki, url: "+wiki+"}\n")
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)

	names := toolNames(t, cs)
	want := []string{"docs__count", "docs__create_item", "docs__search", "wiki__count", "wiki__create_item", "wiki__search"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v; want %v", names, want)
	}
	if got, isErr := call(t, cs, "wiki__search", map[string]any{"q": "fox"}); isErr || got != `results for "fox" from wiki-a` {
		t.Fatalf("wiki__search = %q (isError %v)", got, isErr)
	}
	// A tool's own error result is its answer, passed on as it is.
	if got, isErr := call(t, cs, "docs__search", map[string]any{}); !isErr || got != "search needs q" {
		t.Fatalf("docs__search without q = %q (isError %v); want the tool's own error", got, isErr)
	}
	if c := h.calls(); len(c) != 2 || c[0].Outcome != "ok" || c[1].Outcome != "tool_error" || c[1].Server != "docs" {
		t.Fatalf("calls = %+v", c)
	}

	pr, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "wiki__greeting"})
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "hello from wiki-a" {
		t.Fatalf("prompt = %+v, %v", pr, err)
	}
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "sim://docs-a/readme"})
	if err != nil || rr.Contents[0].Text != "readme of docs-a" {
		t.Fatalf("resource = %+v, %v", rr, err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope__search"}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("unknown tool: err = %v", err)
	}
}

func TestStdioServerWithProgress(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, serverYAML("files", "      command: ["+exe+"]\n      env: {"+stdioEnv+": files-proc}\n"))
	h := start(t, cfg, Options{})
	var progress, foreign atomic.Int64
	cs := h.connect(t, "", &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		if r.Params.ProgressToken == "mine" {
			progress.Add(1)
		} else {
			foreign.Add(1)
		}
	}})
	if got, _ := call(t, cs, "files__search", map[string]any{"q": "x"}); got != `results for "x" from files-proc` {
		t.Fatalf("files__search = %q", got)
	}
	p := &mcp.CallToolParams{Name: "files__count", Arguments: map[string]any{"n": 3}}
	p.SetProgressToken("mine")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || resultText(res) != "counted to 3" {
		t.Fatalf("count = %v, %v", res, err)
	}
	// Notifications are relayed as they come; the SDK may hand one that
	// came just before the answer over after it, when the answer's stream
	// is closed, so the last may be lost (progress is advisory).
	if n, f := progress.Load(), foreign.Load(); n < 1 || n > 3 || f != 0 {
		t.Fatalf("progress notifications = %d with the client's token, %d with another; want 1 to 3, none", n, f)
	}
}

func TestListChangesArePassedThrough(t *testing.T) {
	m, url := upstream(t, "growing")
	h := start(t, parse(t, serverYAML("g", "      url: "+url+"\n")), Options{})
	changed := make(chan struct{}, 8)
	cs := h.connect(t, "", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if n := len(toolNames(t, cs)); n != 3 {
		t.Fatalf("%d tools; want 3", n)
	}
	m.Offer("extra")
	for !slices.Contains(toolNames(t, cs), "g__extra") {
		<-changed // the gateway relisted the server and told the client
	}
	if got, _ := call(t, cs, "g__extra", nil); got != "extra from growing" {
		t.Fatalf("g__extra = %q", got)
	}
}

func TestStdioServerIsStartedAgainAfterACrashAndReapedAtClose(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, serverYAML("m", "      command: ["+exe+"]\n      env: {"+stdioEnv+": mortal}\n"))
	h := start(t, cfg, Options{})
	cs := h.connect(t, "", nil)
	first, _ := call(t, cs, "m__pid", nil)
	if got, isErr := call(t, cs, "m__die", nil); !isErr {
		t.Fatalf("die = %q; want a failure (the process is gone)", got)
	}
	second, isErr := call(t, cs, "m__pid", nil)
	if isErr || second == first {
		t.Fatalf("pid after the crash = %q (isError %v), before %q; want a new process", second, isErr, first)
	}
	pid, _ := strconv.Atoi(second)
	h.gw.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("process %d still runs after Close", pid)
	}
}
