package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// redisBackend keeps a fleet's keys in Redis: a hash of records by id, a
// hash of ids by name (names are unique across the fleet), a version
// counter and a "sealed" mark. Each change is one script that bumps the
// version and publishes it, so replicas refresh at once; a replica that
// missed the message sees the version move at its next poll. The keys
// share a hash tag, so the scripts run on Redis Cluster too.
type redisBackend struct {
	rdb                      redis.UniversalClient
	recs, names, ver, sealed string
	channel                  string
	// mu guards seen, the version of the last load.
	mu   sync.Mutex
	seen int64
}

func newRedisBackend(rdb redis.UniversalClient, prefix string) *redisBackend {
	k := prefix + "{keys}:"
	return &redisBackend{rdb: rdb, recs: k + "recs", names: k + "names", ver: k + "ver", sealed: k + "sealed",
		channel: prefix + "keys"}
}

var createScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('SET', KEYS[4], '1')
redis.call('PUBLISH', ARGV[4], redis.call('INCR', KEYS[3]))
return 1`)

var replaceScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 0 end
if cjson.decode(cur).rev ~= tonumber(ARGV[3]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[4], redis.call('INCR', KEYS[3]))
return 1`)

var removeScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 0 end
local name = cjson.decode(cur).name
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HGET', KEYS[2], name) == ARGV[1] then redis.call('HDEL', KEYS[2], name) end
redis.call('SET', KEYS[4], '1')
redis.call('PUBLISH', ARGV[2], redis.call('INCR', KEYS[3]))
return 1`)

func (b *redisBackend) keys() []string { return []string{b.recs, b.names, b.ver, b.sealed} }

func (b *redisBackend) load(ctx context.Context) ([]Record, bool, error) {
	var ver *redis.StringCmd
	var all *redis.MapStringStringCmd
	var sealed *redis.IntCmd
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		ver, all, sealed = p.Get(ctx, b.ver), p.HGetAll(ctx, b.recs), p.Exists(ctx, b.sealed)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, false, fmt.Errorf("keys: redis: %w", err)
	}
	recs := make([]Record, 0, len(all.Val()))
	for id, v := range all.Val() {
		var r Record
		if json.Unmarshal([]byte(v), &r) != nil || r.ID != id {
			continue // not a record this version wrote: ignored, not fatal
		}
		recs = append(recs, r)
	}
	n, _ := ver.Int64()
	b.mu.Lock()
	b.seen = n
	b.mu.Unlock()
	return recs, sealed.Val() > 0, nil
}

// stale reports whether the keys changed since the last load.
func (b *redisBackend) stale(ctx context.Context) bool {
	n, err := b.rdb.Get(ctx, b.ver).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return n != b.seen
}

func (b *redisBackend) subscribe(ctx context.Context) *redis.PubSub {
	return b.rdb.Subscribe(ctx, b.channel)
}

func (b *redisBackend) create(ctx context.Context, r Record) error {
	data, _ := json.Marshal(r)
	n, err := createScript.Run(ctx, b.rdb, b.keys(), r.ID, r.Name, data, b.channel).Int()
	switch {
	case err != nil:
		return fmt.Errorf("keys: redis: %w", err)
	case n == 0:
		return ErrNameTaken
	}
	return nil
}

func (b *redisBackend) replace(ctx context.Context, r Record) error {
	data, _ := json.Marshal(r)
	n, err := replaceScript.Run(ctx, b.rdb, b.keys(), r.ID, data, r.Rev-1, b.channel).Int()
	switch {
	case err != nil:
		return fmt.Errorf("keys: redis: %w", err)
	case n == 0:
		return ErrNotFound
	case n < 0:
		return ErrConflict
	}
	return nil
}

func (b *redisBackend) remove(ctx context.Context, id string) error {
	n, err := removeScript.Run(ctx, b.rdb, b.keys(), id, b.channel).Int()
	switch {
	case err != nil:
		return fmt.Errorf("keys: redis: %w", err)
	case n == 0:
		return ErrNotFound
	}
	return nil
}
