package azure

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/provider/openai"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// hijack answers with raw bytes on the connection, then closes it; reset
// closes it with a TCP reset.
func hijack(w http.ResponseWriter, raw string, reset bool) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	buf.WriteString(raw)
	buf.Flush()
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		tc.SetLinger(0)
	}
	conn.Close()
}

// outcome is what a caller sees of one exchange: the error class of Send,
// else the status and what reading the body gives.
func outcome(resp *http.Response, err error, ctx context.Context, cancel context.CancelFunc) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "send: canceled"
	case err != nil:
		return "send: error"
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	first, err := r.ReadString('\n')
	if err == nil && resp.Header.Get("Content-Type") == "text/event-stream" {
		cancel() // a stalled stream: the caller's watchdog ends it
	}
	rest, err2 := io.ReadAll(r)
	switch {
	case err2 != nil && ctx.Err() != nil:
		return resp.Status + " " + first + "then canceled"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err2, io.ErrUnexpectedEOF):
		return resp.Status + " truncated"
	case err2 != nil:
		return resp.Status + " body error"
	}
	return resp.Status + " " + first + string(rest)
}

// Upstreams that hang, stall, reset, truncate or send garbage reach the
// caller as they do through the openai adapter: nothing is hidden,
// nothing invented.
func TestUnreliableUpstreamsBehaveLikeOpenAI(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}, release <-chan struct{})
		want    string
	}{
		{"hangs before headers", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}, release <-chan struct{}) {
			arrived <- struct{}{}
			<-release
		}, "send: canceled"},
		{"stalls mid-stream", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}, release <-chan struct{}) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n")
			w.(http.Flusher).Flush()
			<-release
		}, "200 OK data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\nthen canceled"},
		{"resets", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}, release <-chan struct{}) {
			hijack(w, "", true)
		}, "send: error"},
		{"garbage instead of HTTP", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}, release <-chan struct{}) {
			hijack(w, "\x00\x01garbage\r\n\r\n", false)
		}, "send: error"},
		{"truncated body", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}, release <-chan struct{}) {
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":", false)
		}, "200 OK truncated"},
		{"garbage body", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}, release <-chan struct{}) {
			io.WriteString(w, "<html>\x00\xff")
		}, "200 OK <html>\x00\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived, release := make(chan struct{}, 2), make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				tc.handler(w, r, arrived, release)
			}))
			defer srv.Close()
			defer close(release)
			az := newUpstream(t, Config{Endpoint: srv.URL})
			oa, err := openai.New(openai.Config{BaseURL: srv.URL, Auth: "api-key"})
			if err != nil {
				t.Fatal(err)
			}
			defer oa.CloseIdle()
			for name, up := range map[string]router.Upstream{"azure": az, "openai": oa} {
				ctx, cancel := context.WithCancel(t.Context())
				go func() {
					select {
					case <-arrived: // hung with the request in hand: the caller gives up
						cancel()
					case <-ctx.Done():
					}
				}()
				resp, err := up.Send(ctx, &router.Call{Path: "/chat/completions", Model: "d", Key: "k", Body: []byte(`{"stream":true}`), Stream: true})
				if got := outcome(resp, err, ctx, cancel); got != tc.want {
					t.Errorf("%s: %q; want %q", name, got, tc.want)
				}
				cancel()
			}
		})
	}
}
