package fleet

import (
	"context"
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
// index as it is next written.

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

// boundIdem indexes the record key, just stored with an answer of size
// bytes for ttl, under client, and deletes the client's oldest records
// past its bounds.
func (f *Fleet) boundIdem(ctx context.Context, client, key string, size int, ttl time.Duration) {
	if f.o.IdemRecords <= 0 && f.o.IdemClientBytes <= 0 {
		return
	}
	idx := f.o.Prefix + "{idemc:" + client + "}"
	gone, err := boundScript.Run(ctx, f.rdb, []string{idx + ":i", idx + ":s"}, key, size,
		f.clk.Now().UnixMilli(), ttl.Milliseconds(), f.o.IdemRecords, f.o.IdemClientBytes).StringSlice()
	if !f.result("idempotency_bound", err) || len(gone) == 0 {
		return
	}
	pipe := f.rdb.Pipeline() // the records are in other slots than the index
	for _, k := range gone {
		pipe.Del(ctx, k)
	}
	_, err = pipe.Exec(ctx)
	f.result("idempotency_bound", err)
}
