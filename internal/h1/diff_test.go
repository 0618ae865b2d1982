//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris

package h1

// Differential tests: adversarial upstreams, scripted byte by byte on raw
// TCP listeners (upstream_test.go), run against h1 and against net/http's
// Transport, comparing what a caller sees of each request: status, body,
// the X-A header, the class of error (texts differ) and the server
// connections that read the request (two: it was retried). h1 runs three
// ways: on plain TCP (idle check by MSG_PEEK), through a connection that
// hides its socket (the deadline fallback) and over TLS; all three give
// the same results. "c0", "c1" are the upstream's connections in accept
// order; each case starts on fresh ones. "Before" is h1 without the idle
// check and the 408 and early-answer handling.
//
//	case                                   before                  h1 now / net/http
//	stray response on an idle connection   2nd call got "stray"    c0 dropped; 2nd on c1
//	garbage on an idle connection          2nd call: malformed     c0 dropped; 2nd on c1
//	close while idle, then a POST          2nd call: EOF error     c0 dropped; 2nd on c1
//	reset while idle, then a GET           sent on c0, retried c1  c0 dropped; 2nd on c1
//	idle 408 then close                    2nd call got the 408    c0 dropped; 2nd on c1
//	idle 408, connection left open         2nd call got the 408    c0 dropped; 2nd on c1
//	408 crossing a replayable request      408                     h1: retried, 200 on c1
//	                                                               net/http: 408 (see below)
//	408 crossing a POST                    408                     408, not retried
//	408 on a new connection                408                     408, not retried
//	100 Continue then 408, reused conn     408                     408, not retried
//	close crossing a replayable request    retried, 200 on c1      same
//	close crossing a POST                  EOF error               same
//	garbage crossing a replayable request  malformed, no retry     same
//	answers before reading a small body    413                     413
//	answers before reading a 16 MiB body   reset error             h1: 413 every time
//	                                                               net/http: 413 or reset/EPIPE
//	both Content-Length and chunked        chunked body, reused    same
//	bad chunk size                         body error; 2nd on c1   same
//	Content-Length > body, then close      "abc", unexpected EOF   same
//	204 with a body (same write)           204; 2nd on c1          same
//	304, body written while idle           2nd call: malformed     304; 2nd on c1
//	100 Continue then 200                  200, reused             same
//	obs-fold in a header                   joined "a b", reused    same
//	NUL in a header                        malformed; 2nd on c1    same
//	HTTP/1.0, no length: read to close     "hello"; 2nd on c1      same
//	extra bytes right after an answer      "ok"; 2nd on c1         same
//	answer split into 1-byte writes        read whole, reused      same
//
// The two rows where h1 and net/http differ are deliberate. A 408 that
// reaches a reused connection after h1's idle check is taken for the
// server's idle timeout crossing the request, and a replayable request is
// sent again (RFC 9110 §15.5.9 allows it); net/http recognises a 408 only
// while no request is out and hands a late one to the caller. When the
// server answers and resets before reading a large body, h1 reads the
// answer that is already buffered after its write fails; net/http's
// writer and reader goroutines race, and either the answer or the write
// error wins.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// outcome is what a caller can see of one request: the answer, the class
// of error (roundtrip: or body: and a kind; "" for none) and the server
// connections that read the request, in order (two means it was retried).
type outcome struct {
	Status int
	Body   string
	Header string // the answer's X-A header
	Err    string
	Conns  []int
}

func (o outcome) String() string {
	return fmt.Sprintf("{%d %q X-A=%q err=%q conns=%v}", o.Status, o.Body, o.Header, o.Err, o.Conns)
}

// step is one request of a case, sent after the previous one's answer was
// read.
type step struct {
	method string // "": POST
	body   string // "": "x"
	key    bool   // send an Idempotency-Key, making a POST replayable
	// afterIdle lets the server do its idle action (see
	// session.whenIdle) and waits for the transport to have seen it,
	// before sending.
	afterIdle bool
}

