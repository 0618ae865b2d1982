package gateway

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// upstream is a test provider that records requests and answers with
// handle(n), n counting from 1.
type upstream struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []string
	handle func(w http.ResponseWriter, r *http.Request, n int)
}

func newUpstream(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *upstream {
	u := &upstream{handle: handle}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b)) // the handler may read it too
		u.mu.Lock()
		u.reqs = append(u.reqs, r)
		u.bodies = append(u.bodies, string(b))
		n := len(u.reqs)
		h := u.handle
		u.mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

func (u *upstream) set(h func(w http.ResponseWriter, r *http.Request, n int)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.handle = h
}

func (u *upstream) header(i int) http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.reqs[i].Header
}

func chatOK(who string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"hello from %s"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`, who)
	}
}

func status(code int, typ string, hdr ...string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"upstream says %d","type":%q,"code":%q}}`, code, typ, typ)
	}
}

// chunk is one chat.completion.chunk event.
func chunk(delta string) string {
	return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":null}]}\n\n"
}

// sse streams a role preamble, then words, then [DONE]; after the first
// word it waits on stall if not nil (and then ends without [DONE]).
func streamOf(words []string, stall <-chan struct{}) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		w.(http.Flusher).Flush()
		for i, word := range words {
			io.WriteString(w, chunk(fmt.Sprintf(`{"content":%q}`, word)))
			w.(http.Flusher).Flush()
			if i == 0 && stall != nil {
				select {
				case <-stall:
				case <-r.Context().Done():
				}
				return
			}
		}
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// gateway starts a gateway from a YAML config (with %s replaced by the
// upstream URLs in order) behind an httptest server.
func gateway(t *testing.T, clk *clocktest.Clock, yaml string, ups ...*upstream) (*Server, *httptest.Server) {
	t.Helper()
	return start(t, Options{Clock: clockOf(clk)}, yaml, ups...)
}

func gatewayWithLog(t *testing.T, log *slog.Logger, yaml string, ups ...*upstream) (*Server, *httptest.Server) {
	t.Helper()
	return start(t, Options{Logger: log}, yaml, ups...)
}

// clockOf returns clk as a clock.Clock, nil for a nil fake.
func clockOf(clk *clocktest.Clock) clock.Clock {
	if clk == nil {
		return nil
	}
	return clk
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// withUpstreams returns yaml with each %s replaced by the next upstream's
// base URL.
func withUpstreams(yaml string, ups ...*upstream) string {
	args := make([]any, len(ups))
	for i, u := range ups {
		args[i] = u.URL + "/v1"
	}
	return fmt.Sprintf(yaml, args...)
}

// parse parses a test configuration with no environment.
func parse(text string) (*config.Config, error) {
	return config.Parse("fusebox.yaml", []byte(text), func(string) (string, bool) { return "", false })
}

func start(t *testing.T, o Options, yaml string, ups ...*upstream) (*Server, *httptest.Server) {
	t.Helper()
	cfg, err := parse(withUpstreams(yaml, ups...))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	o.Config = cfg
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(s.Close) // after the listener: cleanups run last first
	t.Cleanup(hs.Close)
	return s, hs
}

func newClient(base string, opts ...option.RequestOption) openai.Client {
	return openai.NewClient(append([]option.RequestOption{
		option.WithBaseURL(base + "/v1"), option.WithAPIKey("sk-client"), option.WithMaxRetries(0),
	}, opts...)...)
}

func params(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
}

func text(c *openai.ChatCompletion) string {
	if c == nil || len(c.Choices) == 0 {
		return ""
	}
	return c.Choices[0].Message.Content
}

// twoTargets is a ladder of two OpenAI-compatible providers.
const twoTargets = `
providers:
  primary: {type: openai, base_url: "%s", keys: [pk1, pk2]}
  secondary: {type: openai, base_url: "%s", keys: [sk1]}
defaults:
  timeouts: {ttfb: 2s, idle: 5s, total: 60s}
models:
  - name: smart
    targets:
      - {provider: primary, model: gpt-4.1, price: {input: 2, output: 8}}
      - {provider: secondary, model: deepseek-chat, price: {input: 0.27, output: 1.1}}
    breaker: {consecutive: 3, open: 10s}
    retry: {attempts: 1}
`

var _ = strings.Contains

// eventually waits (up to 10 s) for cond, which depends on work the
// gateway finishes after the client has its answer (metrics, access log).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 10*time.Second, what, cond)
}

// eventuallyWithin is eventually with a deadline of d.
func eventuallyWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// scrape returns the gateway's /metrics text.
func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// lockedWriter serialises writes to w under mu, which readers hold too.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func logsString(b *strings.Builder, mu *sync.Mutex) string {
	mu.Lock()
	defer mu.Unlock()
	return b.String()
}
