package fleet

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Work that outlives a request (a long-running job, a Batch API batch) is
// owned by one replica at a time through a lease in Redis:
// {prefix}{<kind>:<id>}:owner, a hash of the owner (a replica's ID), its
// epoch and the instant its lease ends (until, in ms of the replicas'
// clocks). The owner renews the lease with the sync round, every third of
// Options.Lease. When it stops (killed, hung, cut off from Redis), the
// lease ends and another replica adopts the work: Adopt moves the owner
// and increments the epoch, in one script, so exactly one adopter wins.
//
// The epoch is the fencing token: every write of the work's shared state
// (the record at {prefix}{<kind>:<id>}, the right to settle its cost) is
// a script that checks the owner and epoch it was made under, so a
// replica that comes back after its work was adopted has its writes
// refused, learns that it lost the work and yields it. The leases whose
// end has passed are found through {prefix}leases:<kind>, a sorted set by
// until: a hint, the hash decides.

// Work is one kind of leased work ("job", "batch") on this replica. It is
// safe for concurrent use.
type Work struct {
	f    *Fleet
	kind string

	// mu guards held and renewed.
	mu sync.Mutex
	// held are the ids this replica owns, with their epoch; 0 while Redis
	// has not yet confirmed the lease (it is made with the next round).
	held    map[string]int64
	renewed time.Time // the last round that renewed the leases
}

// Work returns this replica's leases on work of kind ("job", "batch"),
// the same Work for the same kind.
func (f *Fleet) Work(kind string) *Work {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.works == nil {
		f.works = map[string]*Work{}
	}
	w := f.works[kind]
	if w == nil {
		w = &Work{f: f, kind: kind, held: map[string]int64{}}
		f.works[kind] = w
	}
	return w
}

// Lease returns how long a lease outlives its owner's last renewal.
func (w *Work) Lease() time.Duration { return w.f.o.Lease }

// DataKey is where the work's shared state is kept: {prefix}{<kind>:<id>}.
func (w *Work) DataKey(id string) string { return w.f.o.Prefix + "{" + w.kind + ":" + id + "}" }

func (w *Work) leaseKey(id string) string { return w.DataKey(id) + ":owner" }
func (w *Work) indexKey() string          { return w.f.o.Prefix + "leases:" + w.kind }

// workTTL bounds how long a lease hash outlives its last renewal, so that
// the epoch of finished work stays known (and adoption refused) as long
// as its record can be.
const workTTL = 30 * 24 * time.Hour

// holdScript: KEYS lease; ARGV owner, epoch (0: not yet known), until,
// ttl. A missing lease is made (epoch 1, or past the one given); this
// owner's is renewed; another's, or an older epoch, is 0: the work is lost.
var holdScript = redis.NewScript(`
local o = redis.call('HGET', KEYS[1], 'owner')
if not o then
  local e = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
  if e <= tonumber(ARGV[2]) then
    e = tonumber(ARGV[2]) + 1
    redis.call('HSET', KEYS[1], 'epoch', e)
  end
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'until', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return e
end
local e = tonumber(redis.call('HGET', KEYS[1], 'epoch'))
if o ~= ARGV[1] or (ARGV[2] ~= '0' and tonumber(ARGV[2]) ~= e) then
  return 0
end
redis.call('HSET', KEYS[1], 'until', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return e
`)

// adoptScript: KEYS lease, data; ARGV owner, now, until, ttl, known epoch.
// It returns {new epoch, new epoch} when adopted; {0, the holder's epoch}
// when the lease is live (or the work finished); {-1, 0} when the shared
// state is gone.
var adoptScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then
  return {-1, 0}
end
local o = redis.call('HGET', KEYS[1], 'owner')
local e = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if o then
  local u = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
  if redis.call('HEXISTS', KEYS[1], 'done') == 1 or u > tonumber(ARGV[2]) then
    return {0, e}
  end
