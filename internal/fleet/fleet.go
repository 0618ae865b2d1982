// Package fleet shares a gateway's state with the other replicas of its
// fleet through Redis, so that several replicas behind a load balancer
// behave as one gateway: a breaker tripped on one is open on all, a
// client's budget is one figure (Ledger), and an Idempotency-Key resent to
// any replica gets the answer kept for it (ClaimIdem); rate limits are
// paced at each replica's share (ShareLimits); a conversation's target
// follows it to any replica (Recall, Remember).
//
// Nothing on the request path waits on Redis past Options.Timeout, and
// most of it does not wait at all: a breaker's outcomes are published in
// batches off the request path, and its trips arrive by pub/sub (with a
// periodic read as the safety net). When Redis is down or slow, each
// replica goes on with its own state, says so once (log, Up, OnHealth),
// and merges what it recorded meanwhile when Redis is back.
package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/clock"
)

// Options configures a Fleet.
type Options struct {
	// Client reaches Redis (a single node, Sentinel or Cluster).
	Client redis.UniversalClient
	// Prefix starts every key and channel name. Default: "fusebox:".
	Prefix string
	// Timeout is the least a Redis call made on the request path (a
	// budget reservation, a half-open probe permit) may take: the bound
	// adapts above it to TimeoutFactor times the 99th percentile of recent
	// round trips, up to TimeoutCeiling(Timeout). Default: 20ms.
	Timeout time.Duration
	// Sync is how often outcomes are published and the fleet's state
	// read. Default: 50ms.
	Sync time.Duration
	// Lease is how long an idempotency key being run stays claimed after
	// its replica stopped renewing it (it died). Default: DefaultLease.
	Lease time.Duration
	// IdemRecords and IdemClientBytes bound the idempotency records kept
	// in Redis per client key, in count and in bytes of answers; past
	// either the client's oldest go, never another client's. 0: no bound
	// but the records' TTL.
	IdemRecords     int
	IdemClientBytes int
	// Clock is the time source. nil: the system clock.
	Clock clock.Clock
	// Log receives the fleet's few logs (Redis lost, Redis back). nil:
	// slog.Default().
	Log *slog.Logger
	// OnHealth, if set, is told each time Redis is lost (false) or back
	// (true).
	OnHealth func(up bool)
	// OnError, if set, is told of each failed Redis call, by operation.
	OnError func(op string)
	// OnFallback, if set, is told of each decision made on local state
	// because Redis could not be asked, by operation.
	OnFallback func(op string)
}

// Fleet is one replica's link to the fleet's shared state. It is safe for
// concurrent use.
type Fleet struct {
	o   Options
	clk clock.Clock
	rdb redis.UniversalClient
	// id names this replica in the fleet.
	id string

	up    atomic.Bool
	reach reach // the run of failed calls that decides up
	// unloaded says Redis may lack requestScripts: at the start, and
	// each time Redis is back (it may have restarted).
	unloaded atomic.Bool
	rtt      *rtts // recent round trips, and the request path's timeout

	mu       sync.Mutex // guards breakers, ledgers and works
	breakers map[string]*shared
	ledgers  map[string]*Ledger
	works    map[string]*Work // leased work, by kind
	leases   idemLeases
	limits   leasedPacers
	sessions sessions
	cache    cachePuts
	bounds   idemBounds
	jobs     jobPuts

	// publish carries local breaker transitions to the sync loop.
	publish chan *shared
	stop    chan struct{}
	wg      sync.WaitGroup
	closed  atomic.Bool
}

// quietRedis sends go-redis's own logs (a dial refused, again and again
// while Redis is down) to debug: the fleet says once per episode what
// matters, with the metric and /readyz.
var quietRedis sync.Once

// redisLog is go-redis's logger: slog at debug level.
type redisLog struct{}

func (redisLog) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// New returns a Fleet on o.Client; Start begins its work.
func New(o Options) *Fleet {
	quietRedis.Do(func() { redis.SetLogger(redisLog{}) })
	if o.Prefix == "" {
		o.Prefix = "fusebox:"
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Millisecond
	}
	if o.Sync <= 0 {
		o.Sync = 50 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	var id [6]byte
	rand.Read(id[:])
	f := &Fleet{o: o, clk: clock.Or(o.Clock), rdb: o.Client, id: hex.EncodeToString(id[:]),
		breakers: map[string]*shared{}, ledgers: map[string]*Ledger{},
		leases:   idemLeases{keys: map[string]struct{}{}},
		limits:   leasedPacers{pacers: map[string]leased{}, replicas: 1},
		sessions: sessions{pending: map[string]string{}},
		publish:  make(chan *shared, 256), stop: make(chan struct{})}
	f.up.Store(true)
	f.unloaded.Store(true)
	f.rtt = newRTTs(o.Timeout)
	if o.Client != nil {
		o.Client.AddHook(rttHook{f})
	}
	return f
}

// Start begins publishing and reading the fleet's state, until Close.
func (f *Fleet) Start() {
	ps := f.rdb.Subscribe(context.Background(), f.channel())
	f.wg.Add(2)
	go f.listen(ps)
	go f.loop()
}

// Close stops the fleet's work and waits for it; it does not close the
// Redis client.
func (f *Fleet) Close() {
	if f.closed.Swap(true) {
		return
	}
	close(f.stop)
	f.wg.Wait()
	f.sync() // what is settled and counted goes out before the replica does
	f.leave()
}

// Up reports whether the last call to Redis succeeded.
func (f *Fleet) Up() bool { return f.up.Load() }

// ID returns this replica's name in the fleet.
func (f *Fleet) ID() string { return f.id }

// newEpoch returns a name for a record's new life.
func (f *Fleet) newEpoch() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// channel is where breaker transitions are announced.
func (f *Fleet) channel() string { return f.o.Prefix + "breakers" }

// ctx returns a context for one call on the request path.
func (f *Fleet) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), f.rtt.current())
}

