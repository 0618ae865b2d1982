package mcpgw

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

// Options configure a Gateway.
type Options struct {
	// Config is the mcp block, defaults filled and validated.
	Config config.MCP
	// Clients are the gateway's client keys with their MCP rights; none:
	// /mcp is open, every server to every caller.
	Clients []config.Client
	// Identify authenticates a request and returns its client's name. On
	// false it has written the answer (a 401). nil: every request is the
	// anonymous client "".
	Identify func(w http.ResponseWriter, r *http.Request) (client string, ok bool)
	// Clock is the time source of breakers and rate limits. nil: the
	// system clock.
	Clock clock.Clock
	// Logger receives the access log and the upstream servers' news. nil:
	// slog.Default().
	Logger *slog.Logger
	// Transport carries the requests to http and sse servers. nil:
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Share, if set, makes a breaker shared with the fleet: it is given
	// the breaker's name and configuration before the breaker is built, and
	// returns the function to call with the breaker (fleet.Join).
	Share func(name string, bc *breaker.Config) func(*breaker.Breaker)
	// OnTransition, if set, hears of every breaker state change.
	OnTransition func(breaker.Transition)
	// OnCall, if set, is told of every tools/call once it is answered
	// (metrics).
	OnCall func(Call)
	// Telemetry traces each tool call (execute_tool spans). nil: none.
	Telemetry *telemetry.Telemetry
	// Stderr receives stdio servers' standard error. nil: discarded.
	Stderr io.Writer
	// TerminateAfter is how long a stdio server has to exit once its stdin
	// is closed, before SIGTERM. 0: 5s.
	TerminateAfter time.Duration
}

// Call is one tools/call as answered, for metrics and logs.
type Call struct {
	Client string
	// Server and Tool name the upstream server and the tool on it.
	Server, Tool string
	// Replica is the breaker name of the replica that answered last ("":
	// none was tried).
	Replica string
	// Outcome is ok, tool_error (the tool's own isError result), timeout,
	// outage, throttle, auth, client_error, canceled, open (every replica's
	// breaker open), limited (the client's rpm) or denied.
	Outcome  string
	Attempts int
	Duration time.Duration
}

// Gateway federates the configured MCP servers. It is safe for concurrent
// use; Close stops it.
type Gateway struct {
	o   Options
	clk clock.Clock
	log *slog.Logger
	// client is the MCP client every upstream session is opened with.
	client  *mcp.Client
	servers []*server
	// tenants are the clients' views, by client name ("" when open).
	tenants map[string]*tenant
	// sessions maps each upstream *mcp.ClientSession to its *replica, for
	// the notifications that come on it.
	sessions sync.Map
	progress progressMap
	// wg counts the goroutines that watch upstream sessions.
	wg        sync.WaitGroup
	stderr    io.Writer
	terminate time.Duration
	handler   http.Handler
}

// New builds a Gateway. It opens no session: each replica's is opened on
// first use (a client listing or calling), so a server that is down at
// start delays nothing.
func New(o Options) (*Gateway, error) {
	g := &Gateway{o: o, clk: clock.Or(o.Clock), log: cmp.Or(o.Logger, slog.Default()),
		tenants: map[string]*tenant{}, stderr: cmp.Or[io.Writer](o.Stderr, io.Discard), terminate: o.TerminateAfter}
	g.client = mcp.NewClient(&mcp.Implementation{Name: "fusebox", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:      func(_ context.Context, r *mcp.ToolListChangedRequest) { g.changed(r.Session) },
		PromptListChangedHandler:    func(_ context.Context, r *mcp.PromptListChangedRequest) { g.changed(r.Session) },
		ResourceListChangedHandler:  func(_ context.Context, r *mcp.ResourceListChangedRequest) { g.changed(r.Session) },
		ProgressNotificationHandler: g.progress.relay,
		Capabilities:                &mcp.ClientCapabilities{},
	})
	for _, sc := range o.Config.Servers {
		s, err := g.newServer(sc)
		if err != nil {
			g.Close()
			return nil, err
		}
		g.servers = append(g.servers, s)
	}
	if err := g.buildTenants(); err != nil {
		g.Close()
		return nil, err
	}
	g.handler = g.newHandler()
	return g, nil
}

// newBreaker builds the breaker called name, shared with the fleet when
// the gateway is.
func (g *Gateway) newBreaker(name string, b config.Breaker) (*breaker.Breaker, error) {
	bc := b.Settings()
	bc.Name, bc.Clock = name, g.o.Clock
	if g.o.OnTransition != nil {
		bc.OnStateChange = g.o.OnTransition
	}
	var joined func(*breaker.Breaker)
	if g.o.Share != nil {
		joined = g.o.Share("mcp:"+name, &bc)
	}
	br, err := breaker.New(bc)
	if err == nil && joined != nil {
		joined(br)
	}
	return br, err
}

// server returns the server called name, or nil.
func (g *Gateway) server(name string) *server {
	i := slices.IndexFunc(g.servers, func(s *server) bool { return s.cfg.Name == name })
	if i < 0 {
		return nil
	}
	return g.servers[i]
}

// Close closes every upstream session, stops the stdio servers and waits
// for them to exit.
func (g *Gateway) Close() {
	for _, s := range g.servers {
		for _, r := range s.replicas {
			r.close()
		}
	}
	g.wg.Wait()
	for _, t := range g.tenants {
		t.close()
	}
}
