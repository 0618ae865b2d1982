package limit

import (
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

func BenchmarkAdaptiveOnSuccess(b *testing.B) {
	a, _ := NewAdaptive(AdaptiveSettings{})
	b.ReportAllocs()
	for b.Loop() {
		a.OnSuccess()
	}
}
