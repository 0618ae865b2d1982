package limit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// arrival names a queued caller: its flow and its place in that flow's
// arrival order.
type arrival struct {
	flow string
	n    int
}

func (a arrival) String() string { return fmt.Sprintf("%s%d", a.flow, a.n) }

// flowHarness drives a one-slot Bulkhead a step at a time: it holds the slot,
// queues callers one after another in a known order, and hands the slot on
// one grant at a time, so the grant order is deterministic.
type flowHarness struct {
	t       *testing.T
	b       *Bulkhead
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	granted chan arrival
	arrived map[string]int // callers queued so far, per flow
	served  map[string]int // one past the last arrival served, per flow
}

func newFlowHarness(t *testing.T, s BulkheadSettings) *flowHarness {
	t.Helper()
	s.MaxInFlight = 1
	b := newTestBulkhead(t, s)
	if !b.TryAcquire() {
		t.Fatal("TryAcquire on an idle bulkhead failed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &flowHarness{
		t: t, b: b, ctx: ctx, cancel: cancel,
		granted: make(chan arrival, 4096),
		arrived: map[string]int{},
		served:  map[string]int{},
	}
	t.Cleanup(h.close)
	return h
}

// queue queues count callers of flow with the given weight.
func (h *flowHarness) queue(flow string, weight float64, count int) {
	for range count {
		h.queueCtx(h.ctx, flow, weight)
	}
}

// queueCtx queues one caller of flow under ctx and returns the channel its
// AcquireFlow result arrives on.
func (h *flowHarness) queueCtx(ctx context.Context, flow string, weight float64) <-chan error {
	a := arrival{flow, h.arrived[flow]}
	h.arrived[flow]++
	n := h.b.Waiting()
	errc := make(chan error, 1)
	h.wg.Go(func() {
		err := h.b.AcquireFlow(ctx, a.flow, weight)
		if err == nil {
			h.granted <- a
		}
		errc <- err
	})
	waitQueued(h.b, n+1)
	return errc
}

// grants releases the held slot n times and returns who each grant went to;
// the last of them holds the slot. It fails the test if a flow is served out
// of its arrival order.
func (h *flowHarness) grants(n int) []arrival {
	h.t.Helper()
	got := make([]arrival, 0, n)
	for range n {
		if h.b.Waiting() == 0 {
			h.t.Fatalf("after %v: nobody left to grant", got)
		}
		h.b.Release()
		a := <-h.granted
		if a.n < h.served[a.flow] {
			h.t.Fatalf("%v served after %s%d: not FIFO within the flow", a, a.flow, h.served[a.flow]-1)
		}
		h.served[a.flow] = a.n + 1
		got = append(got, a)
	}
	return got
}

// shares returns how many of the next n grants go to each flow.
func (h *flowHarness) shares(n int) map[string]int {
	h.t.Helper()
	got := map[string]int{}
	for _, a := range h.grants(n) {
		got[a.flow]++
	}
	return got
}

// close abandons the callers still queued and checks that nothing is left:
// no waiter, no flow state, and only the slot the harness holds.
func (h *flowHarness) close() {
	h.cancel()
	h.wg.Wait()
	if w, f := h.b.Waiting(), flowsHeld(h.b); w != 0 || f != 0 {
		h.t.Errorf("after closing: Waiting %d, flows %d; want 0, 0", w, f)
	}
	if got := h.b.InFlight(); got != 1 {
		h.t.Errorf("after closing: InFlight %d; want 1", got)
		return
	}
	h.b.Release()
}

// flowsHeld returns how many flows b keeps state for.
func flowsHeld(b *Bulkhead) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue.flows) != len(b.queue.byName) {
		panic("limit: fairQueue.flows and byName disagree")
	}
	return len(b.queue.flows)
}

func orderString(as []arrival) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, " ")
}

