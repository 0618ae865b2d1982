package batch

import (
	"context"
	"errors"
	"sync"
)

// Room is the storage a batch's output and dead-letter files may take:
// the Batch API keeps them, with a client's uploads, within the client's
// max_client_bytes. Implementations must be safe for concurrent use.
type Room interface {
	// Grow reports whether the two files together may grow to total
	// bytes, and if so takes the room. Shrinking always succeeds.
	Grow(total int64) bool
	// Left is how many more bytes the files may take now.
	Left() int64
}

// errNoRoom is a write that Room refused: the line is not written, and
// the run stops taking lines.
var errNoRoom = errors.New("batch: no room left for the line's result")

// roomGate keeps the lines in flight within the room left, so that a
// batch nearing its storage limit stops before an answer it has paid for
// finds no room: a line is sent only if it and every line in flight could
// each write the largest line written so far ((in flight + 1) × largest ≤
// left); one that does not fit waits for the lines in flight to end; one
// that does not fit alone stops the batch. Until a first line is written
// (largest unknown), lines go one at a time. So an answer is lost only
// when a line writes more than the largest before it by more than the
// slack, or the room shrinks under the batch (the client's uploads). It
// is safe for concurrent use; a nil Room lets everything through.
type roomGate struct {
	room Room

	// mu guards inFlight, largest and settled.
	mu       sync.Mutex
	inFlight int64
	largest  int64
	settled  chan struct{} // closed and replaced when a line ends
}

func newRoomGate(room Room) *roomGate {
	return &roomGate{room: room, settled: make(chan struct{})}
}

// reserve admits a line. It reports false when the line does not fit
// even alone (the batch must take no more lines), and ctx.Err() if ctx
// ends while it waits.
func (g *roomGate) reserve(ctx context.Context) (bool, error) {
	if g.room == nil {
		return true, nil
	}
	for {
		g.mu.Lock()
		left := g.room.Left()
		switch {
		case left > 0 && (g.largest == 0 && g.inFlight == 0 || g.largest > 0 && (g.inFlight+1)*g.largest <= left):
			g.inFlight++
			g.mu.Unlock()
			return true, nil
		case g.inFlight == 0:
			g.mu.Unlock()
			return false, nil
		}
		ch := g.settled
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// wrote notes a line of n bytes written.
func (g *roomGate) wrote(n int) {
	if g.room == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.largest = max(g.largest, int64(n))
}

// settle ends a reserved line, written or not.
func (g *roomGate) settle() {
	if g.room == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	close(g.settled)
	g.settled = make(chan struct{})
}
