package cache

import (
	"errors"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxEntries = 10_000
	DefaultMaxBytes   = 64 << 20
	DefaultTTL        = 5 * time.Minute
)

// EntryOverhead is what each entry counts against MaxBytes beyond its key,
// body, content type and target name: an estimate of the map slot, the list
// links and the Entry itself.
const EntryOverhead = 256

// Config sets a Cache's bounds and lifetimes. Its zero value is usable.
type Config struct {
	// MaxEntries bounds the number of entries; 0 means DefaultMaxEntries.
	MaxEntries int
	// MaxBytes bounds the accounted size of all entries (each counts
	// len(key) + len(Body) + len(ContentType) + len(Target) +
	// EntryOverhead); 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxEntryBytes is the largest accounted size of one entry; Put
	// refuses larger ones, so one answer cannot flush the cache. 0 means
	// MaxBytes/8.
	MaxEntryBytes int64
	// TTL is how long an entry is fresh (a Get hit) after it was stored;
	// 0 means DefaultTTL.
	TTL time.Duration
	// StaleFor is how long past TTL GetStale may still return an entry,
	// for stale-if-error; 0 means never.
	StaleFor time.Duration
	// Clock is the source of time; nil means the system clock.
	Clock clock.Clock
}

// Entry is a stored answer.
type Entry struct {
	// Body is the complete OpenAI chat.completion JSON. The cache keeps
	// its own copy on Put; the Body that Get returns is shared and must not
	// be modified.
	Body []byte
	// ContentType is the answer's Content-Type header.
	ContentType string
	// Target is the name of the target that answered.
	Target string
	// Stored is when Put stored the entry, by the cache's clock; Put
	// ignores the value it is given.
	Stored time.Time
}

// Age returns how old e is at now.
func (e Entry) Age(now time.Time) time.Duration { return now.Sub(e.Stored) }

// Status is what Get found.
type Status uint8

const (
	// Miss means no entry, or only one too old to serve even stale.
	Miss Status = iota
	// Hit means a fresh entry, returned.
	Hit
	// StaleAvailable means an entry past its TTL but within StaleFor:
	// Get does not return it, GetStale would.
	StaleAvailable
)

// String returns "miss", "hit" or "stale", as the x-fusebox-cache header
// says them.
func (s Status) String() string {
	switch s {
	case Miss:
		return "miss"
	case Hit:
		return "hit"
	case StaleAvailable:
		return "stale"
	}
	return "Status(?)"
}

// Cache is an in-memory LRU cache of complete answers, bounded by entries
// and bytes, with a TTL and a stale-if-error window. It is safe for
// concurrent use; every operation is O(1) under one short-held mutex.
type Cache struct {
	clk        clock.Clock
	maxEntries int
	maxBytes   int64
	maxEntry   int64
	ttl        time.Duration
	staleFor   time.Duration

	// mu guards items, list, bytes and stats.
	mu    sync.Mutex
	items map[KeyHash]*item
	list  lru
	bytes int64
	stats Stats
}

