package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// countingServer is an httptest server that counts the connections it
// accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func post(t *testing.T, ctx context.Context, rt http.RoundTripper, u, body string, h ...string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	return rt.RoundTrip(req)
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPostEchoesAndReusesOneConnection(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Path", r.URL.Path)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Authorization"), b)
	})
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	for i := range 5 {
		resp, err := post(t, context.Background(), tr, srv.URL+"/v1/chat", fmt.Sprint("body", i), "Authorization", "Bearer k")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readAll(t, resp), fmt.Sprint("POST Bearer k body", i); got != want || resp.Header.Get("X-Path") != "/v1/chat" {
			t.Fatalf("answer %q %q, want %q", got, resp.Header.Get("X-Path"), want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 5 sequential calls, want 1", n)
	}
	if n := tr.idleConns(); n != 1 {
		t.Fatalf("%d idle connections, want 1", n)
	}
}

func TestChunkedStreamIsReadAsItArrives(t *testing.T) {
	next := make(chan struct{})
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			<-next
		}
	})
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	resp, err := post(t, context.Background(), tr, srv.URL, "{}")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("data: %d\n", i) {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		br.ReadString('\n')
		next <- struct{}{}
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the stream: %q %v", rest, err)
	}
	resp.Body.Close()
	// The connection went back to the pool and serves the next call.
	close(next)
	resp, err = post(t, context.Background(), tr, srv.URL, "{}")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

func TestBodyClosedEarlyClosesTheConnection(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("x"), 64<<10))
	})
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	resp, err := post(t, context.Background(), tr, srv.URL, "{}")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 10))
	resp.Body.Close()
	if n := tr.idleConns(); n != 0 {
		t.Fatalf("%d idle connections after an early close, want 0", n)
	}
	resp, err = post(t, context.Background(), tr, srv.URL, "{}")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); len(got) != 64<<10 {
		t.Fatalf("read %d bytes", len(got))
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestConnectionCloseIsNotReused(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Write([]byte("bye"))
	})
	tr := New(Settings{})
	for range 2 {
		resp, err := post(t, context.Background(), tr, srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); got != "bye" {
			t.Fatalf("got %q", got)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

// rawServer accepts connections and hands each to serve.
func rawServer(t *testing.T, serve func(n int, c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(n, c)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequest reads one request and its body from br.
func readRequest(br *bufio.Reader) (*http.Request, string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(req.Body)
	return req, string(b), err
}

// staleServer answers one request per connection, then on the first
// connection closes without answering the second, as a server does when
// its idle timeout and a new request cross.
func staleServer(t *testing.T) string {
	return rawServer(t, func(n int, c net.Conn) {
		br := bufio.NewReader(c)
		_, body, err := readRequest(br)
		if err != nil {
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		if n == 0 {
			// Close once the next request arrives, unread.
			br.Peek(1)
			c.(*net.TCPConn).SetLinger(0)
			return
		}
		for {
			_, body, err := readRequest(br)
			if err != nil {
				return
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		}
	})
}

func TestStaleConnectionIsRetriedWhenReplayable(t *testing.T) {
	u := staleServer(t)
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	resp, err := post(t, context.Background(), tr, u, "one")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	resp, err = post(t, context.Background(), tr, u, "two", "Idempotency-Key", "k-1")
	if err != nil {
		t.Fatalf("replayable call on a stale connection: %v", err)
	}
	if got := readAll(t, resp); got != "two" {
		t.Fatalf("got %q, want the body sent again", got)
	}
}

func TestStaleConnectionFailsWhenNotReplayable(t *testing.T) {
	u := staleServer(t)
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	resp, err := post(t, context.Background(), tr, u, "one")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if _, err := post(t, context.Background(), tr, u, "two"); err == nil {
		t.Fatal("a POST without an idempotency key was sent twice")
	}
}

func TestInformationalAnswersAreSkipped(t *testing.T) {
	u := rawServer(t, func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	})
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	resp, err := post(t, context.Background(), tr, u, "{}")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); resp.StatusCode != 200 || got != "ok" {
		t.Fatalf("%d %q", resp.StatusCode, got)
	}
}

func TestHugeHeadersAreRefused(t *testing.T) {
	u := rawServer(t, func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", 8<<10)+"\r\n\r\n")
	})
	tr := New(Settings{MaxHeaderBytes: 4 << 10})
	if _, err := post(t, context.Background(), tr, u, "{}"); !errors.Is(err, errHeaderTooLong) {
		t.Fatalf("err %v, want %v", err, errHeaderTooLong)
	}
	// A head far over the bound stops being read: the upstream here
	// would send headers for ever.
	u = rawServer(t, func(_ int, c net.Conn) {
		if _, _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-More: " + strings.Repeat("a", 1000) + "\r\n"
		for {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	})
	if _, err := post(t, context.Background(), tr, u, "{}"); !errors.Is(err, errHeaderTooLong) {
		t.Fatalf("endless head: err %v, want %v", err, errHeaderTooLong)
	}
}

func TestCancelWhileWaitingForTheAnswer(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
	})
	tr := New(Settings{})
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("client went away")
	go func() { <-arrived; cancel(cause) }()
	_, err := post(t, ctx, tr, srv.URL, "{}")
	if !errors.Is(err, cause) {
		t.Fatalf("err %v, want the context's cause", err)
	}
}

func TestCancelWhileReadingTheBody(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("data: 1\n\n"))
		w.(http.Flusher).Flush()
		<-release
	})
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := post(t, ctx, tr, srv.URL, "{}")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "data: 1\n\n" {
		t.Fatalf("first read %q %v", buf[:n], err)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v, want context.Canceled", err)
	}
	resp.Body.Close()
	if n := tr.idleConns(); n != 0 {
		t.Fatalf("a cancelled connection went back to the pool")
	}
}

