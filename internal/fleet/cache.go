package fleet

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A shared cached answer is one string, {prefix}{cache:<key hash>} → the
// encoded answer (see encodeCached), expiring when it can no longer be
// served even stale. A replica reads it only when its own copy misses; the
// answers it caches go out with the next sync round. A cache is a cache:
// what a round fails to send is not sent again, and Redis's maxmemory
// policy may evict any of it.

// CachedAnswer is an answer in the fleet's response cache.
type CachedAnswer struct {
	Body        []byte
	ContentType string
	Target      string
	// Stored is when the replica that asked for it received it.
	Stored time.Time
}

// cachePuts are the answers cached here and not yet sent, bounded in
// bytes.
type cachePuts struct {
	mu      sync.Mutex
	pending map[string]cachePut // key in Redis → answer
	bytes   int
}

type cachePut struct {
	value []byte
	keep  time.Duration
}

// maxPendingCacheBytes bounds the answers waiting for a round: past it,
// new ones stay this replica's.
const maxPendingCacheBytes = 32 << 20

func (f *Fleet) cacheKey(k [32]byte) string {
	return f.o.Prefix + "{cache:" + hex.EncodeToString(k[:]) + "}"
}

// CacheGet returns the answer the fleet keeps under k, if any (and Redis
// answers within Timeout).
func (f *Fleet) CacheGet(k [32]byte) (CachedAnswer, bool) {
	ctx, cancel := f.ctx()
	defer cancel()
	v, err := f.rdb.Get(ctx, f.cacheKey(k)).Bytes()
	if !f.result("cache_get", err) {
		f.fallback("cache_get")
		return CachedAnswer{}, false
	}
	if errors.Is(err, redis.Nil) {
		return CachedAnswer{}, false
	}
	return decodeCached(v)
}

// CachePut shares an answer under k for keep (its TTL and stale window); it
// is sent with the next sync round.
func (f *Fleet) CachePut(k [32]byte, a CachedAnswer, keep time.Duration) {
	if keep <= 0 {
		return
	}
	key, v := f.cacheKey(k), encodeCached(a)
	f.cache.mu.Lock()
	defer f.cache.mu.Unlock()
	if old, ok := f.cache.pending[key]; ok {
		f.cache.bytes -= len(old.value)
	} else if f.cache.pending == nil {
		f.cache.pending = map[string]cachePut{}
	}
	if f.cache.bytes+len(v) > maxPendingCacheBytes {
		delete(f.cache.pending, key)
		return
	}
	f.cache.pending[key] = cachePut{value: v, keep: keep}
	f.cache.bytes += len(v)
}

// sendCache adds the pending answers to pipe; the round's result is all
// that is done with them.
func (f *Fleet) sendCache(pipe redis.Pipeliner, ctx context.Context) {
	f.cache.mu.Lock()
	batch := f.cache.pending
	f.cache.pending, f.cache.bytes = nil, 0
	f.cache.mu.Unlock()
	for k, p := range batch {
		pipe.Set(ctx, k, p.value, p.keep)
	}
}

// cachedVersion heads every encoded answer, so that a format change reads
// as a miss rather than as garbage.
const cachedVersion = 1

// encodeCached writes a: the version, Stored in Unix milliseconds (8 bytes),
// then ContentType and Target each with a uvarint length, then Body.
func encodeCached(a CachedAnswer) []byte {
	b := make([]byte, 0, 1+8+2*binary.MaxVarintLen16+len(a.ContentType)+len(a.Target)+len(a.Body))
	b = append(b, cachedVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(a.Stored.UnixMilli()))
	b = binary.AppendUvarint(b, uint64(len(a.ContentType)))
	b = append(b, a.ContentType...)
	b = binary.AppendUvarint(b, uint64(len(a.Target)))
	b = append(b, a.Target...)
	return append(b, a.Body...)
}

// decodeCached reads what encodeCached wrote, reporting false for anything
// else.
func decodeCached(b []byte) (CachedAnswer, bool) {
	if len(b) < 9 || b[0] != cachedVersion {
		return CachedAnswer{}, false
	}
	a := CachedAnswer{Stored: time.UnixMilli(int64(binary.BigEndian.Uint64(b[1:9])))}
	rest := b[9:]
	var ok bool
	if a.ContentType, rest, ok = lenPrefixed(rest); !ok {
		return CachedAnswer{}, false
	}
	if a.Target, rest, ok = lenPrefixed(rest); !ok || len(rest) == 0 {
		return CachedAnswer{}, false
	}
	a.Body = rest
	return a, true
}

func lenPrefixed(b []byte) (string, []byte, bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}
