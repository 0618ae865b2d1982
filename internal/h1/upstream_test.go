//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris

package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// upstream is a raw TCP server on 127.0.0.1 whose connections are
// scripted byte by byte.
type upstream struct {
	url    string
	goIdle chan struct{} // the client has read an answer: do the idle action
	idles  chan string   // the client's address of a connection, after its idle action
	done   chan struct{} // closed when the test ends

	mu   sync.Mutex    // guards seen and open
	seen map[int][]int // by step: the connections that read its request
	open []net.Conn    // accepted, to close when the test ends
}

// session is one connection of an upstream, numbered in accept order.
type session struct {
	n   int
	c   net.Conn
	raw *net.TCPConn // under c
	br  *bufio.Reader
	up  *upstream
	req *http.Request // the last one read
}

// tlsConfigs are a server's and a client's TLS configurations that trust
// each other.
type tlsConfigs struct{ server, client *tls.Config }

func newTLSConfigs() *tlsConfigs {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	return &tlsConfigs{server: srv.TLS, client: srv.Client().Transport.(*http.Transport).TLSClientConfig}
}

// newUpstream starts an upstream that runs serve on each connection, over
// TLS when serverTLS is set.
func newUpstream(t *testing.T, serverTLS *tls.Config, serve func(s *session)) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme := "http://"
	if serverTLS != nil {
		scheme = "https://"
	}
	up := &upstream{url: scheme + ln.Addr().String(), goIdle: make(chan struct{}, 1), idles: make(chan string, 1),
		done: make(chan struct{}), seen: map[int][]int{}}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(up.done)
		ln.Close()
		up.mu.Lock()
		for _, c := range up.open {
			c.Close()
		}
		up.mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up.mu.Lock()
			up.open = append(up.open, c)
			up.mu.Unlock()
			wg.Go(func() {
				s := &session{n: n, c: c, raw: c.(*net.TCPConn), up: up}
				if serverTLS != nil {
					s.c = tls.Server(c, serverTLS)
				}
				defer s.c.Close()
				s.br = bufio.NewReader(s.c)
				serve(s)
			})
		}
	})
	return up
}

// readHead reads a request head, leaving its body unread, and notes the
// connection that read it. It reports false when no request came.
func (s *session) readHead() bool {
	req, err := http.ReadRequest(s.br)
	if err != nil {
		return false
	}
	i, _ := strconv.Atoi(req.Header.Get("X-Req"))
	s.up.mu.Lock()
	s.up.seen[i] = append(s.up.seen[i], s.n)
	s.up.mu.Unlock()
	s.req = req
	return true
}

// read reads a whole request.
func (s *session) read() bool {
	if !s.readHead() {
		return false
	}
	_, err := io.Copy(io.Discard, s.req.Body)
	return err == nil
}

func (s *session) write(b string) { io.WriteString(s.c, b) }

// close closes the connection with a FIN (after a TLS close_notify).
func (s *session) close() { s.c.Close() }

// reset closes the connection with an RST.
func (s *session) reset() {
	s.raw.SetLinger(0)
	s.raw.Close()
}

// whenIdle waits until the client has read the whole answer, so that the
// connection sits idle in its pool, then does action and tells the client.
func (s *session) whenIdle(action func()) {
	select {
	case <-s.up.goIdle:
	case <-s.up.done:
		return
	}
	action()
	select {
	case s.up.idles <- s.raw.RemoteAddr().String():
	case <-s.up.done:
	}
}

// idleAction has the upstream do its idle action and returns the client's
// address of the connection it did it on.
func (up *upstream) idleAction(t *testing.T) string {
	t.Helper()
	up.goIdle <- struct{}{}
	select {
	case addr := <-up.idles:
		return addr
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream did no idle action")
		return ""
	}
}

// seenBy returns the connections that read the request of step i.
func (up *upstream) seenBy(i int) []int {
	up.mu.Lock()
	defer up.mu.Unlock()
	return up.seen[i]
}

// recordingDialer dials TCP and keeps the connections, to wait on them.
// With hide, the connections do not offer their socket (syscall.Conn), so
// h1 takes its deadline fallback.
type recordingDialer struct {
	hide bool

	mu    sync.Mutex // guards conns
	conns []*clientConn
}

func (d *recordingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &clientConn{Conn: nc, tcp: nc.(*net.TCPConn), closed: make(chan struct{})}
	d.mu.Lock()
	d.conns = append(d.conns, c)
	d.mu.Unlock()
	if d.hide {
		return c, nil
	}
	return socketConn{c}, nil
}

// conn returns the connection dialed from addr.
func (d *recordingDialer) conn(t *testing.T, addr string) *clientConn {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		if c.LocalAddr().String() == addr {
			return c
		}
	}
	t.Fatalf("no connection from %s was dialed", addr)
	return nil
}

// clientConn is a dialed connection that says when it was closed.
type clientConn struct {
	net.Conn
	tcp    *net.TCPConn
	once   sync.Once
	closed chan struct{}
}

func (c *clientConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// socketConn is a clientConn that offers its socket.
type socketConn struct{ *clientConn }

func (c socketConn) SyscallConn() (syscall.RawConn, error) { return c.tcp.SyscallConn() }

// waitClosed waits for the transport to close c, as net/http's read loop
// does when the server writes to or closes an idle connection.
func (c *clientConn) waitClosed(t *testing.T) {
	t.Helper()
	select {
	case <-c.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the transport kept the connection")
	}
}

// waitReadable waits until what the server did reaches c's socket, or c
// is closed: the state h1 looks at when it takes c from the pool.
func (c *clientConn) waitReadable(t *testing.T) {
	t.Helper()
	raw, err := c.tcp.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	c.tcp.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.tcp.SetReadDeadline(time.Time{})
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN
	})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("nothing reached the idle connection")
	}
}
