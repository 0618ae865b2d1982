package gateway

import (
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/fleet"
	"github.com/fuseboxhq/fusebox/internal/geminiapi"
	"github.com/fuseboxhq/fusebox/internal/jobs"
	"github.com/fuseboxhq/fusebox/internal/keys"
	"github.com/fuseboxhq/fusebox/internal/mcpgw"
	"github.com/fuseboxhq/fusebox/internal/metrics"
	"github.com/fuseboxhq/fusebox/internal/requestlog"
	"github.com/fuseboxhq/fusebox/internal/responses"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

// Options configures a Server.
type Options struct {
	Config *config.Config
	// Telemetry, with otel enabled, may replace the OTLP exporters (tests,
	// benchmarks); its Clock is this Options' Clock.
	Telemetry telemetry.Options
	// Load, if set, reads the configuration again for Reload (SIGHUP and
	// POST /fusebox/reload).
	Load func() (*config.Config, error)
	// Logger receives the gateway's logs. nil: slog.Default().
	Logger *slog.Logger
	// Clock is the time source. nil: the system clock.
	Clock clock.Clock
	// Transport, if set, is used by every upstream adapter instead of
	// its own (tests use it to reach httptest servers).
	Transport http.RoundTripper
	// OnTransition, if set, is told of every breaker state change (the
	// demo prints them).
	OnTransition func(breaker.Transition)
	// NoMetrics leaves the Prometheus metrics out (GET /metrics answers
	// 404). The benchmarks use it to measure what the metrics cost.
	NoMetrics bool
	// DashboardInterval is how often the dashboard's history samples the
	// targets, while the admin API is on; 15 minutes of samples are kept
	// (at most 900). 0: 5 s.
	DashboardInterval time.Duration
}

// Server is the gateway. It is safe for concurrent use.
type Server struct {
	opts    Options
	metrics *metrics.Metrics
	log     *slog.Logger
	events  events // what the log says happened, once each
	// dash is what the dashboard shows beyond the router's state:
	// timeline, throttles, history and live streams.
	dash *board
	// responses keeps the Responses API's stored responses.
	responses responses.Store
	// tel exports traces and GenAI metrics (otel:); nil when off.
	tel *telemetry.Telemetry
	clk clock.Clock
	mux *http.ServeMux
	// readers pools SSE readers and their buffers across streams.
	readers sync.Pool
	// idem keeps idempotent answers across reloads.
	idem *idempotency

	// st is the state built from the configuration in force; reloadMu
	// serialises reloads.
	st       atomic.Pointer[state]
	reloadMu sync.Mutex

	// jobs serves the job aliases (jobs:); nil without any. batches
	// serves the Files and Batch APIs (batch: {dir: …}); nil without.
	jobs    *jobs.Jobs
	batches *batchapi.API
	// mcp serves /mcp (mcp: servers); nil without any.
	mcp *mcpgw.Gateway

	// fleet shares state with the other replicas (state: redis://…);
	// nil with state: memory. rdb is its Redis client.
	fleet *fleet.Fleet
	rdb   io.Closer

	// keys holds the client keys minted at runtime (nil: none can be, for
	// want of keys.file or a fleet); minted their clients.
	keys   *keys.Store
	minted atomic.Pointer[mintedClients]
	// reqlog keeps each request's metadata (request_log:); nil when off.
	reqlog *requestlog.Log

	// testHookLeft, if set, is told when an exchange has handled its
	// client's leaving, and whether it drains the answer.
	testHookLeft func(draining bool)
	// testHookHeld, if set, is told when an exchange that drains takes an
	// answer up (the client's leaving from then on drains it).
	testHookHeld func()
	// testHookBody, if set, is given each request body as read; and
	// testHookLetGo is told when a committed stream let go of it.
	testHookBody  func([]byte)
	testHookLetGo func()
	// testHookIdemWait, if set, is told when a request waits for another
	// replica's request under the same idempotency key.
	testHookIdemWait func()
}

// New builds a Server from a validated configuration.
func New(o Options) (*Server, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{opts: o, log: log, events: events{log: log}, clk: clock.Or(o.Clock),
		idem: newIdempotency(o.Config.Idempotency, o.Clock)}
	s.dash = newBoard(s.clk, o.DashboardInterval)
	s.dash.hist.read, s.dash.hist.after = s.readings, s.publishSample
	var err error
	if s.responses, err = newResponseStore(o.Config.Responses, o.Clock); err != nil {
		return nil, err
	}
	if s.tel, err = newTelemetry(o.Config.OTel, o); err != nil {
		return nil, err
	}
	if !o.NoMetrics {
		s.metrics = metrics.New()
	}
	if err := s.joinFleet(o.Config); err != nil {
		return nil, err
	}
	if err := s.openKeys(o.Config); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.openRequestLog(o.Config.RequestLog); err != nil {
		s.Close()
		return nil, err
	}
	if s.fleet != nil { // stored responses are the fleet's, this replica's copy beside
		c := o.Config.Responses
		s.responses = s.fleet.ResponseStore(s.responses, fleet.ResponseOptions{TTL: c.TTL, MaxEntries: c.MaxEntries, MaxBytes: int64(c.MaxBytes)})
	}
	st, err := s.buildState(o.Config, nil)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.st.Store(st)
	if s.fleet != nil {
		s.fleet.Start()
	}
	s.metrics.Watch(func() *router.Router { return s.state().router })
	s.metrics.WatchCaches(func() (entries, bytes int64) {
		for _, c := range s.state().caches {
			st := c.c.Stats()
			entries, bytes = entries+int64(st.Entries), bytes+st.Bytes
		}
		return entries, bytes
	})
	s.metrics.WatchBudgets(s.budgetsLeft)
	if st.cfg.AdminToken.Value() != "" {
		s.dash.hist.start()
	}
	s.readers.New = func() any { return sse.NewReader(nil, sse.Options{}) }
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleProxy("/chat/completions", true, false))
	s.mux.HandleFunc("POST /v1/messages", s.handleProxy("/chat/completions", true, true))
	s.mux.HandleFunc("POST /v1/messages/count_tokens", s.handleCountTokens)
	s.mux.HandleFunc("POST /v1/responses", s.handleAPI("/chat/completions", true, false, true))
	s.mux.HandleFunc("GET /v1/responses/{id}", s.handleStoredResponse)
	s.mux.HandleFunc("GET /v1/responses/{id}/{what}", s.handleStoredResponse)
	s.mux.HandleFunc("DELETE /v1/responses/{id}", s.handleStoredResponse)
	s.mux.HandleFunc("POST /v1/responses/{id}/cancel", s.handleCancelResponse)
	s.mux.HandleFunc("POST /v1beta/models/{call}", s.handleGemini)
	s.mux.HandleFunc("POST /v1/embeddings", s.handleProxy("/embeddings", false, false))
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("GET /v1/models/{id...}", s.handleModel)
	s.mux.Handle("GET /metrics", s.guardMetrics(s.metrics.Handler()))
	s.mux.HandleFunc("GET /fusebox/status", s.handleStatus)
	s.mux.HandleFunc("GET /dashboard", s.handleDashboard)
	s.mux.HandleFunc("GET /fusebox/events", s.handleEvents)
	s.mux.HandleFunc("POST /fusebox/breaker", s.handleBreaker)
	s.mux.HandleFunc("POST /fusebox/key", s.handleKey)
	s.mux.HandleFunc("POST /fusebox/reload", s.handleReload)
	s.mux.HandleFunc("POST /fusebox/keys", s.handleMint)
	s.mux.HandleFunc("GET /fusebox/keys", s.handleListKeys)
	s.mux.HandleFunc("GET /fusebox/keys/{id}", s.handleGetKey)
	s.mux.HandleFunc("PATCH /fusebox/keys/{id}", s.handleChangeKey)
	s.mux.HandleFunc("DELETE /fusebox/keys/{id}", s.handleRevokeKey)
	s.mux.HandleFunc("GET /fusebox/requests", s.handleRequests)
	s.mux.HandleFunc("GET /dashboard/requests", s.handleRequestsPage)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	// Last, once the routes its lines take are there: a batch resumed
	// from its journal starts at once.
	if err := s.startJobs(o.Config); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.startBatches(o.Config); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.startMCP(o.Config); err != nil {
		s.Close()
		return nil, err
	}
	served := "POST /v1/chat/completions, POST /v1/responses, POST /v1/messages, POST /v1/embeddings, GET /v1/models, GET /v1/models/{id}"
	if s.jobs != nil {
		served += ", POST /v1/videos, POST /v1/images/generations"
	}
	if s.batches != nil {
		served += ", POST /v1/files, POST /v1/batches"
	}
	if s.mcp != nil {
		served += ", /mcp (MCP)"
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		msg := "Unknown request URL: " + r.Method + " " + r.URL.Path + ". Fusebox serves " + served + "."
		if anthropicPath(r.URL.Path) {
			writeAnthropicError(w, http.StatusNotFound, msg)
			return
		}
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "", msg)
	})
	return s, nil
}

