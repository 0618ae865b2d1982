package gateway

import (
	"sync"
	"time"
)

// timelineSize bounds the dashboard's timeline of recent events.
const timelineSize = 200

// timelineEntry is one thing that happened to a target or key, as the
// dashboard's timeline shows it.
type timelineEntry struct {
	Time time.Time `json:"time"`
	// Kind is "breaker" (a state change), "key" (a key out of or back in
	// rotation), "throttle" (a provider's wait honoured) or "admin" (an
	// operator's action).
	Kind   string `json:"kind"`
	Target string `json:"target,omitempty"`
	Key    string `json:"key,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	// Reason says why, in words.
	Reason string `json:"reason"`
	// Until is when the state ends by itself (a probe, a rest), if it
	// does.
	Until *time.Time `json:"until,omitempty"`
}

// timeline keeps the last timelineSize entries. Entries are rare (state
// changes, not requests), so a mutex is cheap. It is safe for concurrent
// use.
type timeline struct {
	// mu guards ring, next and n.
	mu   sync.Mutex
	ring [timelineSize]timelineEntry
	next int
	n    int
}

// add records e, pushing out the oldest entry when full.
func (tl *timeline) add(e timelineEntry) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.ring[tl.next] = e
	tl.next = (tl.next + 1) % timelineSize
	tl.n = min(tl.n+1, timelineSize)
}

// recent returns the entries, newest first.
func (tl *timeline) recent() []timelineEntry {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := make([]timelineEntry, 0, tl.n)
	for i := 1; i <= tl.n; i++ {
		out = append(out, tl.ring[(tl.next-i+timelineSize)%timelineSize])
	}
	return out
}

// until returns a pointer to t, or nil for the zero time.
func until(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
