package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func keyN(n int) KeyHash {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	return sha256.Sum256(b[:])
}

func entry(body string) Entry {
	return Entry{Body: []byte(body), ContentType: "application/json", Target: "openai/gpt-4.1"}
}

func newCache(t testing.TB, cfg Config) (*Cache, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	cfg.Clock = clk
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

func TestHitMiss(t *testing.T) {
	c, clk := newCache(t, Config{TTL: time.Minute})
	k := keyN(1)
	if _, st := c.Get(k); st != Miss {
		t.Fatalf("empty cache: %v", st)
	}
	stored := clk.Now()
	if !c.Put(k, entry(`{"a":1}`)) {
		t.Fatal("Put refused")
	}
	e, st := c.Get(k)
	if st != Hit || string(e.Body) != `{"a":1}` || e.Target != "openai/gpt-4.1" || e.ContentType != "application/json" || !e.Stored.Equal(stored) {
		t.Fatalf("Get = %+v, %v", e, st)
	}
	if _, st := c.Get(keyN(2)); st != Miss {
		t.Fatalf("other key: %v", st)
	}
	if s := c.Stats(); s.Hits != 1 || s.Misses != 2 || s.Entries != 1 || s.Bytes != int64(32+7+16+14+EntryOverhead) {
		t.Fatalf("stats %+v", s)
	}
}

func TestPutCopiesBody(t *testing.T) {
	c, _ := newCache(t, Config{})
	body := []byte(`{"a":1}`)
	c.Put(keyN(1), Entry{Body: body})
	body[2] = 'X'
	if e, _ := c.Get(keyN(1)); string(e.Body) != `{"a":1}` {
		t.Fatalf("stored body changed with the caller's: %s", e.Body)
	}
}

// TestTTLAndStale walks an entry through fresh, stale and gone, at the
// exact boundaries.
func TestTTLAndStale(t *testing.T) {
	const ttl, staleFor = time.Minute, 10 * time.Minute
	c, clk := newCache(t, Config{TTL: ttl, StaleFor: staleFor})
	k := keyN(1)
	c.Put(k, entry("x"))
	steps := []struct {
		advance   time.Duration
		want      Status
		wantStale bool
	}{
		{0, Hit, true},
		{ttl - time.Nanosecond, Hit, true},
		{time.Nanosecond, StaleAvailable, true}, // age == TTL: expired
		{staleFor - time.Nanosecond, StaleAvailable, true},
		{time.Nanosecond, Miss, false}, // age == TTL+StaleFor: gone
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		if _, st := c.Get(k); st != s.want {
			t.Fatalf("step %d: Get = %v, want %v", i, st, s.want)
		}
		if _, ok := c.GetStale(k); ok != s.wantStale {
			t.Fatalf("step %d: GetStale = %v, want %v", i, ok, s.wantStale)
		}
	}
	if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 || s.Expirations != 1 || s.StaleServes != 4 || s.Hits != 2 || s.Misses != 3 {
		t.Fatalf("stats %+v", s)
	}
}

func TestNoStaleByDefault(t *testing.T) {
	c, clk := newCache(t, Config{TTL: time.Minute})
	c.Put(keyN(1), entry("x"))
	clk.Advance(time.Minute)
	if _, st := c.Get(keyN(1)); st != Miss {
		t.Fatalf("Get = %v, want Miss", st)
	}
	if _, ok := c.GetStale(keyN(1)); ok {
		t.Fatal("GetStale served with StaleFor 0")
	}
}

func TestPutRefreshes(t *testing.T) {
	c, clk := newCache(t, Config{TTL: time.Minute})
	c.Put(keyN(1), entry("old"))
	clk.Advance(50 * time.Second)
	c.Put(keyN(1), entry("newer"))
	clk.Advance(50 * time.Second)
	if e, st := c.Get(keyN(1)); st != Hit || string(e.Body) != "newer" {
		t.Fatalf("Get = %s, %v", e.Body, st)
	}
	if s := c.Stats(); s.Entries != 1 || s.Bytes != int64(32+5+16+14+EntryOverhead) {
		t.Fatalf("stats %+v", s)
	}
}

func TestLRUOrder(t *testing.T) {
	c, _ := newCache(t, Config{MaxEntries: 3})
	for i := 1; i <= 3; i++ {
		c.Put(keyN(i), entry("x"))
	}
	c.Get(keyN(1))              // 1 is now the most recent: order 1, 3, 2
	c.Put(keyN(4), entry("x"))  // evicts 2
	c.GetStale(keyN(3))         // 3 most recent: 3, 4, 1
	c.Put(keyN(5), entry("x"))  // evicts 1
	c.Put(keyN(4), entry("xx")) // replace: 4, 5, 3
	c.Put(keyN(6), entry("x"))  // evicts 3
	for i, want := range []Status{Miss, Miss, Miss, Hit, Hit, Hit} {
		if _, st := c.Get(keyN(i + 1)); st != want {
			t.Errorf("key %d: %v, want %v", i+1, st, want)
		}
	}
	if s := c.Stats(); s.Evictions != 3 || s.Entries != 3 {
		t.Fatalf("stats %+v", s)
	}
}

func TestByteBound(t *testing.T) {
	per := int64(32 + 100 + EntryOverhead)
	c, _ := newCache(t, Config{MaxBytes: 10 * per, MaxEntryBytes: 2 * per})
	body := string(make([]byte, 100))
	for i := range 11 {
		c.Put(keyN(i), Entry{Body: []byte(body)})
	}
	if s := c.Stats(); s.Entries != 10 || s.Bytes != 10*per || s.Evictions != 1 {
		t.Fatalf("stats %+v", s)
	}
	// A double-size entry pushes out two.
	c.Put(keyN(100), Entry{Body: make([]byte, 100+per)})
	if s := c.Stats(); s.Entries != 9 || s.Bytes != 10*per || s.Evictions != 3 {
		t.Fatalf("stats %+v", s)
	}
	if c.Put(keyN(101), Entry{Body: make([]byte, 100+per+1)}) {
		t.Fatal("an entry over MaxEntryBytes was stored")
	}
	if s := c.Stats(); s.Rejected != 1 || s.Entries != 9 {
		t.Fatalf("stats %+v", s)
	}
}

// TestFlood stores 100k distinct entries of varied sizes: the bytes held
// never pass MaxBytes and the count never passes MaxEntries.
func TestFlood(t *testing.T) {
	const maxBytes = 1 << 20
	c, _ := newCache(t, Config{MaxBytes: maxBytes, MaxEntries: 5000})
	buf := make([]byte, 8192)
	for i := range 100_000 {
		c.Put(keyN(i), Entry{Body: buf[:(i*7919)%len(buf)], Target: "t"})
		if s := c.Stats(); s.Bytes > maxBytes || s.Entries > 5000 {
			t.Fatalf("after %d puts: %+v", i+1, s)
		}
	}
	s := c.Stats()
	if s.Entries == 0 || s.Evictions+s.Rejected == 0 {
		t.Fatalf("stats %+v", s)
	}
	// The most recent entry survives.
	if _, st := c.Get(keyN(99_999)); st != Hit {
		t.Fatalf("last entry: %v", st)
	}
}

func TestDelete(t *testing.T) {
	c, _ := newCache(t, Config{})
	c.Put(keyN(1), entry("x"))
	if !c.Delete(keyN(1)) || c.Delete(keyN(1)) {
		t.Fatal("Delete")
	}
	if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"MaxEntries":    {MaxEntries: -1},
		"MaxBytes":      {MaxBytes: -1},
		"MaxEntryBytes": {MaxEntryBytes: -1},
		"TTL":           {TTL: -1},
		"StaleFor":      {StaleFor: -1},
		"larger":        {MaxBytes: 1000, MaxEntryBytes: 1001},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if c.maxEntries != DefaultMaxEntries || c.maxBytes != DefaultMaxBytes || c.ttl != DefaultTTL ||
		c.maxEntry != DefaultMaxBytes/8 || c.MaxEntryBytes() != DefaultMaxBytes/8-EntryOverhead-32 {
		t.Fatalf("defaults: %+v", c)
	}
}

// TestHammer runs gets, puts, stale gets and deletes from many goroutines
// while time moves, then checks that the accounting adds up.
func TestHammer(t *testing.T) {
	const maxBytes = 64 << 10
	c, clk := newCache(t, Config{MaxEntries: 100, MaxBytes: maxBytes, TTL: time.Second, StaleFor: time.Second})
	var wg sync.WaitGroup
	var gets [8]int
	for g := range 8 {
		wg.Go(func() {
			for i := range 5000 {
				k := keyN((g*31 + i) % 300)
				switch i % 5 {
				case 0, 1:
					c.Put(k, Entry{Body: make([]byte, i%1000)})
				case 2:
					c.GetStale(k)
				case 3:
					c.Get(k)
					gets[g]++
				case 4:
					if i%50 == 4 {
						c.Delete(k)
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			clk.Advance(50 * time.Millisecond)
			if s := c.Stats(); s.Bytes > maxBytes || s.Entries > 100 {
				t.Errorf("over the bounds: %+v", s)
			}
		}
	})
	wg.Wait()
	s := c.Stats()
	total := 0
	for _, n := range gets {
		total += n
	}
	if s.Hits+s.Misses != uint64(total) {
		t.Fatalf("hits %d + misses %d != gets %d", s.Hits, s.Misses, total)
	}
	var bytes int64
	n := 0
	for it := c.list.back(); it != nil && it != &c.list.root; it = it.prev {
		bytes += it.size
		n++
	}
	if n != s.Entries || bytes != s.Bytes || n != len(c.items) {
		t.Fatalf("list has %d entries, %d bytes; stats %+v", n, bytes, s)
	}
}

func TestStatusString(t *testing.T) {
	for st, want := range map[Status]string{Hit: "hit", Miss: "miss", StaleAvailable: "stale", 9: "Status(?)"} {
		if st.String() != want {
			t.Errorf("%d: %q", st, st.String())
		}
	}
}

// TestRestoreKeepsAge: an answer kept elsewhere goes on ageing from when
// it was first stored; one too old even to serve stale is not kept.
func TestRestoreKeepsAge(t *testing.T) {
	const ttl, staleFor = time.Minute, time.Minute
	c, clk := newCache(t, Config{TTL: ttl, StaleFor: staleFor})
	clk.Advance(time.Hour)
	e := entry("x")
	e.Stored = clk.Now().Add(-30 * time.Second)
	if !c.Restore(keyN(1), e) {
		t.Fatal("Restore refused a fresh answer")
	}
	if got, st := c.Get(keyN(1)); st != Hit || !got.Stored.Equal(e.Stored) {
		t.Fatalf("Get = %+v, %v; want a hit stored %v", got, st, e.Stored)
	}
	clk.Advance(30 * time.Second)
	if _, st := c.Get(keyN(1)); st != StaleAvailable {
		t.Fatalf("a minute after it was first stored: %v, want stale", st)
	}
	e.Stored = clk.Now().Add(-ttl - staleFor)
	if c.Restore(keyN(2), e) {
		t.Fatal("Restore kept an answer too old to serve")
	}
	if _, ok := c.GetStale(keyN(2)); ok {
		t.Fatal("an answer too old to serve is served")
	}
}