// guardMetrics asks for the metrics_token, when one is configured.
func (s *Server) guardMetrics(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if want := s.state().cfg.MetricsToken.Value(); want != "" && !bearer(r, want) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fusebox metrics"`)
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_metrics_token", "",
				"/metrics needs the metrics token (Authorization: Bearer <metrics_token>).")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// budgetsLeft reports each budgeted client's remaining spend.
func (s *Server) budgetsLeft() []metrics.BudgetLeft {
	var out []metrics.BudgetLeft
	all := s.state().clients
	if m := s.minted.Load(); m != nil {
		for _, c := range m.byID {
			all = append(all[:len(all):len(all)], *c)
		}
	}
	for _, c := range all {
		if c.budget == nil {
			continue
		}
		day, month := c.budget.left()
		out = append(out, metrics.BudgetLeft{Client: c.name, Daily: day, Monthly: month,
			DailyLimit: c.budget.limit.Daily, MonthlyLimit: c.budget.limit.Monthly})
	}
	return out
}

// Check reports whether a validated configuration can start a gateway:
// everything New would build, without serving. fusebox validate uses it so
// that a file it accepts is one serve accepts.
func Check(cfg *config.Config) error {
	// Checking shares nothing and touches no data directory: no batch
	// resumes, no job is polled, nothing is created.
	c := *cfg
	c.Batch.Dir, c.JobsDir, c.Keys.File, c.RequestLog.Path = "", "", "", ""
	if cfg.State != "" && cfg.State != "memory" {
		rdb, err := fleet.Dial(cfg.State, cfg.Fleet) // connects only when used
		if err != nil {
			return err
		}
		rdb.Close()
		c.State, c.Fleet = "memory", config.Fleet{}
	}
	s, err := New(Options{Config: &c})
	if err == nil {
		s.Close()
	}
	return err
}

