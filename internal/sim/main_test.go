package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start returns a Server for c behind an httptest.Server; both close when
// the test ends.
func start(t *testing.T, c Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts
}

// newFake returns a fake clock at its default start.
func newFake() *clocktest.Clock { return clocktest.New(time.Time{}) }

// sdk returns an official OpenAI client for ts that never retries.
func sdk(ts *httptest.Server) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	return &c
}

// chatBody is a small chat completion request.
func chatBody(stream bool) string {
	if stream {
		return `{"model":"m","messages":[{"role":"user","content":"Say something, please."}],"stream":true,"stream_options":{"include_usage":true}}`
	}
	return `{"model":"m","messages":[{"role":"user","content":"Say something, please."}]}`
}

// serve runs one request through h with a recorder.
func serve(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return rec
}

// post sends a request to ts on a connection of its own, so that a reset
// or hang affects only it.
func post(ctx context.Context, ts *httptest.Server, path, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return c.Do(req)
}

// events reads a whole event stream: the data of each event.
func events(t *testing.T, body io.Reader) (data []string, err error) {
	t.Helper()
	r := sse.NewReader(body, sse.Options{})
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return data, err
		}
		data = append(data, string(ev.Data))
	}
}

// contentOf returns the content of a chunk, "" for none.
func contentOf(t *testing.T, data string) (content string, ok bool) {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil || len(c.Choices) == 0 || c.Choices[0].Delta.Content == nil {
		return "", false
	}
	return *c.Choices[0].Delta.Content, *c.Choices[0].Delta.Content != ""
}

// waitFor polls cond until it holds, for events that happen in the
// server's goroutines after the client has seen the answer (a cancelled
// request's handler returning).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// flushRecorder is a ResponseWriter that writes the body to a pipe as it
// comes, so a test can read a stream live without a network.
type flushRecorder struct {
	h  http.Header
	pw *io.PipeWriter
}

func newFlushRecorder(pw *io.PipeWriter) *flushRecorder {
	return &flushRecorder{h: http.Header{}, pw: pw}
}

func (f *flushRecorder) Header() http.Header         { return f.h }
func (f *flushRecorder) WriteHeader(int)             {}
func (f *flushRecorder) Write(b []byte) (int, error) { return f.pw.Write(b) }
func (f *flushRecorder) Flush()                      {}
