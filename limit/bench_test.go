package limit

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func benchPacer(b *testing.B) *Pacer {
	// Limits high enough that every call is admitted: the uncontended path.
	p, err := NewPacer(PacerSettings{Limits: Limits{RequestsPerMinute: 1e12, TokensPerMinute: 1e15}})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkPacerAllow(b *testing.B) {
	p := benchPacer(b)
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := p.Allow(100); !ok {
			b.Fatal("refused")
		}
	}
}

func BenchmarkPacerAllowAt(b *testing.B) {
	p := benchPacer(b)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		p.AllowAt(now, 100)
	}
}

func BenchmarkPacerReserveSettle(b *testing.B) {
	p := benchPacer(b)
	b.ReportAllocs()
	for b.Loop() {
		r, _ := p.Reserve(1000)
		r.Settle(800)
	}
}

func BenchmarkPacerAllowParallel(b *testing.B) {
	p := benchPacer(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p.Allow(100)
		}
	})
}

func BenchmarkBulkheadTryAcquireRelease(b *testing.B) {
	bh, _ := NewBulkhead(BulkheadSettings{MaxInFlight: 1 << 20})
	b.ReportAllocs()
	for b.Loop() {
		if bh.TryAcquire() {
			bh.Release()
		}
	}
}

func BenchmarkBulkheadTryAcquireReleaseParallel(b *testing.B) {
	bh, _ := NewBulkhead(BulkheadSettings{MaxInFlight: 1 << 20})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if bh.TryAcquire() {
				bh.Release()
			}
		}
	})
}

// BenchmarkBulkheadAcquireFlowRelease is the uncontended path: a free slot
// and nobody queued, so the flow is never looked up.
func BenchmarkBulkheadAcquireFlowRelease(b *testing.B) {
	bh, _ := NewBulkhead(BulkheadSettings{MaxInFlight: 1 << 20})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := bh.AcquireFlow(ctx, "tenant-a", 2); err != nil {
			b.Fatal(err)
		}
		bh.Release()
	}
}

// BenchmarkBulkheadAcquireFlowContended runs eight goroutines per CPU, in
// four flows of weights 1 to 4, through two slots, so most calls queue.
func BenchmarkBulkheadAcquireFlowContended(b *testing.B) {
	bh, _ := NewBulkhead(BulkheadSettings{MaxInFlight: 2})
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) % 4
		flow, weight := fmt.Sprintf("tenant-%d", i), float64(i+1)
		for pb.Next() {
			if err := bh.AcquireFlow(ctx, flow, weight); err != nil {
				b.Error(err)
				return
			}
			bh.Release()
		}
	})
}

// BenchmarkFairQueuePushPop is the queue's own cost with eight flows
// backlogged: one waiter in and one out per op, without the scheduler.
func BenchmarkFairQueuePushPop(b *testing.B) {
	var q fairQueue
	flows := make([]string, 8)
	for i := range flows {
		flows[i] = fmt.Sprintf("tenant-%d", i)
		for range 4 {
			q.push(flows[i], float64(i+1))
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q.push(flows[i%len(flows)], float64(i%len(flows)+1))
		q.pop()
		i++
	}
}

func BenchmarkAdaptiveOnSuccess(b *testing.B) {
	a, _ := NewAdaptive(AdaptiveSettings{})
	b.ReportAllocs()
	for b.Loop() {
		a.OnSuccess()
	}
}