// Router returns the router in force, for the admin API and the dashboard.
func (s *Server) Router() *router.Router { return s.state().router }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// serveHTTP is the server's root: CORS, then the routes.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if c := s.state().cors; c != nil && c.serve(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authenticate returns the caller's client, or false after writing a 401.
// With no clients configured and no key ever minted the gateway is open.
func (s *Server) authenticate(st *state, w http.ResponseWriter, r *http.Request) (*client, bool) {
	if len(st.clients) == 0 && !s.sealed() {
		return nil, true
	}
	found, named := st.inProcessClient(r)
	// Either header may carry the key (SDKs send one, proxies may add the
	// other): whichever holds a valid key wins.
	if !named {
		found = s.client(st, r.Header.Get("X-Api-Key"))
	}
	if g := r.Header.Get("X-Goog-Api-Key"); !named && found == nil && g != "" && geminiPath(r.URL.Path) {
		found = s.client(st, g) // google-genai's header
	}
	if a := r.Header.Get("Authorization"); !named && found == nil && len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		found = s.client(st, a[7:])
	}
	if found == nil {
		const msg = "Incorrect or missing API key. Send a Fusebox client key as Authorization: Bearer <key> or x-api-key."
		switch {
		case anthropicPath(r.URL.Path):
			writeAnthropicError(w, http.StatusUnauthorized, msg)
		case geminiPath(r.URL.Path):
			geminiapi.WriteError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Incorrect or missing API key. Send a Fusebox client key as x-goog-api-key, Authorization: Bearer <key> or x-api-key.")
		default:
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "", msg)
		}
		return nil, false
	}
	return found, true
}

// client returns the client whose key is key: a configured one, else a
// minted one, else nil.
func (s *Server) client(st *state, key string) *client {
	if c := st.client(key); c != nil {
		return c
	}
	return s.mintedClient(st, key)
}

// client returns the configured client whose key is key, or nil. Every key is
// compared, in constant time, so timing tells nothing.
func (st *state) client(key string) *client {
	var found *client
	for i := range st.clients {
		if subtle.ConstantTimeCompare([]byte(key), st.clients[i].key) == 1 && key != "" {
			found = &st.clients[i]
		}
	}
	return found
}