// New returns a Cache configured by cfg, or an error naming a field that
// is negative or inconsistent.
func New(cfg Config) (*Cache, error) {
	switch {
	case cfg.MaxEntries < 0:
		return nil, errors.New("cache: MaxEntries is negative")
	case cfg.MaxBytes < 0:
		return nil, errors.New("cache: MaxBytes is negative")
	case cfg.MaxEntryBytes < 0:
		return nil, errors.New("cache: MaxEntryBytes is negative")
	case cfg.TTL < 0:
		return nil, errors.New("cache: TTL is negative")
	case cfg.StaleFor < 0:
		return nil, errors.New("cache: StaleFor is negative")
	}
	if cfg.MaxEntries == 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxEntryBytes == 0 {
		cfg.MaxEntryBytes = cfg.MaxBytes / 8
	}
	if cfg.MaxEntryBytes > cfg.MaxBytes {
		return nil, errors.New("cache: MaxEntryBytes is larger than MaxBytes")
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	return &Cache{
		clk:        clock.Or(cfg.Clock),
		maxEntries: cfg.MaxEntries,
		maxBytes:   cfg.MaxBytes,
		maxEntry:   cfg.MaxEntryBytes,
		ttl:        cfg.TTL,
		staleFor:   cfg.StaleFor,
		items:      make(map[KeyHash]*item),
	}, nil
}

// MaxEntryBytes returns the largest body (less the overhead) the cache
// accepts, the limit to give an Assembler so that an answer too large to
// store is not accumulated.
func (c *Cache) MaxEntryBytes() int64 {
	return max(0, c.maxEntry-EntryOverhead-int64(len(KeyHash{})))
}

// Get returns the fresh entry for key with Hit (and marks it recently
// used). Otherwise it returns a zero Entry with StaleAvailable, when an
// entry past its TTL is still within StaleFor, or Miss.
func (c *Cache) Get(key KeyHash) (Entry, Status) {
	now := c.clk.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	it, age := c.lookupLocked(key, now)
	switch {
	case it == nil:
		c.stats.Misses++
		return Entry{}, Miss
	case age < c.ttl:
		c.stats.Hits++
		c.list.moveToFront(it)
		return it.entry, Hit
	}
	c.stats.Misses++
	return Entry{}, StaleAvailable
}

// GetStale returns the entry for key if it is no older than TTL + StaleFor
// (fresh or stale), for serving when no target can answer; it counts a
// stale serve. It reports false when there is none.
func (c *Cache) GetStale(key KeyHash) (Entry, bool) {
	now := c.clk.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	it, _ := c.lookupLocked(key, now)
	if it == nil {
		return Entry{}, false
	}
	c.stats.StaleServes++
	c.list.moveToFront(it)
	return it.entry, true
}

// lookupLocked returns the item for key and its age at now, removing it
// and returning nil when it is older than TTL + StaleFor: an entry is
// fresh while its age is below TTL, and servable stale while its age is
// below TTL + StaleFor.
func (c *Cache) lookupLocked(key KeyHash, now time.Time) (*item, time.Duration) {
	it := c.items[key]
	if it == nil {
		return nil, 0
	}
	age := now.Sub(it.entry.Stored)
	if age >= c.ttl+c.staleFor {
		c.removeLocked(it)
		c.stats.Expirations++
		return nil, 0
	}
	return it, age
}

// Put stores e under key, replacing any entry there, and evicts the least
// recently used entries until the cache is within its bounds. It reports
// false, storing nothing, when the entry is larger than MaxEntryBytes.
//
// The caller guarantees that e is a complete, successful answer: a 200
// chat.completion, never an error, a refusal of service or a stream that
// broke off. Put copies e.Body and sets e.Stored to the cache's clock.
func (c *Cache) Put(key KeyHash, e Entry) bool {
	return c.put(key, e, c.clk.Now())
}

// Restore stores e under key as Put does, but keeps e.Stored: for an
// answer another store kept (the fleet's), whose age runs from when it was
// first stored. An entry already too old to serve even stale is not
// stored.
func (c *Cache) Restore(key KeyHash, e Entry) bool {
	if e.Age(c.clk.Now()) >= c.ttl+c.staleFor {
		return false
	}
	return c.put(key, e, e.Stored)
}

func (c *Cache) put(key KeyHash, e Entry, stored time.Time) bool {
	size := int64(len(key)+len(e.Body)+len(e.ContentType)+len(e.Target)) + EntryOverhead
	if size > c.maxEntry {
		c.mu.Lock()
		c.stats.Rejected++
		c.mu.Unlock()
		return false
	}
	e.Body = append([]byte(nil), e.Body...)
	e.Stored = stored
	it := &item{key: key, entry: e, size: size}

	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.items[key]; old != nil {
		c.removeLocked(old)
	}
	c.items[key] = it
	c.list.pushFront(it)
	c.bytes += size
	for len(c.items) > c.maxEntries || c.bytes > c.maxBytes {
		c.removeLocked(c.list.back())
		c.stats.Evictions++
	}
	return true
}

// Delete removes the entry for key, reporting whether there was one.
func (c *Cache) Delete(key KeyHash) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.items[key]
	if it != nil {
		c.removeLocked(it)
	}
	return it != nil
}

func (c *Cache) removeLocked(it *item) {
	c.list.remove(it)
	delete(c.items, it.key)
	c.bytes -= it.size
}