// callOnce posts to u and reads the answer, failing the test on an error.
func callOnce(t *testing.T, tr *Transport, u string) {
	t.Helper()
	resp, err := post(t, context.Background(), tr, u, "{}")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
}

func TestIdleConnectionsExpire(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	clk := clocktest.New(time.Unix(1000, 0))
	tr := New(Settings{Clock: clk, IdleTimeout: time.Minute})
	defer tr.CloseIdleConnections()
	call := func() { callOnce(t, tr, srv.URL) }
	call()
	clk.Advance(59 * time.Second)
	call()
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections within the idle timeout, want 1", n)
	}
	clk.Advance(time.Minute)
	call()
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections after the idle timeout, want 2", n)
	}
}

// Idle connections are closed once IdleTimeout has passed, without a new
// call to notice them, and no sweep stays scheduled for an empty pool.
func TestIdleConnectionsAreSwept(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	clk := clocktest.New(time.Unix(1000, 0))
	tr := New(Settings{Clock: clk, IdleTimeout: time.Minute})
	defer tr.CloseIdleConnections()
	call := func() { callOnce(t, tr, srv.URL) }
	call()
	if tr.idleConns() != 1 || clk.Pending() != 1 {
		t.Fatalf("%d idle, %d timers; want 1 and a sweep scheduled", tr.idleConns(), clk.Pending())
	}
	clk.Advance(30 * time.Second)
	call() // the connection is used again: idle since now
	clk.Advance(30 * time.Second)
	if tr.idleConns() != 1 {
		t.Fatalf("a connection idle for 30 s was swept")
	}
	clk.Advance(30 * time.Second)
	if tr.idleConns() != 0 || clk.Pending() != 0 {
		t.Fatalf("%d idle, %d timers after the idle timeout; want none", tr.idleConns(), clk.Pending())
	}
}

func TestPoolIsBounded(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		started.Done()
		<-release
		w.Write([]byte("ok"))
	})
	tr := New(Settings{MaxIdlePerHost: 2})
	defer tr.CloseIdleConnections()
	const n = 5
	started.Add(n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := post(t, context.Background(), tr, srv.URL, "{}")
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	started.Wait()
	close(release)
	wg.Wait()
	if got := tr.idleConns(); got != 2 {
		t.Fatalf("%d idle connections, want the bound of 2", got)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Proto, r.TLS.NegotiatedProtocol)
	}))
	defer srv.Close()
	tr := New(Settings{TLS: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	defer tr.CloseIdleConnections()
	resp, err := post(t, context.Background(), tr, srv.URL, "{}")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != "HTTP/1.1 http/1.1" {
		t.Fatalf("got %q", got)
	}
}

func TestBadRequests(t *testing.T) {
	tr := New(Settings{})
	for _, u := range []string{"ftp://host/x", "http:///path"} {
		req := &http.Request{Method: "POST", URL: mustParse(t, u), Header: http.Header{}}
		if _, err := tr.RoundTrip(req); err == nil {
			t.Errorf("%s: no error", u)
		}
	}
	_, err := post(t, context.Background(), tr, "http://127.0.0.1:1/", "{}")
	if err == nil {
		t.Fatal("dialing a closed port: no error")
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestForChoosesByScheme(t *testing.T) {
	if _, ok := For(mustParse(t, "http://127.0.0.1:8000/v1"), 0).(*Transport); !ok {
		t.Error("plain http: want the HTTP/1.1 transport")
	}
	if _, ok := For(mustParse(t, "https://api.openai.com/v1"), 0).(*http.Transport); !ok {
		t.Error("https: want net/http's transport")
	}
	proxy := func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.example:3128") }
	if _, ok := forProxy(mustParse(t, "http://inference.internal:8000/v1"), 0, proxy).(*http.Transport); !ok {
		t.Error("plain http through a proxy: want net/http's transport")
	}
}

// TestHammer runs many calls at once, streamed and not, some cancelled, and
// checks every answer and that the pool holds no more than its bound.
func TestHammer(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		for range 3 {
			w.Write(b)
			w.(http.Flusher).Flush()
		}
	})
	tr := New(Settings{MaxIdlePerHost: 8})
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				body := fmt.Sprintf("g%d-%d;", g, i)
				ctx, cancel := context.WithCancel(context.Background())
				if i%7 == 3 {
					cancel()
				}
				resp, err := post(t, ctx, tr, srv.URL, body, "Idempotency-Key", body)
				if err != nil {
					cancel()
					if i%7 != 3 {
						t.Error(err)
					}
					continue
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel()
				if i%7 == 3 && errors.Is(err, context.Canceled) {
					continue // cancelled while it ran
				}
				if err != nil || string(got) != strings.Repeat(body, 3) {
					t.Errorf("%s: %q %v", body, got, err)
				}
			}
		}()
	}
	wg.Wait()
	if n := tr.idleConns(); n > 8 {
		t.Fatalf("%d idle connections, over the bound of 8", n)
	}
}

// A request whose context has already ended is not sent.
func TestEndedContextSendsNothing(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	tr := New(Settings{})
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("gone")
	cancel(cause)
	if _, err := post(t, ctx, tr, srv.URL, "{}"); !errors.Is(err, cause) || conns.Load() != 0 {
		t.Fatalf("err %v, %d connections; want the cause and none", err, conns.Load())
	}
}