// anthropicPath reports a path of Anthropic's API, whose errors are in
// Anthropic's shape.
func anthropicPath(path string) bool {
	return path == "/v1/messages" || strings.HasPrefix(path, "/v1/messages/")
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	st := s.state()
	c, ok := s.authenticate(st, w, r)
	if !ok {
		return
	}
	var names []string
	for _, a := range st.router.Aliases() {
		if c.allows(a.Name) {
			names = append(names, a.Name)
		}
	}
	for _, name := range s.jobs.Names() { // video and image aliases: what POST /v1/videos takes
		if c.allows(name) {
			names = append(names, name)
		}
	}
	anthropic := r.Header.Get("Anthropic-Version") != ""
	var b strings.Builder
	if anthropic {
		b.WriteString(`{"data":[`)
	} else {
		b.WriteString(`{"object":"list","data":[`)
	}
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(modelObject(name, anthropic))
	}
	b.WriteString("]")
	if anthropic {
		first, last := "null", "null"
		if len(names) > 0 {
			first, last = quote(names[0]), quote(names[len(names)-1])
		}
		b.WriteString(`,"has_more":false,"first_id":` + first + `,"last_id":` + last)
	}
	b.WriteString("}")
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(b.String()))
}

// handleModel answers GET /v1/models/{id}: the alias, in Anthropic's shape
// when the request carries anthropic-version, else OpenAI's; a model the
// client may not use is as unknown as one that does not exist.
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	st := s.state()
	c, ok := s.authenticate(st, w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	_, known := st.router.Lookup(id)
	known = known || s.jobs.Has(id)
	anthropic := r.Header.Get("Anthropic-Version") != ""
	if !known || !c.allows(id) {
		msg := "The model `" + id + "` does not exist or you do not have access to it."
		if anthropic {
			writeAnthropicError(w, http.StatusNotFound, msg)
			return
		}
		writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "model", msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(modelObject(id, anthropic)))
}

// modelObject is one model alias as the API lists it.
func modelObject(name string, anthropic bool) string {
	if anthropic {
		return `{"type":"model","id":` + quote(name) + `,"display_name":` + quote(name) + `,"created_at":"1970-01-01T00:00:00Z"}`
	}
	return `{"id":` + quote(name) + `,"object":"model","created":0,"owned_by":"fusebox"}`
}

// requestID returns the client's X-Request-Id or a new one. A request id
// names a request in headers and logs, and guards nothing: it must be
// unique, not secret, so it comes from the runtime's per-thread ChaCha8
// generator (math/rand/v2), not a crypto/rand read on every request.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 {
		return id
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rand.Uint64())
	id := [20]byte{'r', 'e', 'q', '_'}
	hex.Encode(id[4:], b[:])
	return string(id[:]) // the one allocation of a new id
}

// ListenAndServe serves on the configured address until ctx ends, then
// shuts down gracefully, waiting up to drain for requests and streams in
// flight.
func (s *Server) ListenAndServe(ctx context.Context, ln net.Listener, drain time.Duration) error {
	limits := s.state().cfg.Server
	srv := &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: limits.ReadHeaderTimeout,
		IdleTimeout:       limits.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	srv.RegisterOnShutdown(s.dash.hub.close) // dashboard streams end at once, not at the drain's end
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// joinFleet connects to the shared state when cfg's state is a Redis URL.
func (s *Server) joinFleet(cfg *config.Config) error {
	if cfg.State == "" || cfg.State == "memory" {
		return nil
	}
	rdb, err := fleet.Dial(cfg.State, cfg.Fleet)
	if err != nil {
		return err
	}
	sb := s.metrics.StateBackend()
	s.rdb = rdb
	records, bytes := idemBounds(cfg.Idempotency)
	s.fleet = fleet.New(fleet.Options{Client: rdb, Prefix: cfg.Fleet.Prefix, Timeout: cfg.Fleet.Timeout, Sync: cfg.Fleet.Sync,
		Lease: cfg.Fleet.Lease, IdemRecords: records, IdemClientBytes: int(bytes),
		Clock: s.opts.Clock, Log: s.log, OnHealth: sb.Up, OnError: sb.Error, OnFallback: sb.Fallback})
	return nil
}

// Close stops sharing state with the fleet and closes its connections,
// ends the dashboard's streams and stops its sampling. Call it once the
// server no longer serves.
func (s *Server) Close() {
	if s.batches != nil {
		s.batches.Close() // its lines in flight end first; the journal resumes them
	}
	if s.jobs != nil {
		s.jobs.Close()
	}
	if s.mcp != nil {
		s.mcp.Close() // stdio servers stop
	}
	s.dash.hist.stop()
	s.dash.hub.close()
	if s.tel != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.tel.Shutdown(ctx) // what is buffered goes out
		cancel()
	}
	if s.keys != nil {
		s.keys.Close()
	}
	if s.reqlog != nil {
		s.reqlog.Close() // what is queued is written
	}
	if s.fleet != nil {
		s.fleet.Close()
	}
	if s.rdb != nil {
		s.rdb.Close()
	}
}