func TestBulkheadFlowShares(t *testing.T) {
	type queued struct {
		flow   string
		weight float64
		count  int
	}
	tests := []struct {
		name   string
		queue  []queued // in this order
		grants int      // while every flow stays backlogged
		want   map[string]int
	}{
		{"weights 1:3", []queued{{"a", 1, 40}, {"b", 3, 120}}, 80, map[string]int{"a": 20, "b": 60}},
		{"weights 3:1, heavy flow queued first", []queued{{"a", 3, 120}, {"b", 1, 40}}, 80, map[string]int{"a": 60, "b": 20}},
		{"equal weights, a bursts 10x", []queued{{"a", 1, 200}, {"b", 1, 20}}, 36, map[string]int{"a": 18, "b": 18}},
		{"equal weights, b bursts 10x", []queued{{"a", 1, 20}, {"b", 1, 200}}, 36, map[string]int{"a": 18, "b": 18}},
		{"weights 1:2:5", []queued{{"a", 1, 20}, {"b", 2, 40}, {"c", 5, 100}}, 64, map[string]int{"a": 8, "b": 16, "c": 40}},
		{"bad weights count as 1", []queued{{"a", 0, 20}, {"b", -2, 20}, {"c", math.NaN(), 20}, {"d", math.Inf(1), 20}}, 40,
			map[string]int{"a": 10, "b": 10, "c": 10, "d": 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFlowHarness(t, BulkheadSettings{})
			for _, q := range tt.queue {
				h.queue(q.flow, q.weight, q.count)
			}
			got := h.shares(tt.grants)
			for flow, want := range tt.want {
				// Tags such as k/3 are rounded, so a tie may break either way:
				// one grant either side of the exact share.
				if d := got[flow] - want; d < -1 || d > 1 {
					t.Errorf("flow %s got %d of %d grants; want %d±1 (all: %v)", flow, got[flow], tt.grants, want, got)
				}
			}
		})
	}
}

func TestBulkheadOneFlowIsFIFO(t *testing.T) {
	h := newFlowHarness(t, BulkheadSettings{})
	for _, w := range []float64{1, 5, 0.1, 2, 1, 100, 0.5} { // weights do not reorder a flow
		h.queue("a", w, 1)
	}
	if got, want := orderString(h.grants(7)), "a0 a1 a2 a3 a4 a5 a6"; got != want {
		t.Fatalf("grants %s; want %s", got, want)
	}
}

func TestBulkheadFlowLateArrival(t *testing.T) {
	h := newFlowHarness(t, BulkheadSettings{})
	h.queue("b", 1, 2)
	h.queue("a", 1, 60)
	h.grants(22) // b's two, then twenty of a's while b is idle

	h.queue("b", 1, 20)
	// Prompt: b's next caller does not wait behind a's backlog of 40.
	first := h.grants(2)
	if first[0].flow != "b" && first[1].flow != "b" {
		t.Fatalf("next grants after b returned: %s; want b among them", orderString(first))
	}
	// No banked credit: b gets its half from now on, not a run of twenty.
	got := h.shares(20)
	if got["b"] < 9 || got["b"] > 11 {
		t.Fatalf("b got %d of the next 20 grants; want 10±1 (all: %v)", got["b"], got)
	}
}

func TestBulkheadFlowCancelKeepsOrder(t *testing.T) {
	h := newFlowHarness(t, BulkheadSettings{})
	h.queue("a", 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	errc := h.queueCtx(ctx, "a", 1)
	h.queue("a", 1, 2)
	h.queue("b", 1, 4)

	cancel() // a1, in the middle of flow a
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled AcquireFlow = %v; want context.Canceled", err)
	}
	// a is not charged for a1: a2 moves up into its place, level with b1.
	if got, want := orderString(h.grants(7)), "a0 b0 a2 b1 a3 b2 b3"; got != want {
		t.Fatalf("grants %s; want %s", got, want)
	}
}

func TestBulkheadFlowTimeoutKeepsOrder(t *testing.T) {
	fc := clocktest.New(time.Time{})
	h := newFlowHarness(t, BulkheadSettings{MaxWait: 10 * time.Second, Clock: fc})
	errc := h.queueCtx(h.ctx, "a", 1)
	fc.WaitForTimers(1)
	fc.Advance(5 * time.Second)
	h.queue("a", 1, 2)
	h.queue("b", 1, 3)
	fc.WaitForTimers(6)

	fc.Advance(5 * time.Second) // a0, the head of flow a, times out alone
	if err := <-errc; !errors.Is(err, ErrBulkheadTimeout) {
		t.Fatalf("AcquireFlow past MaxWait = %v; want ErrBulkheadTimeout", err)
	}
	// a1 takes a0's place at the head of a; it arrived before b0.
	if got, want := orderString(h.grants(5)), "a1 b0 a2 b1 b2"; got != want {
		t.Fatalf("grants %s; want %s", got, want)
	}
}

// TestBulkheadFlowGrantedThenAbandoned plays the race in which a waiter's
// context ends just as it is granted a slot, by calling abandon directly.
func TestBulkheadFlowGrantedThenAbandoned(t *testing.T) {
	h := newFlowHarness(t, BulkheadSettings{})
	b := h.b
	b.mu.Lock()
	w := b.queue.push("a", 1)
	b.mu.Unlock()
	h.queue("b", 1, 1)

	b.Release() // to w, the first in line
	b.mu.Lock()
	granted := w.granted
	b.mu.Unlock()
	if !granted {
		t.Fatal("Release did not grant the first waiter")
	}
	if err := b.abandon(w, context.Canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("abandon = %v; want context.Canceled", err)
	}
	if n := b.Waiting(); n != 0 {
		t.Fatalf("after abandoning a granted slot: Waiting = %d; want 0, the slot passed on", n)
	}
	if a := <-h.granted; a.String() != "b0" {
		t.Fatalf("abandoned slot went to %v; want b0", a)
	}
	if got := b.InFlight(); got != 1 {
		t.Fatalf("InFlight = %d; want 1", got)
	}
}

