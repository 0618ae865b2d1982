package jsonlog

import (
	"io"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// BufferedSettings configures a Buffered writer. The zero value means the
// defaults.
type BufferedSettings struct {
	// FlushEvery is the longest a line waits in the buffer: a flush is
	// scheduled this long after the first line lands in an empty buffer.
	// Zero or less means 100 ms.
	FlushEvery time.Duration
	// MaxBuffer is the most bytes held. A Write that would take the buffer
	// past it flushes what is held first; a single write larger than it is
	// written through, after what is held. Zero or less means 64 KiB.
	MaxBuffer int
	// Clock schedules the flushes. Nil means the system clock.
	Clock clock.Clock
}

const (
	defaultFlushEvery = 100 * time.Millisecond
	defaultMaxBuffer  = 64 << 10
)

// Buffered is an io.Writer that gathers log lines and writes them to an
// underlying writer in batches, so a burst of lines costs one write(2)
// rather than one each. Lines are kept whole and in the order their Writes
// were serialised; a line waits at most FlushEvery.
//
// Write never fails before Close: an error from the underlying writer is
// remembered and returned by the next Flush or Close. While the buffer is
// empty no timer, ticker or goroutine runs.
//
// Make one with NewBuffered; the zero Buffered is not usable. Buffered is
// safe for concurrent use. Put it under a handler that makes
// one Write per line, such as NewHandler's or slog's own.
type Buffered struct {
	w          io.Writer
	flushEvery time.Duration
	maxBuffer  int
	clock      clock.Clock

	// wmu serialises writes to w, so batches go out in order. When both
	// locks are held, wmu is taken first.
	wmu sync.Mutex

	// mu guards buf, spare, timer, err and closed.
	mu sync.Mutex
	// buf holds the lines not yet handed to w; spare is a written-out
	// buffer kept for reuse.
	buf, spare []byte
	// timer is the pending flush; it is set exactly when buf is not empty.
	timer clock.Timer
	// err is the first error from w not yet returned by Flush or Close.
	err    error
	closed bool
}

// NewBuffered returns a Buffered writing to w, with s's zero fields set to
// the defaults.
func NewBuffered(w io.Writer, s BufferedSettings) *Buffered {
	if s.FlushEvery <= 0 {
		s.FlushEvery = defaultFlushEvery
	}
	if s.MaxBuffer <= 0 {
		s.MaxBuffer = defaultMaxBuffer
	}
	return &Buffered{
		w:          w,
		flushEvery: s.FlushEvery,
		maxBuffer:  s.MaxBuffer,
		clock:      clock.Or(s.Clock),
	}
}

// Write buffers a copy of p and returns len(p), nil. If p would take the
// buffer past MaxBuffer, Write first writes out what is held, and a p
// larger than MaxBuffer is then written straight through; either way the
// caller waits for at most those writes (and for a write already under
// way). Errors from the underlying writer are kept for Flush and Close.
//
// After Close, Write writes p straight to the underlying writer and returns
// its result, so late lines (a shutdown message, say) are not lost.
func (b *Buffered) Write(p []byte) (int, error) {
	b.mu.Lock()
	if !b.closed && len(b.buf)+len(p) <= b.maxBuffer {
		b.appendLocked(p)
		b.mu.Unlock()
		return len(p), nil
	}
	b.mu.Unlock()
	return b.writeSlow(p)
}

// writeSlow handles a Write that does not fit: it takes the writer lock,
// then looks again, since another goroutine may have flushed meanwhile.
func (b *Buffered) writeSlow(p []byte) (int, error) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return b.w.Write(p)
	}
	if len(b.buf)+len(p) <= b.maxBuffer {
		b.appendLocked(p)
		b.mu.Unlock()
		return len(p), nil
	}
	held := b.takeLocked()
	through := len(p) > b.maxBuffer
	if !through {
		b.appendLocked(p)
	}
	b.mu.Unlock()
	b.writeOut(held)
	if through {
		b.writeThrough(p)
	}
	return len(p), nil
}

// Flush writes out the buffered lines and returns the first error the
// underlying writer has reported since the last Flush or Close, if any.
func (b *Buffered) Flush() error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	held := b.takeLocked()
	b.mu.Unlock()
	b.writeOut(held)
	return b.takeErr()
}

// Close flushes, stops the pending flush timer and returns as Flush does.
// It does not close the underlying writer. Later Writes go straight
// through. Close may be called more than once.
func (b *Buffered) Close() error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	held := b.takeLocked()
	b.closed = true
	b.mu.Unlock()
	b.writeOut(held)
	return b.takeErr()
}

// flushOnTimer is the timer's callback. A callback that fires after its
// timer was stopped finds the lines of a later batch, or none; writing them
// early is harmless.
func (b *Buffered) flushOnTimer() {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	held := b.takeLocked()
	b.mu.Unlock()
	b.writeOut(held)
}

// appendLocked copies p into the buffer, arming the flush timer if the
// buffer was empty. It requires b.mu held.
func (b *Buffered) appendLocked(p []byte) {
	if len(p) == 0 {
		return
	}
	if b.timer == nil {
		b.timer = b.clock.AfterFunc(b.flushEvery, b.flushOnTimer)
	}
	if b.buf == nil {
		b.buf, b.spare = b.spare, nil
	}
	b.buf = append(b.buf, p...)
}

// takeLocked removes and returns the buffered lines and stops the flush
// timer. It requires b.mu held; the caller must hold b.wmu until it has
// written the lines out, and then give them back with writeOut.
func (b *Buffered) takeLocked() []byte {
	held := b.buf
	b.buf = nil
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	return held
}

// writeOut writes held, lines taken from the buffer, to w, remembers an
// error and keeps held's memory for reuse. It requires b.wmu held and b.mu
// not held.
func (b *Buffered) writeOut(held []byte) {
	if len(held) == 0 {
		return
	}
	err := b.write(held)
	b.mu.Lock()
	b.noteLocked(err)
	if b.spare == nil && cap(held) <= 2*b.maxBuffer {
		b.spare = held[:0]
	}
	b.mu.Unlock()
}

// writeThrough writes the caller's p to w and remembers an error; p is not
// kept. It requires b.wmu held and b.mu not held.
func (b *Buffered) writeThrough(p []byte) {
	err := b.write(p)
	b.mu.Lock()
	b.noteLocked(err)
	b.mu.Unlock()
}

// write writes p to w, turning a short write into an error.
func (b *Buffered) write(p []byte) error {
	n, err := b.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

// noteLocked remembers err if it is the first since the last report. It
// requires b.mu held.
func (b *Buffered) noteLocked(err error) {
	if err != nil && b.err == nil {
		b.err = err
	}
}

// takeErr returns and clears the remembered error.
func (b *Buffered) takeErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.err
	b.err = nil
	return err
}
