package mcpgw

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
)

// errClosed is the error of a call to a replica after Close.
var errClosed = errors.New("mcpgw: gateway closed")

// replica is one copy of an upstream server: an HTTP endpoint, or the
// subprocess of a stdio server. It keeps one client session, opened on
// first use and opened again when the server drops it (a restart, a
// crash): the gateway's calls to the replica share it. It is safe for
// concurrent use.
type replica struct {
	srv  *server
	name string // server name and index, "search#1": the breaker's name
	// endpoint is the URL of an http or sse replica; "" for stdio.
	endpoint string
	breaker  *breaker.Breaker
	// tools are the per-tool breakers (breaker_per_tool), by upstream
	// tool name, made on first use.
	tools sync.Map

	// mu guards cs and closed; it is held while a session is opened, so
	// that one caller opens it and the others wait for that one.
	mu     sync.Mutex
	cs     *mcp.ClientSession
	closed bool
}

// session returns the replica's session, opening one (and reading the
// server's catalog from it) if there is none.
func (r *replica) session(ctx context.Context) (*mcp.ClientSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if r.cs != nil {
		return r.cs, nil
	}
	cfg := r.srv.cfg
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Timeouts.Connect)
	defer cancel()
	cs, err := r.srv.gw.client.Connect(cctx, r.transport(), nil)
	if err != nil {
		return nil, err
	}
	r.srv.gw.sessions.Store(cs, r)
	if err := r.srv.refresh(cctx, cs); err != nil {
		r.srv.gw.sessions.Delete(cs)
		cs.Close()
		return nil, err
	}
	r.cs = cs
	r.srv.gw.wg.Add(1)
	go r.watch(cs)
	return cs, nil
}

// watch waits for session cs to end (the server went away, or Close), and
// forgets it so that the next call opens another. It reaps a stdio
// server's process.
func (r *replica) watch(cs *mcp.ClientSession) {
	defer r.srv.gw.wg.Done()
	cs.Wait()
	r.drop(cs)
}

// drop forgets session cs, if it is still the replica's, and closes it.
func (r *replica) drop(cs *mcp.ClientSession) {
	r.mu.Lock()
	if r.cs == cs {
		r.cs = nil
	}
	r.mu.Unlock()
	r.srv.gw.sessions.Delete(cs)
	cs.Close()
}

// close closes the replica's session, for good.
func (r *replica) close() {
	r.mu.Lock()
	r.closed = true
	cs := r.cs
	r.cs = nil
	r.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
}

// transport returns a new transport to the replica: the server's
// credentials go into its requests' headers or its process's environment.
func (r *replica) transport() mcp.Transport {
	cfg := r.srv.cfg
	switch cfg.Transport {
	case config.MCPStdio:
		cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
		cmd.Env = os.Environ()
		for _, k := range sortedKeys(cfg.Env) {
			cmd.Env = append(cmd.Env, k+"="+cfg.Env[k].Value())
		}
		cmd.Stderr = r.srv.gw.stderr
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: r.srv.gw.terminate}
	case config.MCPSSE:
		return detached{&mcp.SSEClientTransport{Endpoint: r.endpoint, HTTPClient: r.srv.httpClient}}
	}
	return &mcp.StreamableClientTransport{Endpoint: r.endpoint, HTTPClient: r.srv.httpClient}
}

// toolBreaker returns the breaker of the replica's tool, or nil without
// breaker_per_tool.
func (r *replica) toolBreaker(tool string) *breaker.Breaker {
	if !r.srv.cfg.BreakerPerTool {
		return nil
	}
	if b, ok := r.tools.Load(tool); ok {
		return b.(*breaker.Breaker)
	}
	b, err := r.srv.gw.newBreaker(r.name+"/"+tool, r.srv.cfg.Breaker)
	if err != nil {
		return nil // the config was validated: it does not happen
	}
	got, _ := r.tools.LoadOrStore(tool, b)
	return got.(*breaker.Breaker)
}

// detached is a transport whose connection outlives the context it was
// opened with, once open: the SSE transport ties its stream to that
// context, which bounds only the handshake here. A context that ends
// while the connection is being opened still stops it. (Streamable HTTP
// detaches its own, and its connection must not be wrapped: the SDK
// tells it of the session through an unexported method.)
type detached struct{ mcp.Transport }

func (d detached) Connect(ctx context.Context) (mcp.Connection, error) {
	live, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := d.Transport.Connect(live)
	if !stop() { // ctx ended first: live is canceled
		if conn != nil {
			conn.Close()
		}
		return nil, cmp.Or(err, ctx.Err())
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return closing{conn, cancel}, nil
}

// closing is a connection that ends its context when closed.
type closing struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c closing) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// headerTransport adds an upstream server's configured headers (its
// credentials) to every request to it.
type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header[k] = v
	}
	return t.base.RoundTrip(req)
}

// replicaName names replica i of server name, for breakers and metrics.
func replicaName(name string, i, of int) string {
	if of == 1 {
		return name
	}
	return name + "#" + strconv.Itoa(i)
}

// sortedKeys returns m's keys in order, so that a process's environment is
// the same at every start.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
