package fleet

import (
	"sync"
	"time"
)

// One slow call is not a Redis lost: the fleet says "Redis unreachable"
// (the log, Up, OnHealth, and with them /readyz) only once calls have
// failed without a success between them for LostAfter, or LostCalls of
// them have. A success anywhere ends the run of failures; the first after
// Redis was lost says it is back.

// LostAfter is how long calls to Redis must fail, with no success
// between them, before the fleet counts Redis lost.
const LostAfter = 250 * time.Millisecond

// LostCalls is how many calls failing in a row count Redis lost sooner
// than LostAfter.
const LostCalls = 10

// reach is a run of failed calls. It is safe for concurrent use.
type reach struct {
	// mu guards fails and since.
	mu    sync.Mutex
	fails int       // calls failed since the last success
	since time.Time // when the first of them failed
}

// failed records a failed call at now and reports whether the run of
// failures now counts Redis lost.
func (r *reach) failed(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fails == 0 {
		r.since = now
	}
	r.fails++
	return r.fails >= LostCalls || r.fails > 1 && now.Sub(r.since) >= LostAfter
}

// ok records a call that succeeded: the run of failures ends.
func (r *reach) ok() {
	r.mu.Lock()
	r.fails = 0
	r.mu.Unlock()
}
