package requestlog

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchLog != nil {
		benchLog.Close()
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func open(t *testing.T, o Options) *Log {
	t.Helper()
	if o.Path == "" {
		o.Path = filepath.Join(t.TempDir(), "requests.db")
	}
	if o.Clock == nil {
		o.Clock = clocktest.New(t0.Add(time.Hour))
	}
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func rec(i int) Record {
	return Record{Time: t0.Add(time.Duration(i) * time.Second), RequestID: "req_" + strconv.Itoa(i),
		Client: []string{"web", "batch", "ops"}[i%3], Alias: []string{"smart", "fast"}[i%2],
		Outcome: []string{"ok", "ok", "ok", "error", "broken"}[i%5], Status: 200, Path: "/v1/chat/completions",
		Tried: "primary/gpt-4.1: outage (503), secondary/deepseek-chat: ok", Target: "secondary/deepseek-chat",
		Attempts: 2, LatencyMS: 120.5, TTFBMS: 40, TokensIn: 10, TokensOut: 20, CostUSD: 0.0001,
		IdempotencyKey: "idem-" + strconv.Itoa(i), TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"}
}

// Filters select what they say, newest first, and a cursor walks every
// match exactly once.
func TestQueryFiltersAndPages(t *testing.T) {
	l := open(t, Options{})
	for i := range 300 {
		l.Add(rec(i))
	}
	l.Flush()
	ctx := context.Background()
	p, err := l.Query(ctx, Filter{Client: "batch", Outcome: "error", Since: t0.Add(100 * time.Second), Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 100; i < 300; i++ {
		if i%3 == 1 && i%5 == 3 {
			want++
		}
	}
	if len(p.Requests) != want || want == 0 {
		t.Fatalf("%d requests, want %d", len(p.Requests), want)
	}
	for i, r := range p.Requests {
		if r.Client != "batch" || r.Outcome != "error" || r.Time.Before(t0.Add(100*time.Second)) {
			t.Fatalf("request %d does not match: %+v", i, r)
		}
		if i > 0 && !r.Time.Before(p.Requests[i-1].Time) {
			t.Fatalf("not newest first at %d", i)
		}
	}
	if r := p.Requests[0]; r.Tried == "" || r.TraceID == "" || r.IdempotencyKey == "" || r.TTFBMS != 40 || r.RequestBody != "" {
		t.Fatalf("fields lost: %+v", r)
	}
	seen := map[string]bool{}
	f := Filter{Alias: "fast", Until: t0.Add(250 * time.Second), Limit: 7}
	for pages := 0; ; pages++ {
		p, err := l.Query(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Requests {
			if seen[r.RequestID] || r.Alias != "fast" || !r.Time.Before(t0.Add(250*time.Second)) {
				t.Fatalf("page %d: %+v (seen %v)", pages, r, seen[r.RequestID])
			}
			seen[r.RequestID] = true
		}
		if p.Next == "" {
			break
		}
		f.Cursor = p.Next
	}
	if len(seen) != 125 {
		t.Fatalf("the pages held %d requests, want 125", len(seen))
	}
	if _, err := l.Query(ctx, Filter{Cursor: "x'; DROP TABLE requests"}); err != ErrCursor {
		t.Fatalf("bad cursor: %v", err)
	}
}

// The log keeps at most max_rows, the newest.
func TestBoundedByRows(t *testing.T) {
	l := open(t, Options{MaxRows: 100})
	for i := range 2000 {
		l.Add(rec(i))
		if i%300 == 0 {
			l.Flush()
		}
	}
	l.Flush()
	st, _ := l.Stats()
	if st.Rows > 100 {
		t.Fatalf("%d rows kept, bound 100", st.Rows)
	}
	p, _ := l.Query(context.Background(), Filter{Limit: 1})
	if p.Requests[0].RequestID != "req_1999" {
		t.Fatalf("newest kept is %s", p.Requests[0].RequestID)
	}
}

// Requests older than max_age go, on the log's clock.
func TestBoundedByAge(t *testing.T) {
	clk := clocktest.New(t0.Add(time.Hour))
	l := open(t, Options{MaxAge: 30 * time.Minute, Clock: clk})
	for i := range 3600 { // t0 .. t0+1h
		l.Add(rec(i))
	}
	l.Flush()
	p, _ := l.Query(context.Background(), Filter{Limit: 1000, Until: t0.Add(30 * time.Minute)})
	if len(p.Requests) != 0 {
		t.Fatalf("%d requests older than max_age kept", len(p.Requests))
	}
	p, _ = l.Query(context.Background(), Filter{Limit: 1000, Since: t0.Add(59 * time.Minute)})
	if len(p.Requests) != 60 {
		t.Fatalf("%d of the last minute's requests kept, want 60", len(p.Requests))
	}
}

// With max_bytes, the pages in use stay within it and the file near it,
// however much is written.
func TestBoundedByBytes(t *testing.T) {
	const bound = 512 << 10
	path := filepath.Join(t.TempDir(), "requests.db")
	l := open(t, Options{Path: path, MaxBytes: bound})
	long := strings.Repeat("primary/gpt-4.1: outage (503), ", 60) // ~2 KB a row
	for i := range 6000 {
		r := rec(i)
		r.Tried = long
		l.Add(r)
		if i%500 == 0 {
			l.Flush()
		}
	}
	l.Flush()
	st, err := l.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.UsedBytes > bound || st.Rows == 0 {
		t.Fatalf("%d bytes in use (%d rows), bound %d", st.UsedBytes, st.Rows, bound)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() > bound+bound/2 {
		t.Fatalf("file %d bytes, bound %d: %v", fi.Size(), bound, err)
	}
}

// Add never waits: with a tiny queue and many writers, every record is
// either written or counted as dropped.
func TestAddNeverBlocksAndCountsDrops(t *testing.T) {
	l := open(t, Options{Queue: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				l.Add(rec(g*1000 + i))
			}
		}()
	}
	wg.Wait()
	l.Flush()
	st, _ := l.Stats()
	if got := l.Written() + l.Dropped(); got != 4000 || uint64(st.Rows) != l.Written() {
		t.Fatalf("written %d + dropped %d = %d, rows %d; want 4000 and rows = written", l.Written(), l.Dropped(), got, st.Rows)
	}
}

// Bodies are kept only with Content; then clipped.
func TestContentOnlyWhenOn(t *testing.T) {
	for _, on := range []bool{false, true} {
		l := open(t, Options{Content: on})
		r := rec(1)
		r.RequestBody, r.ResponseBody = `{"messages":[{"content":"secret prompt"}]}`, strings.Repeat("a", 100<<10)
		l.Add(r)
		l.Flush()
		p, _ := l.Query(context.Background(), Filter{})
		got := p.Requests[0]
		if on != (got.RequestBody != "") || (on && len(got.ResponseBody) != maxContent) {
			t.Fatalf("content %v: request body %q, answer %d bytes", on, got.RequestBody, len(got.ResponseBody))
		}
	}
}

// Close writes what is queued.
func TestCloseWritesTheQueue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.db")
	l, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		l.Add(rec(i))
	}
	l.Close()
	l2 := open(t, Options{Path: path})
	if st, _ := l2.Stats(); st.Rows != 50 {
		t.Fatalf("%d rows after close and reopen, want 50", st.Rows)
	}
}
