// Package h1 is the HTTP client the provider adapters send with. For a
// plain-HTTP upstream it is an HTTP/1.1 transport that does each exchange on
// the caller's goroutine: it writes the request and reads the response
// straight from the connection, with no reader or writer goroutine per
// connection.
//
// net/http's Transport hands every request to a connection's write loop and
// every response back from its read loop. Each hand-off wakes a goroutine,
// and on a small machine that is often a thread wake-up in the kernel, which
// is most of what a proxy in front of a local inference server adds to a
// call. Transport keeps the request on one goroutine from the gateway's
// handler to the upstream socket and back.
//
// For https and for hosts reached through a proxy, For returns net/http's
// Transport, which brings HTTP/2, proxies and 100-continue.
package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// For returns the transport for an upstream at base: a Transport for plain
// http with no proxy configured for it, otherwise a net/http Transport tuned
// for many long-lived connections to one host. connect bounds dialing and
// the TLS handshake; 0 means 10 s.
func For(base *url.URL, connect time.Duration) http.RoundTripper {
	return forProxy(base, connect, http.ProxyFromEnvironment)
}

func forProxy(base *url.URL, connect time.Duration, proxy func(*http.Request) (*url.URL, error)) http.RoundTripper {
	if connect == 0 {
		connect = 10 * time.Second
	}
	dialer := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	if base.Scheme == "http" {
		if p, err := proxy(&http.Request{URL: base}); err == nil && p == nil {
			return New(Settings{Dial: dialer.DialContext})
		}
	}
	return &http.Transport{
		Proxy:                 proxy,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   connect,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// Settings configure a Transport.
type Settings struct {
	// Dial opens connections. nil: a net.Dialer with a 10 s timeout and
	// 30 s keep-alive.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS is the client TLS configuration for https; nil: the defaults.
	// Only http/1.1 is offered in ALPN.
	TLS *tls.Config
	// MaxIdlePerHost bounds the idle connections kept per host. 0: 256.
	MaxIdlePerHost int
	// IdleTimeout closes connections idle for longer. 0: 90 s.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a response's status line and headers. 0: 1 MiB.
	MaxHeaderBytes int64
	// Clock times idle connections; nil: the system clock.
	Clock clock.Clock
}

// Transport is an HTTP/1.1 http.RoundTripper with keep-alive and a pool of
// idle connections per host. Make one with New. It is safe for concurrent
// use.
//
// It does not do HTTP/2, proxies or 100-continue. A response body must be
// read to its end or closed, as with any RoundTripper: read to the end, the
// connection goes back to the pool; closed early, it is closed.
type Transport struct {
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	tls         *tls.Config
	maxIdle     int
	idleTimeout time.Duration
	maxHeader   int64
	clk         clock.Clock

	// mu guards idle and sweeping.
	mu       sync.Mutex
	idle     map[string][]*conn // by scheme://host:port, most recently used last
	sweeping bool               // a sweep of expired idle connections is scheduled
}

// New returns a Transport.
func New(s Settings) *Transport {
	t := &Transport{dial: s.Dial, maxIdle: s.MaxIdlePerHost, idleTimeout: s.IdleTimeout, maxHeader: s.MaxHeaderBytes,
		clk: clock.Or(s.Clock), idle: map[string][]*conn{}}
	if t.dial == nil {
		t.dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	if s.TLS != nil {
		t.tls = s.TLS.Clone()
	} else {
		t.tls = &tls.Config{}
	}
	t.tls.NextProtos = []string{"http/1.1"}
	if t.maxIdle == 0 {
		t.maxIdle = 256
	}
	if t.idleTimeout == 0 {
		t.idleTimeout = 90 * time.Second
	}
	if t.maxHeader == 0 {
		t.maxHeader = 1 << 20
	}
	return t
}

// conn is one connection with its read buffer. lr sits under br so that a
// response head can be bounded without bounding the body; w, under the
// write buffer a request borrows while it is sent, tells the connection's
// write errors from the request body's.
type conn struct {
	nc     net.Conn
	lr     limitedReader
	br     *bufio.Reader
	w      errWriter
	key    string
	idleAt time.Time
	tls    bool   // nc is a *tls.Conn
	peeker peeker // looks at the socket under nc while it is idle
}

// limitedReader reads from a connection, counting the bytes, and fails
// once more than left bytes are read while limited.
type limitedReader struct {
	r       io.Reader
	n       int64 // bytes read so far
	limited bool
	left    int64
}

var errHeaderTooLong = errors.New("h1: response headers too long")

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.limited {
		if l.left <= 0 {
			return 0, errHeaderTooLong
		}
		if int64(len(p)) > l.left {
			p = p[:l.left]
		}
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	l.left -= int64(n)
	return n, err
}

// readBufferSize is a connection's read buffer. A connection holds it for
// as long as it lives, through every second of a slow stream, so it is
// small: a head longer than it is read in pieces, and a body read in
// larger pieces than it skips it (bufio reads those directly).
const readBufferSize = 4 << 10

// writers lends write buffers to requests while they are sent: a
// connection does not hold one while it waits for an answer.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 8<<10) }}

// errWriter writes to a connection and keeps its first error: net/http's
// request writer reports any error under a body copy as the body's.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// RoundTrip sends req and returns the response, or an error if no response
// came. The body is read from the connection as the caller reads it.
//
// An idle connection that its server wrote to or closed while it sat in
// the pool is dropped before it is used (see stale). A request on a reused
// connection that the server closed before answering, or answered with a
// 408 Request Timeout as servers do when they close idle connections, is
// sent again on a new connection when it can be replayed: it has a
// GetBody (or no body) and an idempotent method or an Idempotency-Key
// header. Otherwise the error, or the 408, is the answer.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		closeBody(req)
		return nil, fmt.Errorf("h1: unsupported protocol scheme %q", req.URL.Scheme)
	}
	if req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("h1: no host in request URL")
	}
	ctx := req.Context()
	if ctx.Err() != nil {
		closeBody(req)
		return nil, context.Cause(ctx)
	}
	key := req.URL.Scheme + "://" + canonicalAddr(req.URL)
	for {
		c, reused, err := t.get(ctx, key, req.URL)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, idle408, err := t.exchange(ctx, c, req)
		switch {
		case err == nil && !(reused && idle408 && replayable(req)):
			return resp, nil
		case err == nil:
			// The server timed the connection out as we sent the
			// request: it says it did not take the request.
			resp.Body.Close()
			err = errIdle408
		case !reused || !errors.Is(err, errNothingRead) || !replayable(req) || ctx.Err() != nil:
			return nil, err
		}
		// The server closed or timed out the connection before it took
		// the request: send it again on another one.
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req = req.Clone(ctx)
			req.Body = body
		}
	}
}

