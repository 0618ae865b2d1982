package router

import (
	"time"

	"github.com/fuseboxhq/fusebox/internal/lru"
)

// sticky remembers which target last served a conversation (a session
// hint per alias), so the next request of it goes there first while that
// target is healthy — providers' prompt caches are per target. A failover
// serves the conversation elsewhere, and it stays there. Sessions are
// bounded per client (flow): a client's new sessions push out only its
// own least recently used.
type sticky struct {
	ttl time.Duration
	m   *lru.Set[string, stickyEntry]
}

type stickyEntry struct {
	t  *Target
	at int64 // ns on the router's stopwatch
}

// maxSessions is how many sessions a client may have remembered.
const maxSessions = 10_000

func newSticky() *sticky {
	return &sticky{ttl: time.Hour, m: lru.New[string, stickyEntry](maxSessions, 0)}
}

// get returns the session's target, if it has one that is not stale.
func (s *sticky) get(key string, now int64) *Target {
	e, ok := s.m.Get(key)
	if !ok || now-e.at > int64(s.ttl) {
		return nil
	}
	return e.t
}

// put records the target that served flow's session.
func (s *sticky) put(flow, key string, t *Target, now int64) {
	s.m.Put(flow, key, stickyEntry{t: t, at: now}, 0)
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
