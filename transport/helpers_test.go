package transport

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// upstream is a test provider: it records every request and answers with
// handle, which gets the request's number (from 1).
type upstream struct {
	*httptest.Server
	name   string
	handle func(w http.ResponseWriter, r *http.Request, n int)

	mu   sync.Mutex
	reqs []seen
}

type seen struct {
	path   string
	query  string
	host   string
	header http.Header
	body   string
}

func newUpstream(t *testing.T, name string, handle func(w http.ResponseWriter, r *http.Request, n int)) *upstream {
	t.Helper()
	u := &upstream{name: name, handle: handle}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, seen{path: r.URL.Path, query: r.URL.RawQuery, host: r.Host,
			header: r.Header.Clone(), body: string(body)})
		n := len(u.reqs)
		u.mu.Unlock()
		u.handle(w, r, n)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

func (u *upstream) req(i int) seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.reqs[i]
}

// chatOK answers a chat completion saying who answered.
func chatOK(who string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"hello from %s"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`, who)
	}
}

// status answers with a status, headers and an OpenAI-shaped error body.
func status(code int, errType string, hdr ...string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"test %d","type":%q,"code":%q}}`, code, errType, errType)
	}
}

// sse writes events as a chat completion stream; stall, if not nil, is
// waited on after the first event.
func sse(w http.ResponseWriter, words []string, stall <-chan struct{}) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for i, word := range words {
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","+
			"\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", word)
		w.(http.Flusher).Flush()
		if i == 0 && stall != nil {
			<-stall
			return
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// openaiClient returns an official client pointed at base through rt, with
// the SDK's own retries off.
func openaiClient(base string, rt http.RoundTripper) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(base+"/v1"),
		option.WithAPIKey("sk-caller"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithMaxRetries(0),
	)
}

func chatParams(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
}

func content(c *openai.ChatCompletion) string {
	if c == nil || len(c.Choices) == 0 {
		return ""
	}
	return c.Choices[0].Message.Content
}

// events collects Attempt events.
type events struct {
	mu  sync.Mutex
	all []Attempt
}

func (e *events) add(a Attempt) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, a)
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, a := range e.all {
		if a.Skipped != nil {
			fmt.Fprintf(&b, "[%s skipped: %v] ", a.Endpoint, a.Skipped)
			continue
		}
		fmt.Fprintf(&b, "[%s #%d %v %v] ", a.Endpoint, a.N, a.Verdict.Kind, a.Next)
	}
	return b.String()
}

func fakeClock() *clocktest.Clock { return clocktest.New(time.Time{}) }

func mustNew(t *testing.T, cfg Config) *Transport {
	t.Helper()
	rt, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return rt
}

// retryOnce allows no same-endpoint retry.
var retryOnce = retry.Policy{Attempts: 1}
