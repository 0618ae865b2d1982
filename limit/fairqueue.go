package limit

import (
	"math"
	"slices"
)

// fairQueue holds a Bulkhead's waiters and chooses which one a freed slot goes
// to: weighted fair queueing across flows, self-clocked (Golestani, 1994).
//
// Each waiter gets a virtual finish tag,
//
//	tag = max(V, the tag of its flow's newest waiter) + 1/weight
//
// where V, the virtual time, is the tag of the waiter popped last. pop takes
// the flow head with the smallest tag, the earlier arrival on a tie, so while
// flows stay backlogged each is served in proportion to its weight, and each
// in FIFO order. A flow with nobody queued starts again from V: it banks no
// credit for the time it did not use. With a single flow the tags only grow,
// and the queue is plain FIFO.
//
// A flow's state lives only while it has waiters. Its newest tag is then
// never above V (the waiter was popped, making it V, or removed; see remove),
// so dropping the flow loses nothing, and memory is bounded by the flows
// waiting, not by every flow name ever seen.
//
// A fairQueue is not safe for concurrent use: a Bulkhead guards it with its
// mutex. The zero value is an empty queue.
type fairQueue struct {
	vtime  float64          // V; reset to 0 whenever the queue empties
	seq    uint64           // arrivals so far; a waiter's seq breaks tag ties
	n      int              // waiters in all flows
	flows  []*flow          // the flows with waiters, in no particular order
	byName map[string]*flow // the same flows, by name
}

// flow is one flow's queue.
type flow struct {
	name    string
	idx     int       // position in fairQueue.flows
	waiters []*waiter // FIFO, oldest first; tags ascending
}

// waiter is one queued Acquire. ready is closed when it is granted a slot;
// granted is guarded by the Bulkhead's mutex, the rest by the queue's owner.
type waiter struct {
	ready   chan struct{}
	granted bool
	flow    *flow
	cost    float64 // 1/weight: how far the flow's virtual time moves for it
	tag     float64 // virtual finish tag
	seq     uint64  // arrival order, across flows
}

// shrinkFlows is the number of flows above which an emptied queue lets go of
// its flow slice and map, so a burst of many flows does not pin their
// memory. Go maps keep their buckets when entries are deleted.
const shrinkFlows = 64

// flowCost returns the virtual time one call of the given weight costs. A
// weight that is not a positive finite number counts as 1.
func flowCost(weight float64) float64 {
	if !(weight > 0) || math.IsInf(weight, 1) { // !(>) also catches NaN
		return 1
	}
	return 1 / weight
}

// len returns the number of waiters in all flows.
func (q *fairQueue) len() int { return q.n }

// push queues a new waiter at the back of the named flow and returns it.
func (q *fairQueue) push(name string, weight float64) *waiter {
	start := q.vtime
	f := q.byName[name]
	if f == nil {
		f = &flow{name: name, idx: len(q.flows)}
		if q.byName == nil {
			q.byName = make(map[string]*flow)
		}
		q.byName[name] = f
		q.flows = append(q.flows, f)
	} else {
		start = max(start, f.waiters[len(f.waiters)-1].tag)
	}
	q.seq++
	q.n++
	w := &waiter{ready: make(chan struct{}), flow: f, cost: flowCost(weight), seq: q.seq}
	w.tag = start + w.cost
	f.waiters = append(f.waiters, w)
	return w
}

// pop takes the next waiter off the queue: the flow head with the smallest
// tag, the earlier arrival on a tie. The queue must not be empty.
func (q *fairQueue) pop() *waiter {
	f := q.flows[0]
	for _, g := range q.flows[1:] {
		if g.waiters[0].before(f.waiters[0]) {
			f = g
		}
	}
	w := f.waiters[0]
	f.waiters[0] = nil
	f.waiters = f.waiters[1:]
	q.vtime = w.tag
	q.left(f)
	return w
}

// remove takes a waiter that gave up out of its flow. The flow is not charged
// for it: the waiters behind it move up into its place, their tags
// recomputed from its predecessor's tag, or from V if it was the head (a
// head's start is never above V, its predecessor having been popped or
// removed in turn).
func (q *fairQueue) remove(w *waiter) {
	f := w.flow
	i := slices.Index(f.waiters, w)
	if i < 0 {
		return
	}
	f.waiters = slices.Delete(f.waiters, i, i+1)
	tag := q.vtime
	if i > 0 {
		tag = f.waiters[i-1].tag
	}
	for _, x := range f.waiters[i:] {
		tag += x.cost
		x.tag = tag
	}
	q.left(f)
}

// left accounts for a waiter having left flow f, forgetting the flow if that
// was its last waiter and resetting the virtual time if it was the queue's.
func (q *fairQueue) left(f *flow) {
	q.n--
	if len(f.waiters) == 0 {
		last := len(q.flows) - 1
		q.flows[f.idx] = q.flows[last]
		q.flows[f.idx].idx = f.idx
		q.flows[last] = nil
		q.flows = q.flows[:last]
		delete(q.byName, f.name)
	}
	if q.n == 0 {
		// No tag is left to compare with, so V can start again from 0: kept
		// small, it does not swallow the precision of a small 1/weight.
		q.vtime = 0
		if cap(q.flows) > shrinkFlows {
			q.flows, q.byName = nil, nil
		}
	}
}

// before reports whether w is served before x: a smaller tag, or an equal tag
// and an earlier arrival.
func (w *waiter) before(x *waiter) bool {
	return w.tag < x.tag || (w.tag == x.tag && w.seq < x.seq)
}
