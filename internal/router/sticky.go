package router

import (
	"sync"
	"time"
)

// sticky remembers which target last served a conversation (a session
// hint per alias), so the next request of it goes there first while that
// target is healthy — providers' prompt caches are per target. A failover
// serves the conversation elsewhere, and it stays there.
type sticky struct {
	ttl time.Duration
	max int
	// mu guards m.
	mu sync.Mutex
	m  map[string]stickyEntry
}

type stickyEntry struct {
	t  *Target
	at int64 // ns on the router's stopwatch
}

func newSticky() *sticky {
	return &sticky{ttl: time.Hour, max: 100_000, m: map[string]stickyEntry{}}
}

// get returns the session's target, if it has one that is not stale.
func (s *sticky) get(key string, now int64) *Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	if !ok || now-e.at > int64(s.ttl) {
		return nil
	}
	return e.t
}

// put records the target that served the session. Past max entries the
// stale ones go; if none is stale, the new session is not remembered.
func (s *sticky) put(key string, t *Target, now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok && len(s.m) >= s.max {
		for k, e := range s.m {
			if now-e.at > int64(s.ttl) {
				delete(s.m, k)
			}
		}
		if len(s.m) >= s.max {
			return
		}
	}
	s.m[key] = stickyEntry{t: t, at: now}
}

// first returns order with t moved to the front, if t is in it.
func first(order []*Target, t *Target) []*Target {
	for i, x := range order {
		if x == t {
			if i == 0 {
				return order
			}
			out := make([]*Target, 0, len(order))
			out = append(out, t)
			out = append(out, order[:i]...)
			return append(out, order[i+1:]...)
		}
	}
	return order
}
