package gemini

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/router"
)

const chatBody = `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"Hi"}]}`

const answerBody = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1},"modelVersion":"gemini-2.5-flash","responseId":"r9"}`

func newTestUpstream(t *testing.T, h http.HandlerFunc) *Upstream {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, err := New(Config{BaseURL: srv.URL + "/", Header: http.Header{"X-Team": {"ai"}},
		Clock: clocktest.New(time.Unix(1700000000, 0))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	return u
}

func TestSendChat(t *testing.T) {
	want, _ := TranslateChat([]byte(chatBody), false)
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/v1beta/models/gemini-2.5-flash:generateContent" || r.URL.RawQuery != "" {
			t.Errorf("got %s %s", r.Method, r.URL)
		}
		if r.Header.Get("X-Goog-Api-Key") != "k1" || r.Header.Get("X-Team") != "ai" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", r.Header)
		}
		if r.Header.Get("Authorization") != "" {
			t.Errorf("a client's Authorization went upstream")
		}
		if string(body) != string(want.Body) {
			t.Errorf("body %s, want %s", body, want.Body)
		}
		w.Write([]byte(answerBody))
	})
	resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Model: "gemini-2.5-flash", Key: "k1",
		Body: []byte(chatBody), Header: http.Header{"Authorization": {"Bearer client"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(got, `"content":"Hello"`) || !strings.Contains(got, `"created":1700000000`) {
		t.Errorf("got %d %s", resp.StatusCode, got)
	}
}

func TestSendStream(t *testing.T) {
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || r.URL.Query().Get("alt") != "sse" ||
			r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("got %s accept %q", r.URL, r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseOf(answerBody))
	})
	resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Key: "k", Body: []byte(chatBody), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp)
	if !strings.HasSuffix(got, "data: [DONE]\n\n") || !strings.Contains(got, `"content":"Hello"`) {
		t.Errorf("got %s", got)
	}
}

// Error answers pass through unchanged, for aierr to read Google's own
// status names and RetryInfo.
func TestSendErrorPassThrough(t *testing.T) {
	const body = `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, body)
	})
	for _, stream := range []bool{false, true} {
		resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Key: "k", Body: []byte(chatBody), Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); resp.StatusCode != 429 || got != body || resp.Header.Get("Retry-After") != "7" ||
			resp.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
			t.Errorf("stream %v: got %d %v %s", stream, resp.StatusCode, resp.Header, got)
		}
	}
}

// What cannot be served is refused before anything is sent.
func TestSendRefusesWithoutSending(t *testing.T) {
	var calls atomic.Int32
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	for _, c := range []struct {
		call        router.Call
		param, code string
	}{
		{router.Call{Path: "/chat/completions", Body: []byte(`{"model":"m","logprobs":true,"messages":[{"role":"user","content":"x"}]}`)}, "logprobs", CodeUnsupportedParameter},
		{router.Call{Path: "/audio/speech", Body: []byte(`{"model":"m","input":"x"}`)}, "model", CodeUnsupportedOperation},
		{router.Call{Path: "/chat/completions", Body: []byte(`{"model":"../x","messages":[{"role":"user","content":"x"}]}`)}, "model", CodeInvalidValue},
		{router.Call{Path: "/chat/completions", Body: []byte(`{"model":"a?b","messages":[{"role":"user","content":"x"}]}`)}, "model", CodeInvalidValue},
	} {
		resp, err := u.Send(context.Background(), &c.call)
		var un *router.Unservable
		if resp != nil || !errors.As(err, &un) || un.Param != c.param || un.Code != c.code {
			t.Errorf("%s %s: got %v %v, want Unservable %s %s", c.call.Path, c.call.Body, resp, err, c.param, c.code)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
}

// An upstream that never answers is left when the context ends.
func TestSendHangBeforeHeaders(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	resp, err := u.Send(ctx, &router.Call{Path: "/chat/completions", Key: "k", Body: []byte(chatBody)})
	if err == nil {
		resp.Body.Close()
		t.Fatal("a hung upstream answered")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// A stream that stalls after its first event ends with a read error when
// the context ends, never with [DONE].
func TestSendStreamStall(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseOf(`{"candidates":[{"content":{"parts":[{"text":"partial"}]}}]}`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := u.Send(ctx, &router.Call{Path: "/chat/completions", Key: "k", Body: []byte(chatBody), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("before the content: %v", err)
		}
		if strings.Contains(line, "partial") {
			break
		}
	}
	cancel()
	rest, err := io.ReadAll(br)
	if err == nil || errors.Is(err, io.EOF) || strings.Contains(string(rest), "[DONE]") {
		t.Errorf("a stalled stream ended with %v after %q", err, rest)
	}
}

// A connection reset before or during the answer is an error, never an
// answer.
func TestSendReset(t *testing.T) {
	for _, sent := range []string{
		"",
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`),
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"candidates\":[",
	} {
		u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			buf.WriteString(sent)
			buf.Flush()
			conn.(interface{ SetLinger(int) error }).SetLinger(0)
			conn.Close()
		})
		for _, stream := range []bool{false, true} {
			resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Key: "k", Body: []byte(chatBody), Stream: stream})
			if err != nil {
				continue
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 {
				t.Errorf("%q stream %v: a reset gave a whole answer %s", sent, stream, b)
			}
		}
	}
}

func TestProbe(t *testing.T) {
	u := newTestUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1beta/models" || r.Header.Get("X-Goog-Api-Key") != "k2" {
			t.Errorf("probe %s %s %v", r.Method, r.URL, r.Header)
		}
		io.WriteString(w, `{"models":[]}`)
	})
	resp, err := u.Probe(context.Background(), "k2")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestNewValidates(t *testing.T) {
	for _, base := range []string{"ftp://x", "http://", "::", "https://x/?q=1"} {
		if _, err := New(Config{BaseURL: base}); err == nil || !strings.Contains(err.Error(), "BaseURL") {
			t.Errorf("%q: got %v, want an error naming BaseURL", base, err)
		}
	}
	u, err := New(Config{})
	if err != nil || u.models != DefaultBaseURL+"/v1beta/models" {
		t.Errorf("default: %v %v", u, err)
	}
}
