package cache

// Stats are a Cache's counters since New, for metrics. Counts only grow;
// Entries and Bytes are what the cache holds now.
type Stats struct {
	// Hits counts Get calls answered with a fresh entry.
	Hits uint64
	// Misses counts Get calls that found no fresh entry, including those
	// that reported StaleAvailable.
	Misses uint64
	// StaleServes counts entries GetStale returned.
	StaleServes uint64
	// Evictions counts entries removed to make room (LRU).
	Evictions uint64
	// Expirations counts entries removed because they were past TTL and
	// StaleFor when next looked up.
	Expirations uint64
	// Rejected counts Put calls refused because the entry was larger than
	// MaxEntryBytes.
	Rejected uint64
	// Entries is the number of entries held.
	Entries int
	// Bytes is the accounted size of the entries held (see Config.MaxBytes).
	Bytes int64
}

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries, s.Bytes = len(c.items), c.bytes
	return s
}
