package requestlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// benchDir holds the million-request log, filled once per test binary.
var (
	benchDir  string
	benchOnce sync.Once
	benchLog  *Log
)

const benchRows = 1_000_000

// filled returns a log of a million requests over the last 24 hours.
func filled(b *testing.B) *Log {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "requestlog-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		l, err := Open(Options{Path: filepath.Join(dir, "requests.db"), MaxRows: benchRows,
			MaxAge: 48 * time.Hour, Clock: clocktest.New(t0.Add(24 * time.Hour))})
		if err != nil {
			b.Fatal(err)
		}
		batch := make([]Record, 0, 20000)
		for i := range benchRows {
			r := rec(i)
			r.Time = t0.Add(time.Duration(i) * (86400 * time.Second / benchRows))
			r.Client = []string{"web", "batch", "ops", "mobile", "studio", "eval", "cron", "admin"}[i%8]
			batch = append(batch, r)
			if len(batch) == cap(batch) {
				if err := l.insert(batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		l.db.Exec(`PRAGMA optimize=0x10002`) // what the writer does every 100,000 records
		benchLog = l
	})
	if benchLog == nil {
		b.Fatal("no log")
	}
	return benchLog
}

// BenchmarkQuery1M: filtered queries over a million stored requests, as
// GET /fusebox/requests sends them (a page of 100, newest first).
func BenchmarkQuery1M(b *testing.B) {
	l := filled(b)
	ctx := context.Background()
	hour := t0.Add(23 * time.Hour)
	for _, c := range []struct {
		name string
		f    Filter
	}{
		{"client", Filter{Client: "batch"}},
		{"client_last_hour", Filter{Client: "batch", Since: hour}},
		{"alias_outcome", Filter{Alias: "fast", Outcome: "error"}},
		{"outcome_broken_last_hour", Filter{Outcome: "broken", Since: hour}},
		{"client_outcome_since", Filter{Client: "web", Outcome: "error", Since: hour}},
		{"none", Filter{}},
		{"client_outcome_no_match", Filter{Client: "web", Outcome: "canceled"}},
		// The worst case: both frequent, never together (web is every
		// 8th request, fast every odd one): a scan of web's 125,000.
		{"client_alias_no_match", Filter{Client: "web", Alias: "fast"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := l.Query(ctx, c.f)
				if err != nil || (len(p.Requests) == 0) != strings.HasSuffix(c.name, "no_match") {
					b.Fatal(err, len(p.Requests))
				}
			}
		})
	}
}

// BenchmarkAdd: what a request pays to hand its record over (the writer
// runs beside; what it cannot take is dropped, not waited for).
func BenchmarkAdd(b *testing.B) {
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), "requests.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := rec(1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Add(r)
		}
	})
	b.StopTimer()
	l.Flush()
	b.ReportMetric(float64(l.Dropped())/float64(b.N), "dropped/op")
}

// BenchmarkWrite: how many records a second the writer commits, one
// op a record (queued 512 at a time, then flushed).
func BenchmarkWrite(b *testing.B) {
	l, err := Open(Options{Path: filepath.Join(b.TempDir(), "requests.db"), Queue: 1024})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := rec(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		l.Add(r)
		if i%512 == 511 {
			l.Flush()
		}
	}
	l.Flush()
	if l.Dropped() != 0 {
		b.Fatalf("%d dropped", l.Dropped())
	}
}
