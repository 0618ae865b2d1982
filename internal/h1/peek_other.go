//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris)

package h1

import "net"

// peeker cannot look at sockets on this platform; stale falls back to a
// read with a short deadline.
type peeker struct{}

func (p *peeker) init(net.Conn) {}

func (p *peeker) peek() peekResult { return peekUnknown }