// diffCase is one adversarial upstream and the requests sent to it.
type diffCase struct {
	name  string
	serve func(s *session)
	steps []step
	want  []outcome // from h1, and from net/http unless netHTTP is set
	// netHTTP lists net/http's outcomes where h1 differs on purpose; more
	// than one where net/http's goroutines race to it.
	netHTTP [][]outcome
}

// ok writes a small keep-alive answer naming the connection.
func (s *session) ok() { s.write(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nc%d", s.n)) }

// each answers every request on the connection with ok, calling first
// after the first answer on connection 0.
func each(first func(s *session)) func(s *session) {
	return func(s *session) {
		for i := 0; s.read(); i++ {
			s.ok()
			if s.n == 0 && i == 0 && first != nil {
				first(s)
			}
		}
	}
}

// onSecond answers the first request on connection 0 with ok and hands
// the second to second; other connections answer ok.
func onSecond(second func(s *session)) func(s *session) {
	return func(s *session) {
		for i := 0; s.read(); i++ {
			if s.n == 0 && i == 1 {
				second(s)
				return
			}
			s.ok()
		}
	}
}

const (
	resp408   = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	resp408KA = "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n"
)

// The steps the cases use; "idle" ones wait for the server's idle action.
var (
	aPost      = step{}
	aKeyedPost = step{key: true}
	aGet       = step{method: "GET"}
	idlePost   = step{afterIdle: true}
	idleGet    = step{method: "GET", afterIdle: true}
)

func ok(conn int) outcome {
	return outcome{Status: 200, Body: fmt.Sprintf("c%d", conn), Conns: []int{conn}}
}

var diffCases = []diffCase{
	{
		name: "stray response on an idle connection",
		serve: each(func(s *session) {
			s.whenIdle(func() { s.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray") })
		}),
		steps: []step{aPost, idlePost},
		want:  []outcome{ok(0), ok(1)},
	},
	{
		name:  "garbage on an idle connection",
		serve: each(func(s *session) { s.whenIdle(func() { s.write("\x00garbage\r\n\r\n") }) }),
		steps: []step{aPost, idlePost},
		want:  []outcome{ok(0), ok(1)},
	},
	{
		name:  "close while idle, then a POST",
		serve: each(func(s *session) { s.whenIdle(s.close) }),
		steps: []step{aPost, idlePost},
		want:  []outcome{ok(0), ok(1)},
	},
	{
		name:  "reset while idle, then a GET",
		serve: each(func(s *session) { s.whenIdle(s.reset) }),
		steps: []step{aGet, idleGet},
		want:  []outcome{ok(0), ok(1)},
	},
	{
		name:  "idle 408 then close",
		serve: each(func(s *session) { s.whenIdle(func() { s.write(resp408); s.close() }) }),
		steps: []step{aPost, idlePost},
		want:  []outcome{ok(0), ok(1)},
	},
	{
		name:  "idle 408, connection left open",
		serve: each(func(s *session) { s.whenIdle(func() { s.write(resp408KA) }) }),
		steps: []step{aGet, idleGet},
		want:  []outcome{ok(0), ok(1)},
	},
	{
		name:  "408 crossing a replayable request",
		serve: onSecond(func(s *session) { s.write(resp408) }),
		steps: []step{aPost, aKeyedPost},
		want:  []outcome{ok(0), {Status: 200, Body: "c1", Conns: []int{0, 1}}},
		// net/http recognises a 408 only while no request is out.
		netHTTP: [][]outcome{{ok(0), {Status: 408, Conns: []int{0}}}},
	},
	{
		name:  "408 crossing a POST",
		serve: onSecond(func(s *session) { s.write(resp408) }),
		steps: []step{aPost, aPost},
		want:  []outcome{ok(0), {Status: 408, Conns: []int{0}}},
	},
	{
		name: "408 on a new connection",
		serve: func(s *session) {
			if s.read() {
				s.write(resp408)
			}
		},
		steps: []step{aGet},
		want:  []outcome{{Status: 408, Conns: []int{0}}},
	},
	{
		name: "100 Continue then 408 on a reused connection",
		serve: onSecond(func(s *session) {
			s.write("HTTP/1.1 100 Continue\r\n\r\n" + resp408)
		}),
		steps: []step{aGet, aGet},
		want:  []outcome{ok(0), {Status: 408, Conns: []int{0}}},
	},
	{
		name:  "close crossing a replayable request",
		serve: onSecond(func(s *session) {}),
		steps: []step{aPost, aKeyedPost},
		want:  []outcome{ok(0), {Status: 200, Body: "c1", Conns: []int{0, 1}}},
	},
	{
		name:  "close crossing a POST",
		serve: onSecond(func(s *session) {}),
		steps: []step{aPost, aPost},
		want:  []outcome{ok(0), {Err: "roundtrip: EOF", Conns: []int{0}}},
	},
	{
		name:  "garbage crossing a replayable request",
		serve: onSecond(func(s *session) { s.write("\x00garbage\r\n\r\n") }),
		steps: []step{aPost, aKeyedPost},
		want:  []outcome{ok(0), {Err: "roundtrip: malformed", Conns: []int{0}}},
	},
	{
		name: "answers before reading a small body",
		serve: func(s *session) {
			if s.readHead() {
				s.write("HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbig")
			}
		},
		steps: []step{{body: strings.Repeat("x", 1<<10)}},
		want:  []outcome{{Status: 413, Body: "big", Conns: []int{0}}},
	},
	{
		name: "answers before reading a large body",
		serve: func(s *session) {
			if s.readHead() {
				s.write("HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbig")
			}
		},
		steps: []step{{body: strings.Repeat("x", 16<<20)}},
		want:  []outcome{{Status: 413, Body: "big", Conns: []int{0}}},
		// net/http's write loop and read loop race: the reset, or
		// the answer.
		netHTTP: [][]outcome{
			{{Status: 413, Body: "big", Conns: []int{0}}},
			{{Err: "roundtrip: reset", Conns: []int{0}}},
			{{Err: "roundtrip: broken pipe", Conns: []int{0}}},
		},
	},
	{
		name: "both Content-Length and chunked",
		serve: func(s *session) {
			for i := 0; s.read(); i++ {
				if i > 0 {
					s.ok()
					continue
				}
				s.write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
			}
		},
		steps: []step{aPost, aPost},
		want:  []outcome{{Status: 200, Body: "hello", Conns: []int{0}}, ok(0)},
	},
	{
		name: "bad chunk size",
		serve: func(s *session) {
			for s.read() {
				if s.n > 0 {
					s.ok()
					continue
				}
				s.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
			}
		},
		steps: []step{aPost, aPost},
		want:  []outcome{{Status: 200, Err: "body: bad chunk", Conns: []int{0}}, ok(1)},
	},
	{
		name: "Content-Length longer than the body, then close",
		serve: func(s *session) {
			if !s.read() {
				return
			}
			if s.n > 0 {
				s.ok()
				return
			}
			s.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
		},
		steps: []step{aPost, aPost},
		want:  []outcome{{Status: 200, Body: "abc", Err: "body: unexpected EOF", Conns: []int{0}}, ok(1)},
	},
	{
		name: "204 with a body",
		serve: func(s *session) {
			for i := 0; s.read(); i++ {
				if s.n > 0 || i > 0 {
					s.ok()
					continue
				}
				s.write("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello")
				s.whenIdle(func() {})
			}
		},
		steps: []step{aPost, idlePost},
		want:  []outcome{{Status: 204, Conns: []int{0}}, ok(1)},
	},
	{
		name: "304 with a body written after the head",
		serve: func(s *session) {
			for i := 0; s.read(); i++ {
				if s.n > 0 || i > 0 {
					s.ok()
					continue
				}
				s.write("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n")
				s.whenIdle(func() { s.write("hello") })
			}
		},
		steps: []step{aGet, idleGet},
		want:  []outcome{{Status: 304, Conns: []int{0}}, ok(1)},
	},
	{
		name: "100 Continue then 200",
		serve: func(s *session) {
			for i := 0; s.read(); i++ {
				if i > 0 {
					s.ok()
					continue
				}
				s.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}
		},
		steps: []step{aPost, aPost},
		want:  []outcome{{Status: 200, Body: "ok", Conns: []int{0}}, ok(0)},
	},
	{
		name: "obs-fold in a header",
		serve: func(s *session) {
			for s.read() {
				s.write("HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok")
			}
		},
		steps: []step{aPost, aPost},
		want: []outcome{
			{Status: 200, Body: "ok", Header: "a b", Conns: []int{0}},
			{Status: 200, Body: "ok", Header: "a b", Conns: []int{0}},
		},
	},
	{
		name: "NUL in a header",
		serve: func(s *session) {
			for s.read() {
				if s.n > 0 {
					s.ok()
					continue
				}
				s.write("HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nok")
			}
		},
		steps: []step{aPost, aPost},
		want:  []outcome{{Err: "roundtrip: malformed", Conns: []int{0}}, ok(1)},
	},
	{
		name: "HTTP/1.0 without a length, read to close",
		serve: func(s *session) {
			if !s.read() {
				return
			}
			if s.n > 0 {
				s.ok()
				return
			}
			s.write("HTTP/1.0 200 OK\r\n\r\nhello")
		},
		steps: []step{aPost, aPost},
		want:  []outcome{{Status: 200, Body: "hello", Conns: []int{0}}, ok(1)},
	},
	{
		name: "extra bytes right after a keep-alive answer",
		serve: func(s *session) {
			for i := 0; s.read(); i++ {
				if s.n > 0 || i > 0 {
					s.ok()
					continue
				}
				s.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra")
				s.whenIdle(func() {})
			}
		},
		steps: []step{aPost, idlePost},
		want:  []outcome{{Status: 200, Body: "ok", Conns: []int{0}}, ok(1)},
	},
	{
		name: "answer split across many tiny writes",
		serve: func(s *session) {
			for s.read() {
				for _, b := range []byte("HTTP/1.1 200 OK\r\nX-A: split\r\nContent-Length: 5\r\n\r\nhello") {
					s.write(string(b))
				}
			}
		},
		steps: []step{aPost, aPost},
		want: []outcome{
			{Status: 200, Body: "hello", Header: "split", Conns: []int{0}},
			{Status: 200, Body: "hello", Header: "split", Conns: []int{0}},
		},
	},
}

// TestDifferential runs every adversarial upstream against h1 (looking at
// idle sockets with MSG_PEEK; through a connection that hides its socket,
// with the deadline fallback; over TLS) and against net/http's Transport.
func TestDifferential(t *testing.T) {
	tlsc := newTLSConfigs()
	// The deadline fallback misses bytes its read did not reach within
	// staleWait (the race idle.go describes); on a loaded machine a
	// descheduled millisecond made the idle cases flaky, so the test
	// gives the read time to reach the socket.
	defer func(w time.Duration) { staleWait = w }(staleWait)
	staleWait = 50 * time.Millisecond
	for _, tc := range diffCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, kind := range []string{"h1", "h1-deadline", "h1-tls", "net/http"} {
				wants := [][]outcome{tc.want}
				if kind == "net/http" && tc.netHTTP != nil {
					wants = tc.netHTTP
				}
				got := runCase(t, tc, kind, tlsc)
				if !slices.ContainsFunc(wants, func(w []outcome) bool { return reflect.DeepEqual(got, w) }) {
					t.Errorf("%s:\n got %v\nwant %v", kind, got, wants)
				}
			}
		})
	}
}

// runCase runs tc's steps through a fresh transport of the kind against a
// fresh upstream and returns what each step saw.
func runCase(t *testing.T, tc diffCase, kind string, tlsc *tlsConfigs) []outcome {
	t.Helper()
	d := &recordingDialer{hide: kind == "h1-deadline"}
	var up *upstream
	var rt interface {
		http.RoundTripper
		CloseIdleConnections()
	}
	switch kind {
	case "net/http":
		up = newUpstream(t, nil, tc.serve)
		rt = &http.Transport{DialContext: d.dial}
	case "h1-tls":
		up = newUpstream(t, tlsc.server, tc.serve)
		rt = New(Settings{Dial: d.dial, TLS: tlsc.client})
	default:
		up = newUpstream(t, nil, tc.serve)
		rt = New(Settings{Dial: d.dial})
	}
	t.Cleanup(rt.CloseIdleConnections) // before the upstream's cleanup
	var got []outcome
	for i, st := range tc.steps {
		if st.afterIdle {
			c := d.conn(t, up.idleAction(t))
			if kind == "net/http" {
				c.waitClosed(t)
			} else {
				c.waitReadable(t)
			}
		}
		o := sendStep(t, rt, up.url, i, st)
		o.Conns = up.seenBy(i)
		got = append(got, o)
	}
	return got
}

// sendStep makes the request of step i and reads the whole answer.
func sendStep(t *testing.T, rt http.RoundTripper, u string, i int, st step) outcome {
	t.Helper()
	method, body := st.method, st.body
	if method == "" {
		method = "POST"
	}
	if body == "" && method == "POST" {
		body = "x"
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Req", strconv.Itoa(i))
	if st.key {
		req.Header.Set("Idempotency-Key", "k"+strconv.Itoa(i))
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return outcome{Err: "roundtrip: " + errClass(err)}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	o := outcome{Status: resp.StatusCode, Body: string(b), Header: resp.Header.Get("X-A")}
	if err != nil {
		o.Err = "body: " + errClass(err)
	}
	return o
}

// errClass names the kind of err, so that errors with different texts
// from the two transports compare equal.
func errClass(err error) string {
	s := err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.Is(err, io.EOF):
		return "EOF"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case strings.Contains(s, "chunk"):
		return "bad chunk"
	case strings.Contains(s, "malformed"):
		return "malformed"
	}
	return "other: " + s
}

// Every idle connection its server closed is skipped, not only the first.
func TestAllStaleIdleConnectionsAreSkipped(t *testing.T) {
	var arrived atomic.Int32
	both := make(chan struct{})
	up := newUpstream(t, nil, func(s *session) {
		for i := 0; s.read(); i++ {
			if s.n < 2 && i == 0 {
				// Two connections in use at once.
				if arrived.Add(1) == 2 {
					close(both)
				}
				select {
				case <-both:
				case <-s.up.done:
					return
				}
			}
			s.ok()
			if s.n < 2 {
				s.whenIdle(s.close)
			}
		}
	})
	d := &recordingDialer{}
	tr := New(Settings{Dial: d.dial})
	t.Cleanup(tr.CloseIdleConnections)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			if o := sendStep(t, tr, up.url, i, aPost); o.Status != 200 {
				t.Errorf("call %d: %v", i, o)
			}
		})
	}
	wg.Wait()
	if n := tr.idleConns(); n != 2 {
		t.Fatalf("%d idle connections, want 2", n)
	}
	for range 2 {
		d.conn(t, up.idleAction(t)).waitReadable(t)
	}
	o := sendStep(t, tr, up.url, 2, aPost)
	o.Conns = up.seenBy(2)
	if want := ok(2); !reflect.DeepEqual(o, want) {
		t.Fatalf("got %v, want %v", o, want)
	}
	if n := tr.idleConns(); n != 1 {
		t.Fatalf("%d idle connections, want the new one", n)
	}
}
