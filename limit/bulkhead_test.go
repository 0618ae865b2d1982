package limit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func newTestBulkhead(t *testing.T, s BulkheadSettings) *Bulkhead {
	t.Helper()
	b, err := NewBulkhead(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitQueued waits (without sleeping on a timer) until n callers are queued.
func waitQueued(b *Bulkhead, n int) {
	for b.Waiting() < n {
		runtimeGosched()
	}
}

func goAcquire(ctx context.Context, b *Bulkhead) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- b.Acquire(ctx) }()
	return ch
}

func TestBulkheadLimit(t *testing.T) {
	b := newTestBulkhead(t, BulkheadSettings{MaxInFlight: 2, MaxWaiting: -1})
	if !b.TryAcquire() || !b.TryAcquire() {
		t.Fatal("TryAcquire under the limit failed")
	}
	if b.TryAcquire() {
		t.Fatal("TryAcquire over the limit succeeded")
	}
	if err := b.Acquire(context.Background()); !errors.Is(err, ErrBulkheadFull) {
		t.Fatalf("Acquire with no queue = %v; want ErrBulkheadFull", err)
	}
	b.Release()
	if got := b.InFlight(); got != 1 {
		t.Fatalf("InFlight = %d; want 1", got)
	}
	if err := b.Acquire(context.Background()); err != nil {
		t.Fatalf("Acquire after Release = %v", err)
	}
	b.Release()
	b.Release()
	defer func() {
		if recover() == nil {
			t.Error("Release without Acquire did not panic")
		}
	}()
	b.Release()
}

func TestBulkheadFIFOAndQueueFull(t *testing.T) {
	b := newTestBulkhead(t, BulkheadSettings{MaxInFlight: 1, MaxWaiting: 3})
	b.TryAcquire()
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Acquire(context.Background()); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			b.Release()
		}()
		waitQueued(b, i+1) // queue them in a known order
	}
	if err := b.Acquire(context.Background()); !errors.Is(err, ErrBulkheadFull) {
		t.Fatalf("Acquire with a full queue = %v; want ErrBulkheadFull", err)
	}
	if b.TryAcquire() {
		t.Fatal("TryAcquire jumped the queue")
	}
	b.Release()
	wg.Wait()
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Fatalf("grant order = %v; want [0 1 2]", order)
	}
	if b.InFlight() != 0 || b.Waiting() != 0 {
		t.Fatalf("InFlight, Waiting = %d, %d; want 0, 0", b.InFlight(), b.Waiting())
	}
}

func TestBulkheadMaxWait(t *testing.T) {
	fc := clocktest.New(time.Time{})
	b := newTestBulkhead(t, BulkheadSettings{MaxInFlight: 1, MaxWait: 5 * time.Second, Clock: fc})
	b.TryAcquire()
	ch := goAcquire(context.Background(), b)
	fc.WaitForTimers(1)
	fc.Advance(5 * time.Second)
	err := <-ch
	if !errors.Is(err, ErrBulkheadTimeout) || !errors.Is(err, ErrBulkheadFull) {
		t.Fatalf("Acquire past MaxWait = %v; want ErrBulkheadTimeout", err)
	}
	if b.Waiting() != 0 || b.InFlight() != 1 {
		t.Fatalf("after timeout Waiting, InFlight = %d, %d; want 0, 1", b.Waiting(), b.InFlight())
	}

	ctx, cancel := context.WithCancel(context.Background())
	ch = goAcquire(ctx, b)
	fc.WaitForTimers(1)
	cancel()
	if err := <-ch; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v", err)
	}
	b.Release()
	if b.InFlight() != 0 || b.Waiting() != 0 || fc.Pending() != 0 {
		t.Fatal("state left behind after cancel")
	}
}

func TestBulkheadSetLimit(t *testing.T) {
	b := newTestBulkhead(t, BulkheadSettings{MaxInFlight: 3})
	for range 3 {
		b.TryAcquire()
	}
	b.SetLimit(1) // shrink below in-flight
	if b.TryAcquire() {
		t.Fatal("admitted over a shrunk limit")
	}
	b.Release()
	b.Release()
	if b.TryAcquire() {
		t.Fatal("admitted at the shrunk limit")
	}
	b.Release()
	if !b.TryAcquire() {
		t.Fatal("refused under the shrunk limit")
	}
	ch1, ch2 := goAcquire(context.Background(), b), goAcquire(context.Background(), b)
	waitQueued(b, 2)
	b.SetLimit(3) // grow: both waiters go at once
	if err1, err2 := <-ch1, <-ch2; err1 != nil || err2 != nil {
		t.Fatalf("waiters after growing = %v, %v", err1, err2)
	}
	if got := b.InFlight(); got != 3 {
		t.Fatalf("InFlight = %d; want 3", got)
	}
	b.SetLimit(0) // no limit
	if !b.TryAcquire() || b.Limit() != 0 {
		t.Fatal("no-limit bulkhead refused")
	}
	for range 4 {
		b.Release()
	}
}

func TestBulkheadHammer(t *testing.T) {
	const limit = 4
	b := newTestBulkhead(t, BulkheadSettings{MaxInFlight: limit})
	var cur, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				ok := true
				if (g+i)%3 == 0 {
					ok = b.TryAcquire()
				} else if err := b.Acquire(context.Background()); err != nil {
					t.Error(err)
					return
				}
				if !ok {
					continue
				}
				n := cur.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				if i%50 == 0 && g == 0 {
					b.SetLimit(limit) // a live no-op change under load
				}
				cur.Add(-1)
				b.Release()
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Fatalf("peak in flight %d > limit %d", p, limit)
	}
	if b.InFlight() != 0 || b.Waiting() != 0 {
		t.Fatalf("InFlight, Waiting = %d, %d after the hammer", b.InFlight(), b.Waiting())
	}
}

func TestNewBulkheadRejectsNegative(t *testing.T) {
	if _, err := NewBulkhead(BulkheadSettings{MaxInFlight: -1}); err == nil {
		t.Error("negative MaxInFlight accepted")
	}
	if _, err := NewBulkhead(BulkheadSettings{MaxWait: -1}); err == nil {
		t.Error("negative MaxWait accepted")
	}
}