// patientCtx returns a context for a call on the request path whose local
// fallback the client would see as an error, not as a cost: a stored
// response not found on the replica asked for it. While Redis answers, it
// may take the ceiling of the adapted timeout, so one slow round trip on a
// healthy Redis loses nothing; once Redis is lost, the usual timeout.
func (f *Fleet) patientCtx() (context.Context, context.CancelFunc) {
	if !f.up.Load() {
		return f.ctx()
	}
	return context.WithTimeout(context.Background(), f.rtt.ceiling)
}

// Timeout returns the current bound of a Redis call on the request path:
// Options.Timeout, or more when recent round trips call for it.
func (f *Fleet) Timeout() time.Duration { return f.rtt.current() }

// bgTimeout bounds a call of the sync loop, which no request waits for.
func (f *Fleet) bgTimeout() time.Duration { return max(10*f.o.Timeout, 200*time.Millisecond) }

// result records how a call to Redis went for op: failures for long
// enough (reach) mark Redis lost (said once per episode), a success after
// that marks it back.
func (f *Fleet) result(op string, err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		f.reach.ok()
		if !f.up.Load() && f.up.CompareAndSwap(false, true) {
			f.unloaded.Store(true)
			f.o.Log.Info("fleet state: Redis is back; shared state resumes", "op", op)
			if f.o.OnHealth != nil {
				f.o.OnHealth(true)
			}
		}
		return true
	}
	if f.o.OnError != nil {
		f.o.OnError(op)
	}
	if f.reach.failed(f.clk.Now()) && f.up.CompareAndSwap(true, false) {
		f.o.Log.Warn("fleet state: Redis unreachable; each replica goes on with its own state", "op", op, "err", err.Error())
		if f.o.OnHealth != nil {
			f.o.OnHealth(false)
		}
	}
	return false
}

// fallback counts a decision made locally for want of Redis.
func (f *Fleet) fallback(op string) {
	if f.o.OnFallback != nil {
		f.o.OnFallback(op)
	}
}

// loop publishes outcomes and transitions and reads the fleet's state,
// every Sync and at once for a transition.
func (f *Fleet) loop() {
	defer f.wg.Done()
	f.load()
	t := f.clk.NewTimer(f.o.Sync)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case s := <-f.publish:
			f.announce(s)
		case <-t.C():
			f.load()
			f.sync()
			t.Reset(f.o.Sync)
		}
	}
}

// listen applies the transitions other replicas announce.
func (f *Fleet) listen(ps *redis.PubSub) {
	defer f.wg.Done()
	defer ps.Close()
	ch := ps.Channel()
	for {
		select {
		case <-f.stop:
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			if a, ok := parseAnnouncement(m.Payload); ok {
				f.mu.Lock()
				s := f.breakers[a.name]
				f.mu.Unlock()
				if s != nil {
					s.apply(a.state)
				}
			}
		}
	}
}

// sync runs one round of the loop: every breaker's and ledger's pending
// figures out, the fleet's in, in one pipeline.
func (f *Fleet) sync() {
	f.mu.Lock()
	brs := make([]*shared, 0, len(f.breakers))
	for _, s := range f.breakers {
		brs = append(brs, s)
	}
	ls := make([]*Ledger, 0, len(f.ledgers))
	for _, l := range f.ledgers {
		ls = append(ls, l)
	}
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), f.bgTimeout())
	defer cancel()
	now := f.clk.Now()
	pipe := f.rdb.Pipeline()
	reads := make([]func(), 0, 2*len(brs)+len(ls))
	for _, s := range brs {
		if read := s.queue(pipe, ctx, now); read != nil {
			reads = append(reads, read) // a transition Redis did not take
		}
		reads = append(reads, s.exchange(pipe, ctx, now))
	}
	for _, l := range ls {
		reads = append(reads, l.exchange(pipe, ctx, now))
	}
	f.renewLeases(pipe, ctx)
	reads = append(reads, f.renewWork(pipe, ctx, now)...)
	f.sendCache(pipe, ctx)
	reads = append(reads, f.sendSessions(pipe, ctx), f.heartbeat(pipe, ctx, now), f.sendBounds(pipe, ctx, now), f.sendJobs(pipe, ctx))
	_, err := pipe.Exec(ctx)
	f.result("sync", err)
	for _, read := range reads {
		read() // each reads its own answers, and keeps what was not taken
	}
}