func TestBulkheadFlowStateBounded(t *testing.T) {
	h := newFlowHarness(t, BulkheadSettings{})
	const batch = 8
	for i := range 250 { // 2,000 flow names, each used once
		for j := range batch {
			h.queue(fmt.Sprintf("client-%d", i*batch+j), 1, 1)
		}
		if got := flowsHeld(h.b); got != batch {
			t.Fatalf("batch %d: state for %d flows; want %d, the flows waiting", i, got, batch)
		}
		h.grants(batch)
		h.b.mu.Lock()
		vtime := h.b.queue.vtime
		h.b.mu.Unlock()
		if got := flowsHeld(h.b); got != 0 || vtime != 0 {
			t.Fatalf("batch %d: state for %d flows and V = %v after serving them all; want 0, 0", i, got, vtime)
		}
	}

	// A burst of many flows lets go of its slice and map once served.
	for i := range 2 * shrinkFlows {
		h.queue(fmt.Sprintf("burst-%d", i), 1, 1)
	}
	h.grants(2 * shrinkFlows)
	h.b.mu.Lock()
	flows, byName := h.b.queue.flows, h.b.queue.byName
	h.b.mu.Unlock()
	if flows != nil || byName != nil {
		t.Fatalf("after a burst of %d flows: flows cap %d, map %v; want both nil", 2*shrinkFlows, cap(flows), byName != nil)
	}
}

func TestFairQueueTieGoesToEarlierArrival(t *testing.T) {
	var q fairQueue
	a, b, c := q.push("a", 1), q.push("b", 1), q.push("c", 1) // all tagged 1
	if w := q.pop(); w != a {
		t.Fatal("first pop did not take the first arrival")
	}
	// Forgetting a moved c to the front of q.flows; b arrived before c.
	if w := q.pop(); w != b {
		t.Fatalf("second pop took flow %q; want b, the earlier arrival", w.flow.name)
	}
	if w := q.pop(); w != c || q.len() != 0 {
		t.Fatal("third pop did not take c and empty the queue")
	}
}

func TestFlowCost(t *testing.T) {
	tests := []struct{ weight, want float64 }{
		{1, 1}, {2, 0.5}, {0.25, 4}, {0, 1}, {-3, 1},
		{math.NaN(), 1}, {math.Inf(1), 1}, {math.Inf(-1), 1},
	}
	for _, tt := range tests {
		if got := flowCost(tt.weight); got != tt.want {
			t.Errorf("flowCost(%v) = %v; want %v", tt.weight, got, tt.want)
		}
	}
}

func TestBulkheadFlowHammer(t *testing.T) {
	const limit = 4
	b := newTestBulkhead(t, BulkheadSettings{MaxInFlight: limit})
	flows := []string{"", "a", "b", "c", "d"}
	var cur, peak atomic.Int64
	var served [5]atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			f := g % len(flows)
			for i := range 200 {
				ctx, cancel := context.WithCancel(context.Background())
				var canceller sync.WaitGroup
				if i%7 == 0 {
					canceller.Go(cancel) // races the grant: either abandon path
				}
				var err error
				switch {
				case (g+i)%5 == 0:
					if !b.TryAcquire() {
						err = ErrBulkheadFull
					}
				case f == 0:
					err = b.Acquire(ctx)
				default:
					err = b.AcquireFlow(ctx, flows[f], float64(f))
				}
				canceller.Wait()
				cancel()
				switch {
				case errors.Is(err, context.Canceled) || errors.Is(err, ErrBulkheadFull):
					continue
				case err != nil:
					t.Error(err)
					return
				}
				n := cur.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				served[f].Add(1)
				cur.Add(-1)
				b.Release()
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Fatalf("peak in flight %d > limit %d", p, limit)
	}
	if b.InFlight() != 0 || b.Waiting() != 0 || flowsHeld(b) != 0 {
		t.Fatalf("InFlight, Waiting, flows = %d, %d, %d after the hammer", b.InFlight(), b.Waiting(), flowsHeld(b))
	}
	for f := range served {
		if served[f].Load() == 0 {
			t.Errorf("flow %q was never served", flows[f])
		}
	}
}
