package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/router"
)

const chatBody = `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"Hi"}]}`

const messageBody = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
"content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`

func newTestUpstream(t *testing.T, h http.HandlerFunc, c Config) *Upstream {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c.BaseURL = srv.URL + "/"
	u, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	return u
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSendHeaders(t *testing.T) {
	var got *http.Request
	var body []byte
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", "req_1")
		w.Header().Set("Anthropic-Ratelimit-Requests-Remaining", "99")
		io.WriteString(w, messageBody)
	}, Config{Version: "2024-01-01", Beta: []string{"a-1", "b-2"}, Header: http.Header{"X-Team": {"core"}}})
	resp, err := u.Send(context.Background(), &router.Call{
		Path: "/chat/completions", Model: "claude-sonnet-4-5", Key: "sk-ant-test",
		Body: []byte(chatBody), IdempotencyKey: "idem-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	out := readAll(t, resp)
	if got.URL.Path != "/v1/messages" || got.Method != http.MethodPost {
		t.Errorf("request %s %s, want POST /v1/messages", got.Method, got.URL.Path)
	}
	for k, want := range map[string]string{
		"X-Api-Key": "sk-ant-test", "Anthropic-Version": "2024-01-01", "Anthropic-Beta": "a-1,b-2",
		"Content-Type": "application/json", "Idempotency-Key": "idem-1", "X-Team": "core",
		"Authorization": "",
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if !json.Valid(body) || !strings.Contains(string(body), `"max_tokens":8192`) {
		t.Errorf("body %s", body)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Request-Id") != "req_1" ||
		resp.Header.Get("Anthropic-Ratelimit-Requests-Remaining") != "99" {
		t.Errorf("answer %d %v", resp.StatusCode, resp.Header)
	}
	if resp.ContentLength != int64(len(out)) || resp.Header.Get("Content-Length") != itoa(len(out)) {
		t.Errorf("Content-Length %d / %q for %d bytes", resp.ContentLength, resp.Header.Get("Content-Length"), len(out))
	}
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.Object != "chat.completion" || c.Choices[0].Message.Content != "Hello" {
		t.Errorf("answer %s (%v)", out, err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Error answers pass through unchanged, so aierr reads Anthropic's own
// status, headers and body.
func TestSendErrorPassThrough(t *testing.T) {
	cases := []struct {
		status int
		header map[string]string
		body   string
		kind   aierr.Kind
	}{
		{529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, aierr.Outage},
		{429, map[string]string{"Retry-After": "7", "Anthropic-Ratelimit-Tokens-Remaining": "0"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, aierr.Throttle},
		{401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, aierr.Auth},
		{400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, aierr.ClientError},
	}
	for _, c := range cases {
		u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			for k, v := range c.header {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		}, Config{})
		for _, stream := range []bool{false, true} {
			resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Key: "k", Body: []byte(chatBody), Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != c.status || body != c.body {
				t.Errorf("%d: got %d %s", c.status, resp.StatusCode, body)
			}
			for k, v := range c.header {
				if resp.Header.Get(k) != v {
					t.Errorf("%d: header %s = %q, want %q", c.status, k, resp.Header.Get(k), v)
				}
			}
			if v := aierr.Classify(resp.StatusCode, resp.Header, []byte(body)); v.Kind != c.kind {
				t.Errorf("%d: verdict %v, want %v", c.status, v.Kind, c.kind)
			}
		}
	}
}

// A request that cannot be translated is refused, naming the field, and
// never sent: the walk passes to a target that can serve it.
func TestSendRefusesWithoutSending(t *testing.T) {
	var calls atomic.Int32
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }, Config{})
	resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions",
		Body: []byte(`{"model":"m","n":3,"messages":[{"role":"user","content":"Hi"}]}`)})
	var un *router.Unservable
	if resp != nil || !errors.As(err, &un) || un.Param != "n" || un.Code != CodeUnsupportedValue {
		t.Errorf("got %v, %v; want an Unservable naming n", resp, err)
	}
	if calls.Load() != 0 {
		t.Error("the refused request was sent")
	}
}

func TestSendEmbeddings(t *testing.T) {
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) { t.Error("sent") }, Config{})
	resp, err := u.Send(context.Background(), &router.Call{Path: "/embeddings", Body: []byte(`{"input":"x"}`)})
	var un *router.Unservable
	if resp != nil || !errors.As(err, &un) || un.Code != CodeUnsupportedOperation {
		t.Errorf("got %v, %v; want an Unservable, unsupported_operation", resp, err)
	}
}

// A 2xx answer that is not a message is the upstream's fault: a 502.
func TestSendBadAnswer(t *testing.T) {
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", "req_9")
		io.WriteString(w, "<html>oops</html>")
	}, Config{})
	resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Body: []byte(chatBody)})
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != 502 || resp.Header.Get("Request-Id") != "req_9" {
		t.Errorf("got %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if v := aierr.Classify(resp.StatusCode, resp.Header, []byte(body)); v.Kind != aierr.Outage {
		t.Errorf("verdict %v, want Outage", v.Kind)
	}
}

// Call.Stream asks for a stream even when the body does not say so.
func TestSendStreamFromCall(t *testing.T) {
	var body []byte
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		if r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}, Config{})
	resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Body: []byte(chatBody), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	out := readAll(t, resp)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m["stream"] != true {
		t.Errorf("body %s", body)
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.ContentLength != -1 || !strings.HasSuffix(out, "data: [DONE]\n\n") {
		t.Errorf("answer %v %q", resp.Header, out)
	}
}

func TestNewValidates(t *testing.T) {
	for _, c := range []Config{{BaseURL: "ftp://x"}, {BaseURL: "no-scheme"}, {Beta: []string{"a,b"}}, {Beta: []string{""}}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	u, err := New(Config{})
	if err != nil || u.endpoint != "https://api.anthropic.com/v1/messages" || u.version != DefaultVersion {
		t.Errorf("defaults: %+v %v", u, err)
	}
}

func TestDefaultMaxTokens(t *testing.T) {
	u, _ := New(Config{DefaultMaxTokens: map[string]int{"claude-opus-4-1": 2000, "claude-opus": 3000, "claude-haiku": 0}})
	for model, want := range map[string]int{
		"claude-opus-4-1": 2000, "claude-opus-4-1-2025": 2000, "claude-opus-4-7": 3000,
		"claude-haiku-4-5": 8192, "claude-3-haiku-20240307": 4096, "claude-3-5-sonnet-latest": 8192, "other": FallbackMaxTokens,
	} {
		if got := u.defaultMaxTokens(model); got != want {
			t.Errorf("%s: %d, want %d", model, got, want)
		}
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
