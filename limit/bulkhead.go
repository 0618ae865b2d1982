package limit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// BulkheadSettings configure a Bulkhead. The zero value is a Bulkhead with no
// limit.
type BulkheadSettings struct {
	// MaxInFlight is how many calls may be in flight at once; 0: no limit.
	// SetLimit changes it later.
	MaxInFlight int
	// MaxWaiting is how many callers may queue for a slot: 0: no limit;
	// negative: none, Acquire fails at once when all slots are in use.
	MaxWaiting int
	// MaxWait bounds how long a caller queues before ErrBulkheadTimeout;
	// 0: only the context bounds the wait.
	MaxWait time.Duration
	// Clock makes the MaxWait timers; nil: the system clock.
	Clock clock.Clock
}

// Bulkhead bounds the calls in flight. Callers over the limit queue, up to
// MaxWaiting of them for at most MaxWait, and a slot freed by Release (or by
// a raised limit) goes to a waiter chosen by weighted fair queueing across
// flows:
//
//   - AcquireFlow names the caller's flow (a client, tenant or API key) and
//     its weight. While several flows have callers queued, each is served in
//     proportion to its weight: at weights 1 and 3, the second gets three
//     slots in every four.
//   - Within a flow, callers are served in FIFO order. Acquire is AcquireFlow
//     with flow "" and weight 1, so a Bulkhead used only through Acquire is
//     a plain FIFO queue.
//   - A flow that had nobody queued banks no credit for the quiet spell: when
//     it returns it is served promptly, interleaved with the flows already
//     waiting, but not ahead of them all.
//   - Fairness orders the queue, not entry to it: MaxWaiting bounds the
//     waiters of all flows together.
//
// TryAcquire never jumps the queue. The Bulkhead keeps state only for flows
// with callers queued, so many distinct flow names cost nothing once served.
//
// A Bulkhead is safe for concurrent use by multiple goroutines.
type Bulkhead struct {
	clock      clock.Clock
	maxWaiting int
	maxWait    time.Duration

	// mu guards limit, inFlight, queue and each waiter's granted.
	mu       sync.Mutex
	limit    int // 0: no limit
	inFlight int
	queue    fairQueue
}

// NewBulkhead returns a Bulkhead with no call in flight. It returns an error
// naming the field when MaxInFlight or MaxWait is negative.
func NewBulkhead(s BulkheadSettings) (*Bulkhead, error) {
	switch {
	case s.MaxInFlight < 0:
		return nil, errors.New("limit: MaxInFlight is negative")
	case s.MaxWait < 0:
		return nil, errors.New("limit: MaxWait is negative")
	}
	return &Bulkhead{
		clock:      clock.Or(s.Clock),
		maxWaiting: s.MaxWaiting,
		maxWait:    s.MaxWait,
		limit:      s.MaxInFlight,
	}, nil
}

// Acquire takes a slot, queueing if none is free. It returns nil with the
// slot held (call Release when the call ends); ErrBulkheadFull if the queue
// is full; ErrBulkheadTimeout after MaxWait; or ctx.Err() if the context ends
// first. A slot granted just as the wait ends is passed on, not leaked.
//
// Acquire is AcquireFlow(ctx, "", 1).
func (b *Bulkhead) Acquire(ctx context.Context) error {
	return b.AcquireFlow(ctx, "", 1)
}

// AcquireFlow is Acquire for a caller in the named flow, with the given
// weight; its results are Acquire's. Weights are relative, and one that is
// not a positive finite number counts as 1.
//
// A queued caller is tagged max(V, the tag of its flow's previous caller) +
// 1/weight, where V is the tag of the caller granted last, and freed slots go
// in tag order (the earlier arrival on a tie). A caller that gives up is not
// charged to its flow: the callers behind it move up into its place. With a
// free slot and nobody queued, AcquireFlow costs what Acquire does: no
// allocation and no lookup of the flow.
func (b *Bulkhead) AcquireFlow(ctx context.Context, flow string, weight float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	if b.admitLocked() {
		b.mu.Unlock()
		return nil
	}
	if b.maxWaiting < 0 || (b.maxWaiting > 0 && b.queue.len() >= b.maxWaiting) {
		b.mu.Unlock()
		return ErrBulkheadFull
	}
	w := b.queue.push(flow, weight)
	b.mu.Unlock()

	var timeout <-chan time.Time
	if b.maxWait > 0 {
		t := b.clock.NewTimer(b.maxWait)
		defer t.Stop()
		timeout = t.C()
	}
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		return b.abandon(w, ctx.Err())
	case <-timeout:
		return b.abandon(w, ErrBulkheadTimeout)
	}
}

// abandon takes w out of the queue and returns err. If w was granted a slot
// meanwhile, the slot goes to the next waiter.
func (b *Bulkhead) abandon(w *waiter, err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.granted {
		b.inFlight--
		b.grantLocked()
		return err
	}
	b.queue.remove(w)
	return err
}

// TryAcquire takes a slot if one is free and nobody is queued, without
// waiting. It reports whether it did; if so, call Release when done.
func (b *Bulkhead) TryAcquire() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.admitLocked()
}

// Release gives back a slot taken by Acquire, AcquireFlow or TryAcquire,
// handing it to the next waiter if the limit allows. Releasing a slot that
// was not taken is a bug in the caller and panics.
func (b *Bulkhead) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inFlight == 0 {
		panic("limit: Bulkhead.Release without a matching Acquire")
	}
	b.inFlight--
	b.grantLocked()
}

// SetLimit changes the in-flight limit live; n <= 0 means no limit. Raising
// it grants queued waiters at once. Lowering it below the calls in flight
// lets them finish: their Releases work as usual, and no new call goes until
// the count is back under the limit.
func (b *Bulkhead) SetLimit(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = max(n, 0)
	b.grantLocked()
}

// Limit returns the in-flight limit; 0 means no limit.
func (b *Bulkhead) Limit() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// InFlight returns the number of slots held.
func (b *Bulkhead) InFlight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight
}

// Waiting returns the number of callers queued.
func (b *Bulkhead) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.queue.len()
}

// hasRoomLocked reports whether another call fits under the limit. It
// requires b.mu held.
func (b *Bulkhead) hasRoomLocked() bool { return b.limit == 0 || b.inFlight < b.limit }

// admitLocked takes a slot for a caller that has not queued: only when there
// is room and nobody is waiting. It requires b.mu held.
func (b *Bulkhead) admitLocked() bool {
	if b.queue.len() > 0 || !b.hasRoomLocked() {
		return false
	}
	b.inFlight++
	return true
}

// grantLocked hands free slots to waiters in the fair queue's order. It
// requires b.mu held.
func (b *Bulkhead) grantLocked() {
	for b.queue.len() > 0 && b.hasRoomLocked() {
		w := b.queue.pop()
		w.granted = true
		b.inFlight++
		close(w.ready)
	}
}
