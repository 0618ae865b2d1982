package responses

import (
	"sync"

	"github.com/fuseboxhq/fusebox/internal/lru"
)

// Defaults of the stores' bounds, per owner.
const (
	DefaultMaxEntries = 1000
	DefaultMaxBytes   = 64 << 20
)

// MemoryStore is a Store in memory, bounded per owner (client key) like
// the gateway's other per-client records: each owner holds at most
// maxEntries responses of maxBytes in all (sizes estimated from the
// response and its items), and past either its least recently used go —
// its own, never another client's. It is safe for concurrent use; every
// operation is O(1).
type MemoryStore struct {
	mu  sync.Mutex // makes Delete's look-up and removal one step
	set *lru.Set[string, Stored]
}

// NewMemoryStore returns a MemoryStore with the bounds per owner;
// maxEntries ≤ 0 means DefaultMaxEntries, maxBytes ≤ 0 DefaultMaxBytes.
func NewMemoryStore(maxEntries int, maxBytes int64) *MemoryStore {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &MemoryStore{set: lru.New[string, Stored](maxEntries, maxBytes)}
}

// Get returns owner's response id and marks it used.
func (m *MemoryStore) Get(owner, id string) (Stored, bool) {
	if !validID(id) {
		return Stored{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.set.Get(id); ok && st.Owner == owner {
		return st, true
	}
	return Stored{}, false
}

// Put stores s under s.ID for s.Owner, replacing a response of that id,
// then removes the owner's least recently used responses past its bounds.
// It returns ErrInvalidID or ErrTooLarge, storing nothing, for an id that
// is not valid or a response over the byte bound alone.
func (m *MemoryStore) Put(s Stored) error {
	if !validID(s.ID) {
		return ErrInvalidID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.set.Put(s.Owner, s.ID, s, s.size()) {
		return ErrTooLarge
	}
	return nil
}

// Delete removes owner's response id and reports whether there was one.
func (m *MemoryStore) Delete(owner, id string) bool {
	if !validID(id) {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.set.Get(id); !ok || st.Owner != owner {
		return false
	}
	m.set.Delete(id)
	return true
}

var _ Store = (*MemoryStore)(nil)