end
e = math.max(e, tonumber(ARGV[5])) + 1
redis.call('HSET', KEYS[1], 'epoch', e, 'owner', ARGV[1], 'until', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {e, e}
`)

// fencedPutScript: KEYS lease, data; ARGV owner, epoch (0: any of this
// owner's), value, ttl. 1 when written; 0 when the work is another's.
var fencedPutScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
if ARGV[2] ~= '0' and tonumber(redis.call('HGET', KEYS[1], 'epoch')) ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
return 1
`)

// settleWorkScript: KEYS lease; ARGV owner, epoch. 1 when the cost is this
// epoch's to settle (first asked, or asked again by the same epoch); 0
// when it was settled by another, or the work is another's.
var settleWorkScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[2] then
  return 0
end
local s = redis.call('HGET', KEYS[1], 'settled')
if s and s ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], 'settled', ARGV[2])
return 1
`)

// finishWorkScript: KEYS lease; ARGV owner, epoch. The work is over: no one
// adopts it.
var finishWorkScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and redis.call('HGET', KEYS[1], 'epoch') == ARGV[2] then
  redis.call('HSET', KEYS[1], 'done', '1')
end
return 1
`)

// ErrLost is the answer to a write of work this replica no longer owns:
// its lease ended and another replica adopted it.
var ErrLost = errors.New("fleet: the work was adopted by another replica")

// until is the end of a lease renewed now, in ms.
func (w *Work) until(now time.Time) string {
	return strconv.FormatInt(now.Add(w.f.o.Lease).UnixMilli(), 10)
}

// Claim makes this replica the owner of new work id and returns its
// epoch; 0 when Redis did not answer in time (the lease is then made
// with the next sync round).
func (w *Work) Claim(id string) int64 {
	w.mu.Lock()
	w.held[id] = 0
	w.mu.Unlock()
	ctx, cancel := w.f.ctx()
	defer cancel()
	e, err := w.hold(ctx, w.f.rdb, id, 0).Int64()
	if !w.f.result(w.kind+"_claim", err) {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.held[id]; !ok {
		return 0
	}
	if e == 0 {
		delete(w.held, id)
		return 0
	}
	w.held[id] = e
	return e
}

// hold runs holdScript for id on c, and indexes the lease by its end.
func (w *Work) hold(ctx context.Context, c redis.Scripter, id string, epoch int64) *redis.Cmd {
	until := w.until(w.f.clk.Now())
	cmd := holdScript.Eval(ctx, c, []string{w.leaseKey(id)}, w.f.id, epoch, until, workTTL.Milliseconds())
	if p, ok := c.(redis.Pipeliner); ok {
		p.ZAdd(ctx, w.indexKey(), redis.Z{Score: float64(w.f.clk.Now().Add(w.f.o.Lease).UnixMilli()), Member: id})
	} else {
		w.f.rdb.ZAdd(ctx, w.indexKey(), redis.Z{Score: float64(w.f.clk.Now().Add(w.f.o.Lease).UnixMilli()), Member: id})
	}
	return cmd
}

// Holds reports whether this replica owns id, and under which epoch (0:
// not yet confirmed by Redis).
func (w *Work) Holds(id string) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.held[id]
	return e, ok
}

// Adoption is what Adopt came to.
type Adoption struct {
	// Epoch is this replica's epoch for the work when Adopted.
	Epoch int64
	// Adopted: the work is this replica's now.
	Adopted bool
	// Holder is the epoch of the lease when not adopted: the owner's, live
	// (or the finished work's); 0 when Redis did not answer or the work's
	// shared state is gone.
	Holder int64
	// Gone: the fleet has no shared state for the work any more.
	Gone bool
}

