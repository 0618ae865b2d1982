package limit

import (
	"errors"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// LimitSetter is what an Adaptive drives: a Bulkhead, or anything else with a
// live concurrency limit.
type LimitSetter interface {
	SetLimit(n int)
}

// AdaptiveSettings configure an Adaptive. Every zero value is a default.
type AdaptiveSettings struct {
	// Min is the floor the limit never halves below; 0: 1.
	Min int
	// Max is the ceiling the limit never grows above; 0: 64.
	Max int
	// Initial is the starting limit; 0: Max.
	Initial int
	// SuccessRun is how many successes in a row add one to the limit;
	// 0: as many as the current limit (one step per "window" of calls, as
	// TCP's additive increase).
	SuccessRun int
	// Cooldown is the least time between two decreases, so a burst of
	// throttles answering calls sent together halves the limit once;
	// 0: one second.
	Cooldown time.Duration
	// Target receives every new limit, starting with Initial; nil: none.
	Target LimitSetter
	// Clock times the cooldown; nil: the system clock.
	Clock clock.Clock
}

// Adaptive is an AIMD concurrency controller: the limit halves (down to Min)
// on a throttle or capacity signal, at most once per Cooldown, and grows by
// one (up to Max) after SuccessRun successes in a row. Each change is passed
// to the Target while the Adaptive's lock is held, so the Target sees changes
// in order.
//
// An Adaptive is safe for concurrent use by multiple goroutines.
type Adaptive struct {
	clock    clock.Clock
	min, max int
	run      int
	cooldown time.Duration
	target   LimitSetter

	// mu guards limit, successes and lastCut.
	mu        sync.Mutex
	limit     int
	successes int
	lastCut   time.Time // zero: never
}

// NewAdaptive returns an Adaptive at its initial limit and applies that limit
// to the Target. It returns an error naming the field when a setting is
// negative or Initial lies outside [Min, Max].
func NewAdaptive(s AdaptiveSettings) (*Adaptive, error) {
	if s.Min < 0 || s.Max < 0 || s.Initial < 0 || s.SuccessRun < 0 || s.Cooldown < 0 {
		return nil, errors.New("limit: AdaptiveSettings has a negative field")
	}
	a := &Adaptive{
		clock:    clock.Or(s.Clock),
		min:      max(s.Min, 1),
		max:      s.Max,
		run:      s.SuccessRun,
		cooldown: s.Cooldown,
		target:   s.Target,
		limit:    s.Initial,
	}
	if a.max == 0 {
		a.max = max(64, a.min)
	}
	if a.cooldown == 0 {
		a.cooldown = time.Second
	}
	if a.limit == 0 {
		a.limit = a.max
	}
	switch {
	case a.min > a.max:
		return nil, errors.New("limit: Min is above Max")
	case a.limit < a.min || a.limit > a.max:
		return nil, errors.New("limit: Initial is outside [Min, Max]")
	}
	if a.target != nil {
		a.target.SetLimit(a.limit)
	}
	return a, nil
}

// Limit returns the current limit.
func (a *Adaptive) Limit() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit
}

// OnSuccess records a success; after a run of them the limit grows by one.
func (a *Adaptive) OnSuccess() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.successes++
	run := a.run
	if run == 0 {
		run = a.limit
	}
	if a.successes < run {
		return
	}
	a.successes = 0
	if a.limit < a.max {
		a.setLocked(a.limit + 1)
	}
}

// OnBackoff records a throttle (429) or capacity (503, overloaded) signal,
// reading the clock once. See OnBackoffAt.
func (a *Adaptive) OnBackoff() bool { return a.OnBackoffAt(a.clock.Now()) }

// OnBackoffAt records a throttle or capacity signal at now: it ends the run
// of successes and, unless the limit was cut less than Cooldown ago, halves
// it (not below Min). It reports whether the limit was cut.
func (a *Adaptive) OnBackoffAt(now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.successes = 0
	if !a.lastCut.IsZero() && now.Sub(a.lastCut) < a.cooldown {
		return false
	}
	a.lastCut = now
	if a.limit == a.min {
		return false
	}
	a.setLocked(max(a.limit/2, a.min))
	return true
}

// setLocked changes the limit and tells the Target. It requires a.mu held.
func (a *Adaptive) setLocked(n int) {
	a.limit = n
	if a.target != nil {
		a.target.SetLimit(n)
	}
}
