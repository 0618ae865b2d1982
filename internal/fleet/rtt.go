package fleet

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The timeout of a call on the request path fits the machine: it is
// TimeoutFactor times the 99th percentile of the last rttWindow round
// trips to Redis, never below Options.Timeout (the floor) and never above
// TimeoutCeiling(floor). A loaded machine whose round trips reach the
// floor at times gets a longer timeout instead of a run of "unreachable";
// a Redis that hangs costs a request at most the ceiling.

// TimeoutFactor is how many times the recent 99th percentile of round
// trips a call on the request path may take.
const TimeoutFactor = 4

// rttWindow is how many recent round trips the percentile is taken over;
// rttEvery is how often (in round trips) it is taken again.
const (
	rttWindow = 512
	rttEvery  = 32
)

// TimeoutCeiling returns the most the adapted timeout grows to from floor.
func TimeoutCeiling(floor time.Duration) time.Duration { return max(5*floor, 100*time.Millisecond) }

// rtts keeps the recent round trips and the timeout derived from them. It
// is safe for concurrent use.
type rtts struct {
	floor, ceiling time.Duration
	timeout        atomic.Int64 // the current timeout, ns

	// mu guards ring, n.
	mu   sync.Mutex
	ring [rttWindow]time.Duration
	n    int // round trips recorded
}

// newRTTs returns round trips whose timeout starts at floor.
func newRTTs(floor time.Duration) *rtts {
	r := &rtts{floor: floor, ceiling: TimeoutCeiling(floor)}
	r.timeout.Store(int64(floor))
	return r
}

// current returns the timeout for a call on the request path.
func (r *rtts) current() time.Duration { return time.Duration(r.timeout.Load()) }

// record adds a round trip, and every rttEvery of them derives the
// timeout again.
func (r *rtts) record(d time.Duration) {
	r.mu.Lock()
	r.ring[r.n%rttWindow] = d
	r.n++
	if r.n%rttEvery != 0 {
		r.mu.Unlock()
		return
	}
	recent := slices.Clone(r.ring[:min(r.n, rttWindow)])
	r.mu.Unlock()
	slices.Sort(recent)
	p99 := recent[(len(recent)*99)/100]
	r.timeout.Store(int64(min(max(TimeoutFactor*p99, r.floor), r.ceiling)))
}

// rttHook measures each command's round trip (not pipelines: a sync
// round carries many commands, and no request waits for it). A call that
// timed out counts at what it waited: the round trip was at least that.
type rttHook struct{ f *Fleet }

func (h rttHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h rttHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		var ne net.Error
		if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			h.f.rtt.record(time.Since(start))
		}
		return err
	}
}

func (h rttHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