// Adopt takes work id over when its owner's lease has ended (known is the
// epoch this replica last knew it under, 0 for none): exactly one of the
// replicas that ask at once gets it. The work is then held here.
func (w *Work) Adopt(id string, known int64) Adoption {
	ctx, cancel := w.f.ctx()
	defer cancel()
	now := w.f.clk.Now()
	v, err := adoptScript.Run(ctx, w.f.rdb, []string{w.leaseKey(id), w.DataKey(id)},
		w.f.id, now.UnixMilli(), w.until(now), workTTL.Milliseconds(), known).Int64Slice()
	if !w.f.result(w.kind+"_adopt", err) || len(v) != 2 {
		return Adoption{}
	}
	switch {
	case v[0] == -1:
		w.f.rdb.ZRem(ctx, w.indexKey(), id)
		return Adoption{Gone: true}
	case v[0] == 0:
		return Adoption{Holder: v[1]}
	}
	w.mu.Lock()
	w.held[id] = v[0]
	w.mu.Unlock()
	w.f.rdb.ZAdd(ctx, w.indexKey(), redis.Z{Score: float64(now.Add(w.f.o.Lease).UnixMilli()), Member: id})
	return Adoption{Epoch: v[0], Adopted: true}
}

// Orphans returns up to n ids of work whose lease has ended and that no
// replica renewed since: candidates for Adopt.
func (w *Work) Orphans(n int) []string {
	ctx, cancel := w.f.ctx()
	defer cancel()
	now := strconv.FormatInt(w.f.clk.Now().UnixMilli(), 10)
	ids, err := w.f.rdb.ZRangeByScore(ctx, w.indexKey(), &redis.ZRangeBy{Min: "-inf", Max: "(" + now, Count: int64(n)}).Result()
	if !w.f.result(w.kind+"_orphans", err) {
		return nil
	}
	out := ids[:0]
	w.mu.Lock()
	for _, id := range ids {
		if _, mine := w.held[id]; !mine {
			out = append(out, id)
		}
	}
	w.mu.Unlock()
	return out
}

// Put writes the work's shared state (at DataKey) for ttl, fenced by this
// replica's lease: ErrLost when the work is another's (it is then no
// longer held here). It waits for Redis up to Timeout; other errors are
// Redis's.
func (w *Work) Put(id string, value []byte, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.f.o.Timeout+sendTime(len(value)))
	defer cancel()
	epoch, held := w.Holds(id)
	if !held {
		return ErrLost
	}
	var put *redis.Cmd
	_, err := w.f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if epoch == 0 {
			w.hold(ctx, p, id, 0)
		}
		put = fencedPutScript.Eval(ctx, p, []string{w.leaseKey(id), w.DataKey(id)}, w.f.id, epoch, value, ttl.Milliseconds())
		return nil
	})
	if !w.f.result(w.kind+"_put", err) {
		return err
	}
	if n, _ := put.Int64(); n == 0 {
		w.lose(id)
		return ErrLost
	}
	return nil
}

// putFenced adds to pipe the fenced write of id's shared state; the
// function returned reads its answer, marking the work lost when refused.
// An id this replica does not hold is not written.
func (w *Work) putFenced(pipe redis.Pipeliner, ctx context.Context, id string, value []byte, ttl time.Duration) func() error {
	epoch, held := w.Holds(id)
	if !held {
		return func() error { return ErrLost }
	}
	var hold *redis.Cmd
	if epoch == 0 { // its claim did not reach Redis: made now
		hold = w.hold(ctx, pipe, id, 0)
	}
	put := fencedPutScript.Eval(ctx, pipe, []string{w.leaseKey(id), w.DataKey(id)}, w.f.id, epoch, value, ttl.Milliseconds())
	return func() error {
		if hold != nil {
			if e, err := hold.Int64(); err == nil && e > 0 {
				w.confirm(id, e)
			}
		}
		n, err := put.Int64()
		if err != nil {
			return err
		}
		if n == 0 {
			w.lose(id)
			return ErrLost
		}
		return nil
	}
}

