package sim

import (
	"context"
	"math"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// z99 is the standard normal's 99th percentile: a log-normal with median m
// and log-spread sigma has its p99 at m·exp(z99·sigma).
const z99 = 2.3263478740408408

// spreadLocked draws a call's latency factor: log-normal with median 1 and
// p99 P99/Median, capped at 4·P99/Median; 1 when there is no spread.
// It draws from the Server's source only when there is a spread.
func (s *Server) spreadLocked() float64 {
	l := s.cfg.Latency
	if l.Median <= 0 || l.P99 <= l.Median {
		return 1
	}
	ratio := float64(l.P99) / float64(l.Median)
	sigma := math.Log(ratio) / z99
	return min(math.Exp(sigma*s.rng.NormFloat64()), 4*ratio)
}

// firstByte returns the wait before a call's answer: for a stream, before
// its headers and first chunk (TTFB, or Median when TTFB is 0); otherwise
// the whole call (Median). factor is the call's spread.
func (l Latency) firstByte(stream bool, factor float64) time.Duration {
	d := l.Median
	if stream && l.TTFB > 0 {
		d = l.TTFB
	}
	return time.Duration(float64(d) * factor)
}

// chunkGap returns the wait between stream chunks of n tokens; 0 when
// there is no token rate.
func (l Latency) chunkGap(n int) time.Duration {
	if l.TokensPerSecond <= 0 {
		return 0
	}
	return time.Duration(float64(n) / l.TokensPerSecond * float64(time.Second))
}

// sleep waits d on the Server's clock. It returns ctx.Err() when the client
// gives up first; a d of 0 or less returns at once.
func (s *Server) sleep(ctx context.Context, d time.Duration) error {
	return clock.Sleep(ctx, s.clk, d)
}