// errNothingRead marks a failure before any byte of an answer arrived.
var errNothingRead = errors.New("h1: connection closed before any response")

// errIdle408 is the error when a 408 on a reused connection could not be
// retried because the request body could not be had again.
var errIdle408 = errors.New("h1: server timed out the reused connection (408)")

// exchange writes req on c and reads the response head. idle408 reports
// that the answer is a 408 with no informational answer before it: on a
// reused connection, most likely the server's goodbye to an idle
// connection crossing our request, as the 408 comes before any sign that
// the request was read.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request) (resp *http.Response, idle408 bool, err error) {
	// Cancelling the context unblocks the reads and writes below, and the
	// body's later reads, by expiring the connection's deadline; nothing
	// runs until it fires.
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, bool, error) {
		stop()
		c.nc.Close()
		if ctx.Err() != nil {
			return nil, false, context.Cause(ctx)
		}
		return nil, false, err
	}
	early, err := c.send(req)
	if err != nil && !early {
		return fail(nothingRead(err))
	}
	if _, err := c.br.Peek(1); err != nil {
		return fail(nothingRead(err))
	}
	resp, idle408, err = t.readHead(c, req)
	if err != nil {
		return fail(err)
	}
	keep := !resp.Close && !req.Close && !early
	resp.Body = &body{ctx: ctx, rc: resp.Body, c: c, t: t, stop: stop, keep: keep}
	return resp, idle408, nil
}

// send writes req on c. When the connection fails under the write, the
// server may have answered and closed before reading the whole request,
// as servers do when they refuse one (a 413, a 401): early reports that
// bytes of an answer are waiting. net/http's Transport returns that answer
// or the write error, whichever its two goroutines see first.
func (c *conn) send(req *http.Request) (early bool, err error) {
	c.w.err = nil
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(&c.w)
	err = req.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writers.Put(bw)
	if err == nil || c.w.err == nil {
		return false, err // sent, or reading the request's body failed
	}
	// The server is gone, so the read does not wait for it: what it
	// sent is already here.
	_, perr := c.br.Peek(1)
	return perr == nil, c.w.err
}

// readHead reads the head of the answer to req, skipping informational
// answers other than 101, within maxHeader bytes. idle408 is as for
// exchange.
func (t *Transport) readHead(c *conn, req *http.Request) (resp *http.Response, idle408 bool, err error) {
	// The reader under the buffer stops a runaway head; the exact count
	// is checked after parsing, since the buffer also reads ahead into
	// the body.
	start := c.lr.n - int64(c.br.Buffered())
	c.lr.limited, c.lr.left = true, t.maxHeader+int64(c.br.Size())-int64(c.br.Buffered())
	defer func() { c.lr.limited = false }()
	for interim := 0; ; interim++ {
		resp, err = http.ReadResponse(c.br, req)
		if c.lr.limited && c.lr.left <= 0 || c.lr.n-int64(c.br.Buffered())-start > t.maxHeader {
			err = errHeaderTooLong
		}
		if err != nil {
			return nil, false, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, interim == 0 && resp.StatusCode == http.StatusRequestTimeout, nil
		}
	}
}

