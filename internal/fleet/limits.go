package fleet

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/limit"
)

// Rate limits are held across the fleet by leasing: each replica paces
// its calls locally (no Redis call per request) at an equal share of each
// limit, the limit divided by the replicas alive. Every replica writes a
// heartbeat into {prefix}replicas (a sorted set by time) each sync and
// counts the others alive within ReplicaTimeout; when the count changes,
// every shared pacer's limits are set to the new share. With traffic
// spread evenly (a load balancer's round robin), the fleet's total is the
// limit; with uneven traffic a busy replica is held to its share while a
// quiet one leaves part of its own unused. Without Redis the last count
// holds.

// ReplicaTimeout is how long a replica that stopped writing its heartbeat
// still counts as alive.
const ReplicaTimeout = 3 * time.Second

// leasedPacers are the pacers paced at a share of a fleet-wide limit.
type leasedPacers struct {
	mu       sync.Mutex
	pacers   map[string]leased
	replicas int // alive, as last counted; 1 until then
}

// leased is one shared pacer and the fleet-wide limits it shares.
type leased struct {
	p    *limit.Pacer
	full limit.Limits
}

// ShareLimits paces p at this replica's share of the fleet-wide limits
// full, under name (a target's or a client's, unique among them); a name
// shared again (a reload) replaces the old.
func (f *Fleet) ShareLimits(name string, p *limit.Pacer, full limit.Limits) {
	f.limits.mu.Lock()
	f.limits.pacers[name] = leased{p: p, full: full}
	n := f.limits.replicas
	f.limits.mu.Unlock()
	p.SetLimits(shareOf(full, n))
}

// UnshareLimits stops sharing the pacer under name.
func (f *Fleet) UnshareLimits(name string) {
	f.limits.mu.Lock()
	delete(f.limits.pacers, name)
	f.limits.mu.Unlock()
}

// Replicas returns the replicas alive, as last counted.
func (f *Fleet) Replicas() int {
	f.limits.mu.Lock()
	defer f.limits.mu.Unlock()
	return f.limits.replicas
}

// shareOf returns one replica's share of l among n.
func shareOf(l limit.Limits, n int) limit.Limits {
	if n <= 1 {
		return l
	}
	d := float64(n)
	s := limit.Limits{RequestsPerMinute: l.RequestsPerMinute / d, TokensPerMinute: l.TokensPerMinute / d}
	if l.RequestBurst > 0 {
		s.RequestBurst = max(int(math.Ceil(float64(l.RequestBurst)/d)), 1)
	}
	if l.TokenBurst > 0 {
		s.TokenBurst = max(int(math.Ceil(float64(l.TokenBurst)/d)), 1)
	}
	return s
}

// heartbeat adds to pipe this replica's heartbeat and the count of the
// replicas alive; the function it returns applies the count.
func (f *Fleet) heartbeat(pipe redis.Pipeliner, ctx context.Context, now time.Time) func() {
	key := f.o.Prefix + "replicas"
	ms := now.UnixMilli()
	pipe.ZAdd(ctx, key, redis.Z{Score: float64(ms), Member: f.id})
	pipe.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(ms-2*ReplicaTimeout.Milliseconds(), 10))
	pipe.PExpire(ctx, key, 2*ReplicaTimeout)
	count := pipe.ZCount(ctx, key, strconv.FormatInt(ms-ReplicaTimeout.Milliseconds(), 10), "+inf")
	return func() {
		if count.Err() == nil {
			f.setReplicas(int(max(count.Val(), 1)))
		}
	}
}

// setReplicas sets the count of replicas alive, re-pacing every shared
// pacer when it changed.
func (f *Fleet) setReplicas(n int) {
	f.limits.mu.Lock()
	if n == f.limits.replicas {
		f.limits.mu.Unlock()
		return
	}
	f.limits.replicas = n
	ps := make([]leased, 0, len(f.limits.pacers))
	for _, l := range f.limits.pacers {
		ps = append(ps, l)
	}
	f.limits.mu.Unlock()
	for _, l := range ps {
		l.p.SetLimits(shareOf(l.full, n))
	}
}

// leave removes this replica's heartbeat, so the others raise their
// shares at once rather than after ReplicaTimeout.
func (f *Fleet) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), f.bgTimeout())
	defer cancel()
	f.rdb.ZRem(ctx, f.o.Prefix+"replicas", f.id)
}
