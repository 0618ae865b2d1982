package jobs

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is a gateway's job routes in front of simulated providers a, b,
// …, all on one fake clock.
type harness struct {
	t    *testing.T
	clk  *clocktest.Clock
	sims []*sim.Server
	urls []string
	cfg  *config.Config
	dir  string
	jobs *Jobs
	gw   *httptest.Server

	// mu guards reserved and settled.
	mu       sync.Mutex
	reserved []float64
	settled  []float64
}

// setup describes a harness.
type setup struct {
	targets int        // simulated providers; 0: 1
	sim     sim.Config // each one's config (Clock is set)
	jobs    string     // the YAML of the jobs list; "": a video alias over every target
	dir     string     // the data dir; "": none
}

// newHarness starts the providers and the gateway; everything closes when
// the test ends.
func newHarness(t *testing.T, s setup) *harness {
	t.Helper()
	h := &harness{t: t, clk: clocktest.New(time.Time{}), dir: s.dir}
	n := max(s.targets, 1)
	var providers, targets strings.Builder
	for i := range n {
		c := s.sim
		c.Clock, c.Name = h.clk, string(rune('a'+i))
		srv, err := sim.New(c)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(func() { srv.Close(); ts.Close() })
		h.sims, h.urls = append(h.sims, srv), append(h.urls, ts.URL)
		name := c.Name
		providers.WriteString("  " + name + ": {type: openai, base_url: \"" + ts.URL + "/v1\", keys: [key-" + name + "]}\n")
		targets.WriteString("      - {provider: " + name + ", model: sora-" + name + ", price: {per_second: 0.1, per_job: 0.5}}\n")
	}
	jobs := s.jobs
	if jobs == "" {
		jobs = "  - name: video\n    poll_interval: 24h\n    targets:\n" + targets.String()
	}
	yaml := "providers:\n" + providers.String() + "models:\n  - name: chat\n    targets: [{provider: a, model: m}]\njobs:\n" + jobs
	cfg, err := config.Parse("test.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config:\n%s\n%v", yaml, err)
	}
	h.cfg = cfg
	h.start()
	t.Cleanup(h.stop)
	return h
}

// start builds the Jobs and serves it.
func (h *harness) start() {
	h.t.Helper()
	j, err := New(Options{Aliases: h.cfg.Jobs, Providers: h.cfg.Providers, Dir: h.dir, Clock: h.clk,
		Identify: identify, Reserve: h.reserve})
	if err != nil {
		h.t.Fatal(err)
	}
	mux := http.NewServeMux()
	j.Register(mux)
	h.jobs, h.gw = j, httptest.NewServer(mux)
}

// stop closes the gateway; start may run again (a restart).
func (h *harness) stop() {
	if h.gw != nil {
		h.gw.Close()
		h.jobs.Close()
		h.gw = nil
	}
}

// restart stops the gateway and starts a new one on the same data dir.
func (h *harness) restart() {
	h.stop()
	h.start()
}

// identify names the client by its bearer token; none is a 401.
func identify(w http.ResponseWriter, r *http.Request) (string, bool) {
	c, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || c == "" {
		errorf(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "", "No key.").write(w)
		return "", false
	}
	return c, true
}

func (h *harness) reserve(client string, usd float64) (func(float64), bool) {
	h.mu.Lock()
	h.reserved = append(h.reserved, usd)
	h.mu.Unlock()
	return func(actual float64) {
		h.mu.Lock()
		h.settled = append(h.settled, actual)
		h.mu.Unlock()
	}, true
}

func (h *harness) costs() (reserved, settled []float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]float64(nil), h.reserved...), append([]float64(nil), h.settled...)
}

// reply is an answer the gateway gave.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// object decodes a job object.
func (r reply) object(t *testing.T) videoView {
	t.Helper()
	var v videoView
	if err := json.Unmarshal(r.body, &v); err != nil || r.status != http.StatusOK {
		t.Fatalf("status %d, body %s: want a job object", r.status, r.body)
	}
	return v
}

// code returns the error code of an error answer.
func (r reply) code() string {
	var e struct {
		Error struct {
			Code *string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body, &e) != nil || e.Error.Code == nil {
		return ""
	}
	return *e.Error.Code
}

// videoView is what the tests read of a job object.
type videoView struct {
	ID     string `json:"id"`
	Model  string `json:"model"`
	Status string `json:"status"`
	Error  *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// do sends a request to the gateway as client (""): no key) with the
// headers given as name, value pairs.
func (h *harness) do(ctx context.Context, method, path, client, body string, headers ...string) reply {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.gw.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if client != "" {
		req.Header.Set("Authorization", "Bearer "+client)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := h.gw.Client().Do(req)
	if err != nil {
		return reply{status: 0, body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func (h *harness) submit(client, body string, headers ...string) reply {
	h.t.Helper()
	return h.do(context.Background(), http.MethodPost, "/v1/videos", client, body, headers...)
}

func (h *harness) get(client, path string) reply {
	h.t.Helper()
	return h.do(context.Background(), http.MethodGet, path, client, "")
}

// videoBody is a submit for the alias video.
const videoBody = `{"model":"video","prompt":"a fox in the snow","seconds":"8"}`

// waitFor polls cond until it holds, for what happens on the servers'
// goroutines (a handler that goes on after its client left).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// keysOf returns the sim's keys, by key.
func keysOf(s *sim.Server) map[string]sim.KeyStatus {
	out := map[string]sim.KeyStatus{}
	for _, k := range s.Keys() {
		out[k.Key] = k
	}
	return out
}

// readFile is os.ReadFile, failing the test.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func jsonUnmarshal(b []byte, v any) { json.Unmarshal(b, v) }

func newServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }
