package limit

import (
	"context"
	"errors"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// flowCall is one AcquireFlow of the property test, running in its own
// goroutine.
type flowCall struct {
	id     int
	flow   string
	cancel context.CancelFunc
}

type flowResult struct {
	id  int
	err error
}

// flowModel drives a Bulkhead through random steps, one at a time, and tracks
// what it must look like: the slots the test holds and, per flow, the callers
// queued in arrival order.
type flowModel struct {
	rt         *rapid.T
	b          *Bulkhead
	limit      int
	maxWaiting int
	held       int
	nextID     int
	pending    map[int]*flowCall // goroutines whose result is not in yet
	queued     map[string][]*flowCall
	nqueued    int
	done       chan flowResult
}

// flowNames are the property test's flows, in a fixed order so that a drawn
// index picks the same caller on every run.
var flowNames = []string{"", "a", "b", "c"}

// acquire starts an AcquireFlow and waits until it has either returned at
// once or queued.
func (m *flowModel) acquire(flow string, weight float64) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &flowCall{id: m.nextID, flow: flow, cancel: cancel}
	m.nextID++
	m.pending[c.id] = c
	before := m.b.Waiting()
	go func() { m.done <- flowResult{c.id, m.b.AcquireFlow(ctx, flow, weight)} }()
	for m.b.Waiting() == before {
		select {
		case r := <-m.done:
			delete(m.pending, r.id)
			cancel()
			switch {
			case r.err == nil && before == 0 && m.held < m.limit:
				m.held++
			case errors.Is(r.err, ErrBulkheadFull) && m.maxWaiting > 0 && before >= m.maxWaiting:
			default:
				m.rt.Fatalf("AcquireFlow(%q) with %d held of %d, %d queued = %v", flow, m.held, m.limit, before, r.err)
			}
			return
		default:
			runtimeGosched()
		}
	}
	m.queued[flow] = append(m.queued[flow], c)
	m.nqueued++
}

// collect receives the results of n grants, checking that they fit under the
// limit and that each flow's grants are the oldest of its queue (their
// goroutines may report in any order when one step grants several).
func (m *flowModel) collect(n int) {
	granted := map[string]map[int]bool{}
	for range n {
		r := <-m.done
		c := m.pending[r.id]
		delete(m.pending, r.id)
		c.cancel()
		if r.err != nil {
			m.rt.Fatalf("granted caller %d returned %v", r.id, r.err)
		}
		if granted[c.flow] == nil {
			granted[c.flow] = map[int]bool{}
		}
		granted[c.flow][c.id] = true
	}
	for flow, ids := range granted {
		q := m.queued[flow]
		for _, c := range q[:min(len(ids), len(q))] {
			if !ids[c.id] {
				m.rt.Fatalf("flow %q: callers %v granted before caller %d: not FIFO", flow, ids, c.id)
			}
		}
		m.queued[flow] = q[len(ids):]
	}
	m.nqueued -= n
	m.held += n
	if n > 0 && m.held > m.limit {
		m.rt.Fatalf("granted a slot over the limit: %d in flight, limit %d", m.held, m.limit)
	}
}

func (m *flowModel) release() {
	if m.held == 0 {
		return
	}
	before := m.b.Waiting()
	m.b.Release()
	m.held--
	m.collect(before - m.b.Waiting())
}

func (m *flowModel) setLimit(n int) {
	before := m.b.Waiting()
	m.b.SetLimit(n)
	m.limit = n
	m.collect(before - m.b.Waiting())
}

// cancel ends the context of the i-th queued caller, counting flow by flow.
func (m *flowModel) cancel(i int) {
	for _, flow := range flowNames {
		q := m.queued[flow]
		if i >= len(q) {
			i -= len(q)
			continue
		}
		c := q[i]
		c.cancel()
		r := <-m.done
		delete(m.pending, r.id)
		if r.id != c.id || !errors.Is(r.err, context.Canceled) {
			m.rt.Fatalf("cancelling caller %d: caller %d returned %v", c.id, r.id, r.err)
		}
		m.queued[flow] = append(q[:i:i], q[i+1:]...)
		m.nqueued--
		return
	}
}

// check compares the Bulkhead with the model.
func (m *flowModel) check() {
	if got := m.b.InFlight(); got != m.held {
		m.rt.Fatalf("InFlight = %d; want %d", got, m.held)
	}
	if got := m.b.Waiting(); got != m.nqueued {
		m.rt.Fatalf("Waiting = %d; want %d", got, m.nqueued)
	}
	if m.nqueued > 0 && m.held < m.limit {
		m.rt.Fatalf("%d queued while only %d of %d slots are held", m.nqueued, m.held, m.limit)
	}
	active := 0
	for _, q := range m.queued {
		if len(q) > 0 {
			active++
		}
	}
	if got := flowsHeld(m.b); got != active {
		m.rt.Fatalf("state for %d flows; want %d, the flows waiting", got, active)
	}
}

// stop ends every call still running, so no goroutine outlives the test
// case, even a failed one.
func (m *flowModel) stop() {
	for _, c := range m.pending {
		c.cancel()
	}
	for range len(m.pending) {
		<-m.done
	}
}

func TestBulkheadFlowProperties(t *testing.T) {
	weights := []float64{1, 2, 3, 0.5, 0.1, 0, -1, math.NaN(), math.Inf(1), 5e-324}
	rapid.Check(t, func(rt *rapid.T) {
		m := &flowModel{
			rt:         rt,
			limit:      rapid.IntRange(1, 3).Draw(rt, "limit"),
			maxWaiting: rapid.IntRange(0, 6).Draw(rt, "maxWaiting"),
			pending:    map[int]*flowCall{},
			queued:     map[string][]*flowCall{},
			done:       make(chan flowResult, 128),
		}
		var err error
		if m.b, err = NewBulkhead(BulkheadSettings{MaxInFlight: m.limit, MaxWaiting: m.maxWaiting}); err != nil {
			rt.Fatal(err)
		}
		defer m.stop()
		for range rapid.IntRange(1, 100).Draw(rt, "steps") {
			switch rapid.IntRange(0, 6).Draw(rt, "op") {
			case 0, 1, 2:
				m.acquire(rapid.SampledFrom(flowNames).Draw(rt, "flow"), rapid.SampledFrom(weights).Draw(rt, "weight"))
			case 3, 4:
				m.release()
			case 5:
				if m.nqueued > 0 {
					m.cancel(rapid.IntRange(0, m.nqueued-1).Draw(rt, "victim"))
				}
			case 6:
				m.setLimit(rapid.IntRange(1, 4).Draw(rt, "setLimit"))
			}
			m.check()
		}
		for m.nqueued > 0 {
			m.cancel(0)
		}
		for m.held > 0 {
			m.release()
		}
		m.check()
		if m.b.InFlight() != 0 || m.b.Waiting() != 0 {
			rt.Fatalf("slots leaked: InFlight %d, Waiting %d", m.b.InFlight(), m.b.Waiting())
		}
	})
}
