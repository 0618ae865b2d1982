package mcpgw

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// stdioEnv, set, makes the test binary a simulated stdio MCP server of
// that name: the stdio tests start it as a subprocess.
const stdioEnv = "FUSEBOX_TEST_MCP_STDIO"

func TestMain(m *testing.M) {
	switch name := os.Getenv(stdioEnv); name {
	case "":
	case "mortal":
		mortal()
	default:
		sim.NewMCP(name).Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// upstream starts a simulated MCP server called name over Streamable HTTP.
func upstream(t *testing.T, name string) (*sim.MCP, string) {
	t.Helper()
	m := sim.NewMCP(name)
	ts := httptest.NewServer(m.Handler())
	t.Cleanup(func() {
		m.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return m, ts.URL + "/mcp"
}

// harness is a gateway served over HTTP, with its calls recorded.
type harness struct {
	gw  *Gateway
	url string
	mu  sync.Mutex
	got []Call
}

// parse parses a configuration whose mcp block (and clients) is given.
func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	full := "providers:\n  openai: {keys: [k]}\nmodels:\n  - name: chat\n    targets: [{provider: openai, model: m}]\n" + yaml
	cfg, err := config.Parse("test.yaml", []byte(full), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config: %v\n%s", err, full)
	}
	return cfg
}

// start builds a gateway for cfg; clients authenticate with their key as
// a bearer token.
func start(t *testing.T, cfg *config.Config, o Options) *harness {
	t.Helper()
	h := &harness{}
	o.Config, o.Clients = cfg.MCP, cfg.Clients
	if len(cfg.Clients) > 0 {
		o.Identify = func(w http.ResponseWriter, r *http.Request) (string, bool) {
			key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			for _, c := range cfg.Clients {
				if c.Key.Value() == key {
					return c.Name, true
				}
			}
			http.Error(w, "bad key", http.StatusUnauthorized)
			return "", false
		}
	}
	user := o.OnCall
	o.OnCall = func(c Call) {
		h.mu.Lock()
		h.got = append(h.got, c)
		h.mu.Unlock()
		if user != nil {
			user(c)
		}
	}
	o.TerminateAfter = 5 * time.Second // a sim exits when its stdin closes
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	gw, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h.gw = gw
	mux := http.NewServeMux()
	mux.Handle("/mcp", gw.Handler())
	mux.Handle("/mcp/", gw.Handler())
	ts := httptest.NewServer(mux)
	h.url = ts.URL + "/mcp"
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		gw.Close()
	})
	return h
}

// calls returns the calls recorded so far.
func (h *harness) calls() []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Call(nil), h.got...)
}

// bearer adds a key to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a client session to the gateway with the official SDK.
func (h *harness) connect(t *testing.T, key string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: bearer{key}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// toolNames lists the session's tools.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// call calls a tool and returns its result's text and isError.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return resultText(res), res.IsError
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// serverYAML is an mcp block of one server.
func serverYAML(name, extra string) string {
	return fmt.Sprintf("mcp:\n  servers:\n    - name: %s\n%s", name, extra)
}

// mortal serves, on stdio, a server whose tool pid answers its process id
// and whose tool die ends the process at once, as a crash does.
func mortal() {
	s := mcp.NewServer(&mcp.Implementation{Name: "mortal", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "pid", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "die", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	s.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}
