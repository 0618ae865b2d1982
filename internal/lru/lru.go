// Package lru is a map bounded per owner: each owner (a client key) may
// hold so many entries and so many bytes, and past either its least
// recently used entries go — its own, never another owner's. Every
// operation is O(1). The gateway keeps its per-client records in it
// (idempotent answers, sticky sessions), so no client can push out
// another's.
package lru

import (
	"container/list"
	"sync"
)

// Set is a bounded map from K to V. It is safe for concurrent use.
type Set[K comparable, V any] struct {
	maxEntries int
	maxBytes   int64

	// mu guards the fields below.
	mu     sync.Mutex
	m      map[K]*list.Element
	owners map[string]*owner
}

type owner struct {
	order list.List // of *entry, most recently used first
	bytes int64
}

type entry[K comparable, V any] struct {
	key   K
	value V
	size  int64
	own   *owner
	name  string
}

// New returns a Set whose owners may each hold maxEntries entries of
// maxBytes in all (0: no bound of that kind).
func New[K comparable, V any](maxEntries int, maxBytes int64) *Set[K, V] {
	return &Set[K, V]{maxEntries: maxEntries, maxBytes: maxBytes, m: map[K]*list.Element{}, owners: map[string]*owner{}}
}

// SetLimits changes the bounds; owners over them shrink at their next Put.
func (s *Set[K, V]) SetLimits(maxEntries int, maxBytes int64) {
	s.mu.Lock()
	s.maxEntries, s.maxBytes = maxEntries, maxBytes
	s.mu.Unlock()
}

// Get returns k's value and marks it used.
func (s *Set[K, V]) Get(k K) (V, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*entry[K, V])
	e.own.order.MoveToFront(el)
	return e.value, true
}

// Put stores k's value for owner, size bytes (a key already stored is
// replaced, and moves to owner), then makes room within owner's bounds by
// removing owner's least recently used entries. It reports false, storing
// nothing, when the value alone is over the byte bound.
func (s *Set[K, V]) Put(ownerName string, k K, v V, size int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxBytes > 0 && size > s.maxBytes {
		s.deleteLocked(k)
		return false
	}
	s.deleteLocked(k)
	o := s.owners[ownerName]
	if o == nil {
		o = &owner{}
		s.owners[ownerName] = o
	}
	e := &entry[K, V]{key: k, value: v, size: size, own: o, name: ownerName}
	s.m[k] = o.order.PushFront(e)
	o.bytes += size
	for (s.maxEntries > 0 && o.order.Len() > s.maxEntries) || (s.maxBytes > 0 && o.bytes > s.maxBytes) {
		s.removeLocked(o.order.Back())
	}
	return true
}

// Delete removes k.
func (s *Set[K, V]) Delete(k K) {
	s.mu.Lock()
	s.deleteLocked(k)
	s.mu.Unlock()
}

// Len returns how many entries owner holds, and their bytes.
func (s *Set[K, V]) Len(ownerName string) (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.owners[ownerName]; o != nil {
		return o.order.Len(), o.bytes
	}
	return 0, 0
}

func (s *Set[K, V]) deleteLocked(k K) {
	if el, ok := s.m[k]; ok {
		s.removeLocked(el)
	}
}

func (s *Set[K, V]) removeLocked(el *list.Element) {
	e := el.Value.(*entry[K, V])
	e.own.order.Remove(el)
	e.own.bytes -= e.size
	delete(s.m, e.key)
	if e.own.order.Len() == 0 {
		delete(s.owners, e.name)
	}
}
