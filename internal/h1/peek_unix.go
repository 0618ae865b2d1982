//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris

package h1

import (
	"net"
	"syscall"
)

// peeker looks at a socket without reading it or blocking: recv with
// MSG_PEEK|MSG_DONTWAIT, one system call. It is used by one goroutine at a
// time, the one that took its connection from the pool.
type peeker struct {
	raw syscall.RawConn // nil: nc has no socket to look at
	fn  func(fd uintptr) bool
	n   int
	err error
	buf [1]byte
}

// init prepares p for the socket under nc, if nc has one. The function
// handed to RawConn.Read is made here once: a closure per look would
// allocate.
func (p *peeker) init(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.raw = raw
	p.fn = func(fd uintptr) bool {
		for {
			p.n, _, p.err = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if p.err != syscall.EINTR {
				return true // never wait for readability
			}
		}
	}
}

func (p *peeker) peek() peekResult {
	if p.raw == nil {
		return peekUnknown
	}
	if err := p.raw.Read(p.fn); err != nil {
		return peekReadable // closed, or a deadline left set: unusable
	}
	if p.err == syscall.EAGAIN || p.err == syscall.EWOULDBLOCK {
		return peekEmpty
	}
	return peekReadable // a byte (n > 0), EOF (n == 0) or an error
}