// Settle reports whether the cost of work id is this replica's to settle:
// true once for the fleet (to the epoch that asks first, and again to the
// same epoch), false when another settled it or the work is another's
// (then no longer held here). An error is Redis's: ask again later.
func (w *Work) Settle(id string) (bool, error) {
	epoch, held := w.Holds(id)
	if !held {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.f.bgTimeout())
	defer cancel()
	if epoch == 0 {
		e, err := w.hold(ctx, w.f.rdb, id, 0).Int64()
		if !w.f.result(w.kind+"_settle", err) {
			return false, err
		}
		if e == 0 {
			w.lose(id)
			return false, nil
		}
		epoch = w.confirm(id, e)
	}
	n, err := settleWorkScript.Run(ctx, w.f.rdb, []string{w.leaseKey(id)}, w.f.id, epoch).Int64()
	if !w.f.result(w.kind+"_settle", err) {
		return false, err
	}
	if n == 0 {
		if _, still := w.recheck(ctx, id, epoch); !still {
			w.lose(id)
		}
		return false, nil
	}
	return true, nil
}

// recheck reports whether this replica still owns id under epoch.
func (w *Work) recheck(ctx context.Context, id string, epoch int64) (int64, bool) {
	v, err := w.f.rdb.HMGet(ctx, w.leaseKey(id), "owner", "epoch").Result()
	if err != nil || len(v) != 2 {
		return epoch, true // cannot say: keep it until a round does
	}
	o, _ := v[0].(string)
	e, _ := v[1].(string)
	return epoch, o == w.f.id && e == strconv.FormatInt(epoch, 10)
}

// confirm records the epoch Redis gave a lease held as 0.
func (w *Work) confirm(id string, e int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.held[id]; ok {
		w.held[id] = e
	}
	return e
}

// Finish ends work id here: its lease is marked done (no replica adopts
// it) and no longer renewed.
func (w *Work) Finish(id string) {
	epoch, held := w.Holds(id)
	w.mu.Lock()
	delete(w.held, id)
	w.mu.Unlock()
	if !held {
		return
	}
	ctx, cancel := w.f.ctx()
	defer cancel()
	_, err := w.f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		finishWorkScript.Eval(ctx, p, []string{w.leaseKey(id)}, w.f.id, epoch)
		p.ZRem(ctx, w.indexKey(), id)
		return nil
	})
	w.f.result(w.kind+"_finish", err)
}

// Release stops holding id without finishing it: its lease runs out, and
// another replica (or this one, later) adopts it.
func (w *Work) Release(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.held, id)
}

// lose forgets id: another replica owns it.
func (w *Work) lose(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.held, id)
}

// renew adds to pipe the renewal of every lease held, once a third of the
// lease has passed since the last; the function returned reads the
// answers: a lease another replica took is lost.
func (w *Work) renew(pipe redis.Pipeliner, ctx context.Context, now time.Time) func() {
	w.mu.Lock()
	if now.Sub(w.renewed) < w.f.o.Lease/3 || len(w.held) == 0 {
		w.mu.Unlock()
		return func() {}
	}
	w.renewed = now
	held := make(map[string]int64, len(w.held))
	for id, e := range w.held {
		held[id] = e
	}
	w.mu.Unlock()
	cmds := make(map[string]*redis.Cmd, len(held))
	for id, e := range held {
		cmds[id] = w.hold(ctx, pipe, id, e)
	}
	return func() {
		for id, c := range cmds {
			e, err := c.Int64()
			switch {
			case err != nil:
				w.mu.Lock()
				w.renewed = time.Time{} // the next round tries again
				w.mu.Unlock()
			case e == 0:
				w.lose(id)
			default:
				w.confirm(id, e)
			}
		}
	}
}

// renewWork adds the renewal of every kind of work's leases to pipe.
func (f *Fleet) renewWork(pipe redis.Pipeliner, ctx context.Context, now time.Time) []func() {
	f.mu.Lock()
	ws := make([]*Work, 0, len(f.works))
	for _, w := range f.works {
		ws = append(ws, w)
	}
	f.mu.Unlock()
	reads := make([]func(), 0, len(ws))
	for _, w := range ws {
		reads = append(reads, w.renew(pipe, ctx, now))
	}
	return reads
}
