package breaker

import (
	"context"
	"testing"
	"time"
)

// Configurations benchmarked: the default (consecutive failures only), a
// time window with a failure rate, and a count window with a failure rate.
var benchConfigs = []struct {
	name string
	cfg  Config
}{
	{"consecutive", Config{ConsecutiveFailures: 5}},
	{"time-window", Config{Window: 10 * time.Second, FailureRate: 0.5, MinCalls: 20, ConsecutiveFailures: 5}},
	{"count-window", Config{WindowCalls: 100, FailureRate: 0.5, MinCalls: 20, ConsecutiveFailures: 5}},
}

func mustNew(b *testing.B, cfg Config) *Breaker {
	br, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return br
}

// BenchmarkClosedSuccess is one successful call through a closed breaker,
// with the two-step API (what a proxy uses).
func BenchmarkClosedSuccess(b *testing.B) {
	for _, c := range benchConfigs {
		b.Run(c.name, func(b *testing.B) {
			br := mustNew(b, c.cfg)
			b.ReportAllocs()
			for b.Loop() {
				p, err := br.Allow()
				if err != nil {
					b.Fatal(err)
				}
				p.Success()
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			br := mustNew(b, c.cfg)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p, err := br.Allow()
					if err != nil {
						b.Error(err)
						return
					}
					p.Success()
				}
			})
		})
	}
}

// BenchmarkExecute is one successful call through Execute.
func BenchmarkExecute(b *testing.B) {
	br := mustNew(b, benchConfigs[0].cfg)
	ctx := context.Background()
	fn := func(context.Context) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := br.Execute(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRefused is a call refused by an open breaker.
func BenchmarkRefused(b *testing.B) {
	for _, c := range benchConfigs {
		cfg := c.cfg
		cfg.OpenDuration = time.Hour
		b.Run(c.name, func(b *testing.B) {
			br := openBreaker(b, cfg)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := br.Allow(); err == nil {
					b.Fatal("admitted")
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			br := openBreaker(b, cfg)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := br.Allow(); err == nil {
						b.Error("admitted")
						return
					}
				}
			})
		})
	}
}

func openBreaker(b *testing.B, cfg Config) *Breaker {
	br := mustNew(b, cfg)
	for br.State() == StateClosed {
		p, _ := br.Allow()
		p.Failure()
	}
	return br
}

// BenchmarkClosedFailureTimeWindow is a failed call that the time window
// must evaluate (the rules never fire: MinCalls is out of reach).
func BenchmarkClosedFailureTimeWindow(b *testing.B) {
	br := mustNew(b, Config{Window: 10 * time.Second, FailureRate: 0.5, MinCalls: 1 << 40})
	b.ReportAllocs()
	for b.Loop() {
		p, _ := br.Allow()
		p.Failure()
	}
}
