package redistest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Slow is a TCP proxy in front of a Server that holds each chunk a client
// sends for as long as its Delay says, so a test can script a Redis that
// answers slowly (always, or in blips) while it stays healthy.
type Slow struct {
	Addr string // host:port on 127.0.0.1 to dial instead of the server's

	ln     net.Listener
	target string

	// mu guards delay, conns and closed.
	mu     sync.Mutex
	delay  func() time.Duration
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// SlowDown starts a proxy in front of s; it is closed when the test ends.
// Until SetDelay it adds nothing.
func SlowDown(t testing.TB, s *Server) *Slow {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Slow{Addr: ln.Addr().String(), ln: ln, target: s.Addr, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// URL returns the proxy's redis:// URL.
func (p *Slow) URL() string { return "redis://" + p.Addr + "/0" }

// SetDelay makes d decide how long each chunk a client sends is held
// (nil: not at all). d is called from the proxy's goroutines, one call
// at a time.
func (p *Slow) SetDelay(d func() time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// wait holds a chunk for what the delay says.
func (p *Slow) wait() {
	p.mu.Lock()
	var d time.Duration
	if p.delay != nil {
		d = p.delay()
	}
	p.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}

// Close stops the proxy and its connections, and waits for them.
func (p *Slow) Close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// accept serves each client connection until the listener closes.
func (p *Slow) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			c.Close()
			up.Close()
			return
		}
		p.wg.Add(2)
		go p.forward(up, c, true)
		go p.forward(c, up, false)
	}
}

// track records a pair of connections; false when the proxy is closing.
func (p *Slow) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// forward copies from src to dst, holding each chunk when slow, and
// closes both at the end.
func (p *Slow) forward(dst, src net.Conn, slow bool) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if slow {
				p.wait()
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF included: the other side closes too
		}
	}
}
