package fleet

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// An answer one replica caches is found by another after a sync round,
// with its age, and lives in Redis only as long as it may be served.
func TestSharedCache(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false)
	a, b := fs[0], fs[1]
	k := [32]byte{7}
	if _, ok := b.CacheGet(k); ok {
		t.Fatal("a hit in an empty cache")
	}
	stored := time.UnixMilli(1_700_000_000_123)
	a.CachePut(k, CachedAnswer{Body: []byte(`{"id":"c"}`), ContentType: "application/json", Target: "p/m", Stored: stored}, time.Minute)
	if _, ok := b.CacheGet(k); ok {
		t.Fatal("found before the round that sends it")
	}
	a.sync()
	got, ok := b.CacheGet(k)
	if !ok || string(got.Body) != `{"id":"c"}` || got.ContentType != "application/json" || got.Target != "p/m" || !got.Stored.Equal(stored) {
		t.Fatalf("after the round: %v %+v", ok, got)
	}
	if ttl := a.rdb.PTTL(t.Context(), a.cacheKey(k)).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("kept for %v, want at most the minute asked", ttl)
	}
	// Anything else under the key (another version, a truncated value,
	// lengths that lie) is a miss, never a panic or a wrong answer.
	for _, v := range []string{"", "x", "\x02aaaaaaaabody", "\x01\x00\x00\x00\x00\x00\x00\x00\x01\xff\xff\xff\xff\x0fjson", "\x01\x00\x00\x00\x00\x00\x00\x00\x01\x01j\x01t"} {
		a.rdb.Set(t.Context(), a.cacheKey(k), v, time.Minute)
		if got, ok := b.CacheGet(k); ok {
			t.Errorf("%q read as %+v", v, got)
		}
	}
}

// Answers waiting for a round are bounded in bytes; a replaced one frees
// its share.
func TestSharedCachePendingBound(t *testing.T) {
	f := New(Options{Client: nil})
	body := bytes.Repeat([]byte("x"), 1<<20)
	for i := range 40 {
		f.CachePut([32]byte{byte(i)}, CachedAnswer{Body: body}, time.Minute)
	}
	if f.cache.bytes > maxPendingCacheBytes || len(f.cache.pending) >= 40 {
		t.Fatalf("%d answers, %d bytes pending; bound %d", len(f.cache.pending), f.cache.bytes, maxPendingCacheBytes)
	}
	n, held := len(f.cache.pending), f.cache.bytes
	f.CachePut([32]byte{0}, CachedAnswer{Body: body[:10]}, time.Minute)
	if len(f.cache.pending) != n || f.cache.bytes >= held {
		t.Errorf("replacing an answer: %d answers, %d bytes (was %d, %d)", len(f.cache.pending), f.cache.bytes, n, held)
	}
	f.CachePut([32]byte{99}, CachedAnswer{Body: body}, 0)
	if _, ok := f.cache.pending[f.cacheKey([32]byte{99})]; ok {
		t.Error("an answer with nothing to keep it for was queued")
	}
}

func FuzzDecodeCached(f *testing.F) {
	f.Add(encodeCached(CachedAnswer{Body: []byte("{}"), ContentType: "application/json", Target: "p/m", Stored: time.UnixMilli(5)}))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := decodeCached(b)
		if !ok {
			return
		}
		again, ok := decodeCached(encodeCached(a))
		if !ok || !bytes.Equal(again.Body, a.Body) || again.ContentType != a.ContentType || again.Target != a.Target || !again.Stored.Equal(a.Stored) {
			t.Fatalf("decoded %+v from %q; encoded and read again: %+v", a, b, again)
		}
	})
}

// A hung Redis is a miss within the timeout, counted as a fallback, and
// what waits to be sent is dropped by the failed round, not kept forever.
func TestSharedCacheRedisHung(t *testing.T) {
	srv := redistest.Start(t)
	var fallbacks atomic.Int32
	f := linked(t, srv, 1, false, func(o *Options) {
		o.Timeout = 20 * time.Millisecond
		o.OnFallback = func(op string) {
			if op == "cache_get" {
				fallbacks.Add(1)
			}
		}
	})[0]
	f.CachePut([32]byte{1}, CachedAnswer{Body: []byte("{}")}, time.Minute)
	srv.Pause()
	defer srv.Resume()
	// One failed call is not Redis lost (reach.go).
	if _, ok := f.CacheGet([32]byte{1}); ok || fallbacks.Load() != 1 || !f.Up() {
		t.Fatalf("a hung Redis: hit %v, %d fallbacks, up %v", ok, fallbacks.Load(), f.Up())
	}
	f.sync()
	if len(f.cache.pending) != 0 || f.cache.bytes != 0 {
		t.Errorf("after a failed round: %d answers, %d bytes pending", len(f.cache.pending), f.cache.bytes)
	}
}
