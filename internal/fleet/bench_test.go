package fleet

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// What a request waits on Redis for, each call one round trip to a
// redis-server on this machine: a budget's reservation and settlement,
// and the read of a shared cached answer a replica missed locally.
func BenchmarkRequestPath(b *testing.B) {
	srv := redistest.Start(b)
	rdb, err := Dial(config.StateURL(srv.URL()), config.Fleet{})
	if err != nil {
		b.Fatal(err)
	}
	f := New(Options{Client: rdb, Timeout: time.Second, Log: slog.New(slog.DiscardHandler)})
	f.Start()
	b.Cleanup(func() { f.Close(); rdb.Close() })
	b.Run("reserve", func(b *testing.B) {
		l := f.Ledger("bench")
		b.ReportAllocs()
		for b.Loop() {
			now := time.Now()
			res, over := l.Reserve(now, 0.0001, 1e9, 0)
			if over != "" {
				b.Fatal("refused")
			}
			l.Settle(now, res, 0.0001) // queued for the sync round
		}
	})
	b.Run("cache_get_2KiB", func(b *testing.B) {
		k := [32]byte{9}
		f.rdb.Set(b.Context(), f.cacheKey(k), encodeCached(CachedAnswer{Body: bytes.Repeat([]byte("x"), 2048), ContentType: "application/json", Target: "p/m", Stored: time.Now()}), time.Minute)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := f.CacheGet(k); !ok {
				b.Fatal("miss")
			}
		}
	})
}
