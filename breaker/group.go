package breaker

import (
	"sort"
	"sync"
)

// Group keeps one breaker per key (a provider and model, an API key, a
// host), made on first use from a config function. It is safe for
// concurrent use; looking up an existing breaker takes no lock.
type Group[K comparable] struct {
	config func(K) Config
	// mu serialises creation so a key never gets two breakers.
	mu       sync.Mutex
	breakers sync.Map // K → *Breaker
}

// NewGroup returns a Group that makes a key's breaker from config(key).
func NewGroup[K comparable](config func(K) Config) *Group[K] {
	return &Group[K]{config: config}
}

// Get returns the breaker for key, making it on first use. It fails only
// when config(key) is invalid; nothing is stored then, so a corrected config
// function can be retried.
func (g *Group[K]) Get(key K) (*Breaker, error) {
	if b, ok := g.breakers.Load(key); ok {
		return b.(*Breaker), nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if b, ok := g.breakers.Load(key); ok {
		return b.(*Breaker), nil
	}
	b, err := New(g.config(key))
	if err != nil {
		return nil, err
	}
	g.breakers.Store(key, b)
	return b, nil
}

// Lookup returns key's breaker if it has been made.
func (g *Group[K]) Lookup(key K) (*Breaker, bool) {
	b, ok := g.breakers.Load(key)
	if !ok {
		return nil, false
	}
	return b.(*Breaker), true
}

// Delete forgets key's breaker; the next Get makes a new one. Permits of the
// old breaker report to it harmlessly.
func (g *Group[K]) Delete(key K) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.breakers.Delete(key)
}

// Range calls fn for each breaker until fn returns false, in no set order.
func (g *Group[K]) Range(fn func(K, *Breaker) bool) {
	g.breakers.Range(func(k, v any) bool { return fn(k.(K), v.(*Breaker)) })
}

// Snapshots returns a snapshot of every breaker, ordered by name.
func (g *Group[K]) Snapshots() []Snapshot {
	var out []Snapshot
	g.Range(func(_ K, b *Breaker) bool {
		out = append(out, b.Snapshot())
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