func nothingRead(err error) error { return fmt.Errorf("%w: %w", errNothingRead, err) }

// body is a response body that gives its connection back to the pool when
// read to the end. After the request's context ends, reads fail with its
// cause, as net/http's do. It is used by one goroutine at a time, as any
// body.
type body struct {
	ctx  context.Context
	rc   io.ReadCloser
	c    *conn
	t    *Transport
	stop func() bool
	keep bool
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(err == io.EOF)
		if err != io.EOF && b.ctx.Err() != nil {
			// The deadline that ended the read stands for the context.
			err = context.Cause(b.ctx)
		}
	}
	return n, err
}

func (b *body) Close() error {
	if !b.done {
		b.finish(false)
	}
	return nil
}

// finish ends the body: the connection goes back to the pool when the body
// was read whole, the server keeps the connection open, nothing more is
// buffered and the context has not fired; otherwise it is closed.
func (b *body) finish(whole bool) {
	b.done = true
	if b.stop() && whole && b.keep && b.c.br.Buffered() == 0 {
		b.t.put(b.c)
		return
	}
	b.c.nc.Close()
}

// get returns an idle connection to key that its server has left alone,
// or dials one.
func (t *Transport) get(ctx context.Context, key string, u *url.URL) (c *conn, reused bool, err error) {
	for c := t.takeIdle(key); c != nil; c = t.takeIdle(key) {
		if !c.stale() {
			return c, true, nil
		}
		c.nc.Close()
	}
	nc, err := t.dial(ctx, "tcp", canonicalAddr(u))
	if err != nil {
		return nil, false, err
	}
	c = &conn{key: key}
	c.peeker.init(nc)
	if u.Scheme == "https" {
		cfg := t.tls
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName = u.Hostname()
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, false, err
		}
		nc, c.tls = tc, true
	}
	c.nc, c.w.w, c.lr.r = nc, nc, nc
	c.br = bufio.NewReaderSize(&c.lr, readBufferSize)
	return c, false, nil
}

// takeIdle takes the most recently used idle connection to key from the
// pool, closing the expired ones on the way; nil if there is none.
func (t *Transport) takeIdle(key string) *conn {
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for list := t.idle[key]; len(list) > 0; list = t.idle[key] {
		c := list[len(list)-1]
		list[len(list)-1] = nil
		t.idle[key] = list[:len(list)-1]
		if now.Sub(c.idleAt) < t.idleTimeout {
			return c
		}
		c.nc.Close()
	}
	return nil
}

// put keeps c for reuse.
func (t *Transport) put(c *conn) {
	c.nc.SetDeadline(time.Time{})
	c.idleAt = t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle[c.key]) >= t.maxIdle {
		c.nc.Close()
		return
	}
	t.idle[c.key] = append(t.idle[c.key], c)
	if !t.sweeping {
		t.sweeping = true
		t.clk.AfterFunc(t.idleTimeout, t.sweep)
	}
}

// sweep closes the connections idle for IdleTimeout or more, so a quiet
// transport does not hold sockets its servers have long closed, and comes
// back while any are left. Nothing is scheduled while the pool is empty.
func (t *Transport) sweep() {
	now := t.clk.Now()
	var expired []*conn
	var oldest time.Time // of the connections kept
	t.mu.Lock()
	for key, list := range t.idle {
		kept := list[:0]
		for _, c := range list {
			switch {
			case now.Sub(c.idleAt) >= t.idleTimeout:
				expired = append(expired, c)
			default:
				kept = append(kept, c)
				if oldest.IsZero() || c.idleAt.Before(oldest) {
					oldest = c.idleAt
				}
			}
		}
		clear(list[len(kept):])
		if len(kept) == 0 {
			delete(t.idle, key)
		} else {
			t.idle[key] = kept
		}
	}
	// Next when the oldest one left expires.
	t.sweeping = !oldest.IsZero()
	if t.sweeping {
		t.clk.AfterFunc(oldest.Add(t.idleTimeout).Sub(now), t.sweep)
	}
	t.mu.Unlock()
	for _, c := range expired {
		c.nc.Close()
	}
}

// CloseIdleConnections closes the connections in the pool. Connections in
// use are not affected.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*conn{}
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.nc.Close()
		}
	}
}

// idleConns returns the number of pooled connections, for tests.
func (t *Transport) idleConns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, list := range t.idle {
		n += len(list)
	}
	return n
}

// aLongTimeAgo is a deadline in the past: it fails blocked reads and
// writes at once.
var aLongTimeAgo = time.Unix(1, 0)

func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// replayable reports whether req may be sent twice.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
