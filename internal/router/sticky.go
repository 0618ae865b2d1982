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
	ttl    time.Duration
	m      *lru.Set[string, stickyEntry]
	shared SessionStore // nil: this router's own sessions only
}

// SessionStore shares which target served a session with other routers
// (the replicas of a fleet). Recall may wait on a round trip (it is asked
// only for a session this router has not seen); Remember must not wait.
type SessionStore interface {
	// Recall returns the name of the target that last served session
	// key, "" if none is known.
	Recall(key string) string
	// Remember records that target served session key.
	Remember(key, target string)
}

type stickyEntry struct {
	t  *Target
	at int64 // ns on the router's stopwatch
}

// maxSessions is how many sessions a client may have remembered.
const maxSessions = 10_000

func newSticky(shared SessionStore) *sticky {
	return &sticky{ttl: time.Hour, m: lru.New[string, stickyEntry](maxSessions, 0), shared: shared}
}

// get returns the session's target among alias a's, if it has one that is
// not stale: this router's, or else the one the shared store names.
func (s *sticky) get(key string, a *Alias, now int64) *Target {
	e, ok := s.m.Get(key)
	if ok && now-e.at <= int64(s.ttl) {
		return e.t
	}
	if s.shared == nil {
		return nil
	}
	if name := s.shared.Recall(key); name != "" {
		for _, t := range a.Targets {
			if t.Name == name {
				return t
			}
		}
	}
	return nil
}

// put records the target that served flow's session.
func (s *sticky) put(flow, key string, t *Target, now int64) {
	s.m.Put(flow, key, stickyEntry{t: t, at: now}, 0)
	if s.shared != nil {
		s.shared.Remember(key, t.Name)
	}
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
