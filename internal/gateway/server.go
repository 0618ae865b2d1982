package gateway

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/metrics"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
	"github.com/fuseboxhq/fusebox/limit"
)

// Options configures a Server.
type Options struct {
	Config *config.Config
	// Logger receives the gateway's logs. nil: slog.Default().
	Logger *slog.Logger
	// Clock is the time source. nil: the system clock.
	Clock clock.Clock
	// Transport, if set, is used by every upstream adapter instead of
	// its own (tests use it to reach httptest servers).
	Transport http.RoundTripper
	// MaxBody is the largest request body accepted. 0: 16 MiB.
	MaxBody int64
	// OnTransition, if set, is told of every breaker state change (the
	// demo prints them).
	OnTransition func(breaker.Transition)
}

// Server is the gateway. It is safe for concurrent use.
type Server struct {
	cfg     *config.Config
	router  *router.Router
	metrics *metrics.Metrics
	log     *slog.Logger
	clk     clock.Clock
	maxBody int64
	clients []client
	mux     *http.ServeMux
	// readers pools SSE readers and their buffers across streams.
	readers sync.Pool
	// caches holds the response cache of each alias that has one;
	// degraded the static answers.
	caches   map[string]*aliasCache
	degraded map[string]config.Degraded
	idem     *idempotency
}

type client struct {
	name   string
	key    []byte
	models map[string]bool // nil: all
	pacer  *limit.Pacer    // the client's rpm/tpm; nil: none
	budget *budget         // the client's USD budget; nil: none
}

// New builds a Server from a validated configuration.
func New(o Options) (*Server, error) {
	spec, err := routerSpec(o.Config, o.Transport)
	if err != nil {
		return nil, err
	}
	spec.Clock = o.Clock
	m := metrics.New()
	m.Hooks(&spec)
	if o.OnTransition != nil {
		record := spec.OnTransition
		spec.OnTransition = func(t breaker.Transition) {
			record(t)
			o.OnTransition(t)
		}
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	spec.OnKeyDisabled = func(e router.KeyEvent) {
		log.Warn("API key taken out of rotation", "key", e.Key, "target", e.Target, "verdict", e.Verdict.Kind.String(),
			"code", e.Verdict.Code, "message", e.Verdict.Message, "for", e.For.String())
	}
	r, err := router.New(spec)
	if err != nil {
		return nil, err
	}
	m.Watch(r)
	caches, err := newCaches(o.Config, o)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: o.Config, router: r, metrics: m, log: log, clk: clock.Or(o.Clock), maxBody: o.MaxBody,
		caches: caches, degraded: map[string]config.Degraded{},
		idem: newIdempotency(o.Config.Idempotency.TTL, o.Config.Idempotency.MaxRecords, o.Config.Idempotency.MaxBytes, o.Clock)}
	for _, md := range o.Config.Models {
		if md.Degraded.Enabled() {
			s.degraded[md.Name] = md.Degraded
		}
	}
	m.WatchCaches(func() (entries, bytes int64) {
		for _, c := range caches {
			st := c.c.Stats()
			entries, bytes = entries+int64(st.Entries), bytes+st.Bytes
		}
		return entries, bytes
	})
	if s.maxBody == 0 {
		s.maxBody = 16 << 20
	}
	for _, c := range o.Config.Clients {
		cl := client{name: c.Name, key: []byte(c.Key.Value())}
		if c.Budget.Daily > 0 || c.Budget.Monthly > 0 {
			cl.budget = newBudget(c.Budget, o.Clock)
		}
		if c.Limits.RPM > 0 || c.Limits.TPM > 0 {
			ps := c.Limits.Pacer()
			ps.Clock = o.Clock
			if cl.pacer, err = limit.NewPacer(ps); err != nil {
				return nil, err
			}
		}
		if len(c.Models) > 0 {
			cl.models = map[string]bool{}
			for _, m := range c.Models {
				cl.models[m] = true
			}
		}
		s.clients = append(s.clients, cl)
	}
	s.readers.New = func() any { return sse.NewReader(nil, sse.Options{}) }
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleProxy("/chat/completions", true, false))
	s.mux.HandleFunc("POST /v1/messages", s.handleProxy("/chat/completions", true, true))
	s.mux.HandleFunc("POST /v1/embeddings", s.handleProxy("/embeddings", false, false))
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.Handle("GET /metrics", m.Handler())
	s.mux.HandleFunc("GET /fusebox/status", s.handleStatus)
	s.mux.HandleFunc("GET /dashboard", s.handleDashboard)
	s.mux.HandleFunc("POST /fusebox/breaker", s.handleBreaker)
	s.mux.HandleFunc("POST /fusebox/key", s.handleKey)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "",
			"Unknown request URL: "+r.Method+" "+r.URL.Path+". Fusebox serves POST /v1/chat/completions, POST /v1/embeddings and GET /v1/models.")
	})
	return s, nil
}

// Check reports whether a validated configuration can start a gateway:
// everything New would build, without serving. fusebox validate uses it so
// that a file it accepts is one serve accepts.
func Check(cfg *config.Config) error {
	_, err := New(Options{Config: cfg})
	return err
}

// Router returns the server's router, for the admin API and the dashboard.
func (s *Server) Router() *router.Router { return s.router }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// authenticate returns the caller's client, or false after writing a 401.
// With no clients configured the gateway is open.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*client, bool) {
	if len(s.clients) == 0 {
		return nil, true
	}
	key := r.Header.Get("X-Api-Key")
	if a := r.Header.Get("Authorization"); key == "" && len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		key = a[7:]
	}
	var found *client
	for i := range s.clients {
		// Every key is compared, in constant time, so timing tells nothing.
		if subtle.ConstantTimeCompare([]byte(key), s.clients[i].key) == 1 {
			found = &s.clients[i]
		}
	}
	if key == "" || found == nil {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "",
			"Incorrect or missing API key. Send a Fusebox client key as Authorization: Bearer <key> or x-api-key.")
		return nil, false
	}
	return found, true
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	c, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	n := 0
	for _, a := range s.router.Aliases() {
		if c != nil && c.models != nil && !c.models[a.Name] {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(`{"id":` + quote(a.Name) + `,"object":"model","created":0,"owned_by":"fusebox"}`)
	}
	b.WriteString("]}")
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(b.String()))
}

// requestID returns the client's X-Request-Id or a new one.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 {
		return id
	}
	var b [8]byte
	rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// ListenAndServe serves on the configured address until ctx ends, then
// shuts down gracefully, waiting up to drain for requests and streams in
// flight.
func (s *Server) ListenAndServe(ctx context.Context, ln net.Listener, drain time.Duration) error {
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
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
