package fleet

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/breaker"
)

// A breaker's consecutive failures are counted across the fleet in
// {prefix}{br:<target>}:c:<gen>: each sync round, a replica that saw a
// success sets it to the failures it saw after its last success (a
// success anywhere ends the fleet's run), and one that saw only failures
// adds them. A closed breaker whose fleet-wide run reaches
// ConsecutiveFailures is tripped, so three replicas that each see one
// failure of a dead target's three trip together instead of each waiting
// for its own three. The order across replicas is that of the rounds
// (within Sync), which is what "consecutive" can mean for a fleet. A new
// generation starts a new run.

// run is a shared breaker's count of consecutive failures, as this
// replica saw them since the last round.
type run struct {
	fails atomic.Int64 // failures since the last round
	tail  atomic.Int64 // failures since this replica's last success
	ok    atomic.Bool  // a success since the last round
}

// record counts one outcome.
func (r *run) record(failed bool) {
	if failed {
		r.fails.Add(1)
		r.tail.Add(1)
		return
	}
	r.tail.Store(0)
	r.ok.Store(true)
}

// reset forgets the outcomes of a state left.
func (r *run) reset() {
	r.fails.Store(0)
	r.tail.Store(0)
	r.ok.Store(false)
}

// runTTL is how long a generation's run is kept after its last change.
const runTTL = time.Hour

// exchangeRun adds to pipe this round's part of the fleet's run for
// generation gen; the function it returns, given whether the round's
// state read started a new generation, judges the run. nil when the
// breaker has no consecutive rule.
func (s *shared) exchangeRun(pipe redis.Pipeliner, ctx context.Context, gen uint64) func(newGen bool) {
	if s.cfg.ConsecutiveFailures <= 0 {
		return nil
	}
	key := s.key + ":c:" + strconv.FormatUint(gen, 10)
	ok, fails, tail := s.run.ok.Swap(false), s.run.fails.Swap(0), s.run.tail.Load()
	var n *redis.IntCmd
	var read *redis.StringCmd
	var cmds []redis.Cmder
	switch {
	case ok:
		cmds = append(cmds, pipe.Set(ctx, key, tail, runTTL))
	case fails > 0:
		n = pipe.IncrBy(ctx, key, fails)
		cmds = append(cmds, n, pipe.PExpire(ctx, key, runTTL))
	default:
		read = pipe.Get(ctx, key)
		cmds = append(cmds, read)
	}
	return func(newGen bool) {
		for _, c := range cmds {
			if c.Err() != nil && c.Err() != redis.Nil {
				// Not taken: sent again next round.
				s.run.fails.Add(fails)
				if ok {
					s.run.ok.Store(true)
				}
				return
			}
		}
		if newGen {
			return // a run of the past generation
		}
		v := tail
		switch {
		case n != nil:
			v = n.Val()
		case read != nil:
			v, _ = read.Int64()
		}
		s.judgeRun(v)
	}
}

// judgeRun trips a closed breaker whose fleet-wide run of consecutive
// failures reached its rule.
func (s *shared) judgeRun(n int64) {
	b := s.b.Load()
	if b == nil || n < int64(s.cfg.ConsecutiveFailures) || b.State() != breaker.StateClosed {
		return
	}
	b.Trip(breaker.ReasonExternal)
}
