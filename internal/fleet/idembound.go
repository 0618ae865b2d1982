package fleet

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Each client's idempotency records are indexed in
// {prefix}{idemc:<client>}:i (a sorted set of record keys by the time they
// were stored) and :s (their sizes, and _total), so that one client
// sending endless keys fills its own bound in Redis, not the memory every
// other client's records and every breaker's state share. Past
// Options.IdemRecords or IdemClientBytes the client's oldest records are
// deleted. Entries whose records expired by their TTL are dropped from the
// index as it is next written. The indexing and the deletions go with the
// sync rounds, off the request path.

// boundScript: KEYS index, sizes; ARGV record key, its bytes, now (unix
// ms), the records' TTL (ms), max records (0: none), max bytes (0: none).
// Returns the record keys evicted.
var boundScript = redis.NewScript(`
local now, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local function drop(m)
  local b = tonumber(redis.call('HGET', KEYS[2], m) or '0')
  redis.call('HINCRBY', KEYS[2], '_total', -b)
  redis.call('HDEL', KEYS[2], m)
  redis.call('ZREM', KEYS[1], m)
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - ttl)) do drop(m) end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then drop(ARGV[1]) end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], '_total', ARGV[2])
local maxn, maxb = tonumber(ARGV[5]), tonumber(ARGV[6])
local gone = {}
while true do
  local n = redis.call('ZCARD', KEYS[1])
  local b = tonumber(redis.call('HGET', KEYS[2], '_total') or '0')
  if n <= 1 or not ((maxn > 0 and n > maxn) or (maxb > 0 and b > maxb)) then break end
  local m = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  drop(m)
  table.insert(gone, m)
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return gone
`)

// idemBounds are the records stored since the last sync round, to index
// under their clients, and the records the last round evicted, to delete.
// Both wait for the round: no request waits on a bound.
type idemBounds struct {
	mu      sync.Mutex
	pending []idemStored
	evict   []string
}

// idemStored is a record stored for client, of size bytes for ttl.
type idemStored struct {
	client, key string
	size        int
	ttl         time.Duration
}

// maxPendingBounds bounds the records waiting for a round (while Redis is
// down); past it the oldest go unindexed, and expire by their TTL.
const maxPendingBounds = 100_000

// boundIdem queues the record key, just stored with an answer of size
// bytes for ttl, to be indexed under client by the next round.
func (f *Fleet) boundIdem(client, key string, size int, ttl time.Duration) {
	if f.o.IdemRecords <= 0 && f.o.IdemClientBytes <= 0 {
		return
	}
	f.bounds.mu.Lock()
	if len(f.bounds.pending) >= maxPendingBounds {
		f.bounds.pending = f.bounds.pending[1:]
	}
	f.bounds.pending = append(f.bounds.pending, idemStored{client, key, size, ttl})
	f.bounds.mu.Unlock()
}

// sendBounds adds to pipe the indexing of the records stored since the
// last round; the function it returns deletes, at once, the records that
// indexing evicted (in other slots than their index, so in a pipeline of
// their own), and keeps for the next round what Redis did not take.
func (f *Fleet) sendBounds(pipe redis.Pipeliner, ctx context.Context, now time.Time) func() {
	f.bounds.mu.Lock()
	stored, evict := f.bounds.pending, f.bounds.evict
	f.bounds.pending, f.bounds.evict = nil, nil
	f.bounds.mu.Unlock()
	cmds := make([]*redis.Cmd, len(stored))
	for i, st := range stored {
		idx := f.o.Prefix + "{idemc:" + st.client + "}"
		cmds[i] = boundScript.Eval(ctx, pipe, []string{idx + ":i", idx + ":s"}, st.key, st.size,
			now.UnixMilli(), st.ttl.Milliseconds(), f.o.IdemRecords, f.o.IdemClientBytes)
	}
	return func() {
		var again []idemStored
		for i, c := range cmds {
			keys, err := c.StringSlice()
			if err != nil && err != redis.Nil {
				again = append(again, stored[i])
				continue
			}
			evict = append(evict, keys...)
		}
		evict = f.deleteEvicted(ctx, evict)
		f.bounds.mu.Lock()
		f.bounds.pending = append(again, f.bounds.pending...)
		f.bounds.evict = append(evict, f.bounds.evict...)
		f.bounds.mu.Unlock()
	}
}

// deleteEvicted deletes the records keys and returns those Redis did not.
func (f *Fleet) deleteEvicted(ctx context.Context, keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	pipe := f.rdb.Pipeline()
	dels := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		dels[i] = pipe.Del(ctx, k)
	}
	_, err := pipe.Exec(ctx)
	if f.result("idempotency_bound", err) {
		return nil
	}
	var left []string
	for i, c := range dels {
		if c.Err() != nil {
			left = append(left, keys[i])
		}
	}
	return left
}
