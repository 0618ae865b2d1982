package h1

import (
	"errors"
	"net"
	"time"
)

// A pooled connection has no goroutine reading it, so nothing notices when
// its server writes to it or closes it while it is idle. net/http's
// Transport notices through each connection's read loop and drops the
// connection; here get asks when it takes the connection from the pool,
// with stale, and drops it then. What the server wrote is never read: an
// idle 408 Request Timeout, a stray response or garbage all mean the
// connection is done, as they do for net/http (which also logs the ones
// that are not a 408).
//
// The check races with the server, as net/http's read loop does: bytes or
// a close that reach us after stale looked are read as the answer to the
// request sent next. Then a close before any byte of an answer is retried
// on a new connection when the request is replayable (errNothingRead); a
// 408 read as the first answer on a reused connection is too (see
// RoundTrip); anything else is that request's answer or error. net/http
// behaves the same in its race window, except that it hands the late 408
// to the caller.
//
// The check also misses, with the same outcome, bytes that crypto/tls read
// from the socket with the end of the previous answer but has not
// decrypted yet, and, in the fallback, bytes the read did not reach within
// staleWait (its thread was descheduled).

// staleWait is how long the fallback check waits for a byte. A deadline
// already in the past cannot stand in for a non-blocking read: the
// runtime fails the read before asking the socket, so the check would see
// nothing. The read must reach the socket before the deadline, or the
// check misses what is there; and a healthy connection pays the whole
// wait, rounded up by the runtime's poller, which sleeps in whole
// milliseconds: about 1.1 ms (BenchmarkStale/deadline) whether the wait is
// 50 µs or 1 ms, against 0.3 µs for a peek. So the wait is the longest
// that costs no more. (A variable only so that the differential test can
// widen the window a loaded machine may deschedule the read past.)
var staleWait = time.Millisecond

// stale reports whether c's server wrote to it, closed it or reset it
// while it sat idle, so that it must not carry another request.
func (c *conn) stale() bool {
	switch c.peeker.peek() {
	case peekEmpty:
		return false
	case peekReadable:
		if !c.tls {
			return true
		}
		// Under TLS the bytes may be a record that carries no data,
		// such as a session ticket: let crypto/tls read it.
	}
	return c.readsWithin(staleWait)
}

// readsWithin reports whether a read of c returns within d with a byte,
// EOF or an error other than a timeout. The byte, if any, is left
// buffered in c.br.
func (c *conn) readsWithin(d time.Duration) bool {
	if c.nc.SetReadDeadline(time.Now().Add(d)) != nil {
		return false // no deadlines: no way to look without blocking
	}
	_, err := c.br.Peek(1)
	c.nc.SetReadDeadline(time.Time{})
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// What a non-blocking look at an idle socket found.
type peekResult int

const (
	peekUnknown  peekResult = iota // the socket cannot be looked at
	peekEmpty                      // nothing to read: the connection is idle
	peekReadable                   // bytes, EOF or an error are waiting
)
