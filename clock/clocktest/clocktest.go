// Package clocktest provides a fake clock.Clock for tests: time stands still
// until the test advances it, and timers fire in order as it does.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Clock is a fake clock.Clock. Its time only moves when Advance or Set is
// called. It is safe for concurrent use.
type Clock struct {
	// mu guards now, timers and seq; changed is signalled whenever the set of
	// pending timers changes.
	mu      sync.Mutex
	changed *sync.Cond
	now     time.Time
	timers  []*timer
	seq     uint64
}

// New returns a fake clock reading start. A zero start means
// 2026-01-01T00:00:00Z, so tests do not depend on the local zone.
func New(start time.Time) *Clock {
	if start.IsZero() {
		start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	c := &Clock{now: start}
	c.changed = sync.NewCond(&c.mu)
	return c
}

var _ clock.Clock = (*Clock)(nil)

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires when the fake time reaches now+d; a d of
// zero or less fires at once. Like time.Timer's, its channel has a buffer of
// one.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	t := &timer{c: c, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	c.scheduleLocked(t, d)
	c.mu.Unlock()
	return t
}

// AfterFunc calls f when the fake time reaches now+d. f runs in the
// goroutine that advances the clock, after the clock's lock is released, so
// it may use the clock; Advance returns after it does. A d of zero or less
// runs f before AfterFunc returns.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &timer{c: c, fn: f}
	c.mu.Lock()
	c.scheduleLocked(t, d)
	c.mu.Unlock()
	return t
}

// Advance moves the time forward by d, firing every timer that falls due, in
// order of their deadlines.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.setLocked(c.now.Add(d))
	c.mu.Unlock()
}

// Set moves the time to t, firing due timers; t before the current time is
// ignored (the fake never goes backwards).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.setLocked(t)
	c.mu.Unlock()
}

// Pending returns the number of timers waiting to fire.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers blocks until at least n timers are pending: the way a test
// waits for a goroutine to park on the clock without sleeping.
func (c *Clock) WaitForTimers(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.timers) < n {
		c.changed.Wait()
	}
}

// AdvanceToNext moves the time to the earliest pending timer's deadline and
// fires it. It reports false when no timer is pending.
func (c *Clock) AdvanceToNext() bool {
	c.mu.Lock()
	if len(c.timers) == 0 {
		c.mu.Unlock()
		return false
	}
	c.setLocked(c.timers[0].when)
	c.mu.Unlock()
	return true
}

// setLocked moves the time to t, firing due timers in deadline order with
// the time at each one's deadline. AfterFunc callbacks run with the lock
// released, so the set of timers is re-read after each.
func (c *Clock) setLocked(t time.Time) {
	fired := false
	for len(c.timers) > 0 && !c.timers[0].when.After(t) {
		tm := c.timers[0]
		c.timers = c.timers[1:]
		tm.active = false
		fired = true
		if tm.when.After(c.now) {
			c.now = tm.when
		}
		if tm.fn != nil {
			c.mu.Unlock()
			tm.fn()
			c.mu.Lock()
			continue
		}
		select {
		case tm.ch <- tm.when:
		default: // an unread value is already there, as with time.Timer
		}
	}
	if t.After(c.now) {
		c.now = t
	}
	if fired {
		c.changed.Broadcast()
	}
}

func (c *Clock) scheduleLocked(t *timer, d time.Duration) {
	c.seq++
	t.when, t.seq, t.active = c.now.Add(d), c.seq, true
	c.timers = append(c.timers, t)
	sort.SliceStable(c.timers, func(i, j int) bool {
		a, b := c.timers[i], c.timers[j]
		if !a.when.Equal(b.when) {
			return a.when.Before(b.when)
		}
		return a.seq < b.seq
	})
	c.changed.Broadcast()
	if d <= 0 {
		c.setLocked(c.now)
	}
}

func (c *Clock) removeLocked(t *timer) bool {
	if !t.active {
		return false
	}
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			break
		}
	}
	t.active = false
	c.changed.Broadcast()
	return true
}

type timer struct {
	c *Clock
	// when, seq and active are guarded by c.mu.
	when   time.Time
	seq    uint64
	active bool
	ch     chan time.Time // nil for AfterFunc
	fn     func()         // set for AfterFunc
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.c.removeLocked(t)
}

func (t *timer) Reset(d time.Duration) bool {
	c := t.c
	c.mu.Lock()
	was := c.removeLocked(t)
	if t.ch != nil {
		select { // drop a stale value, as time.Timer does since Go 1.23
		case <-t.ch:
		default:
		}
	}
	c.scheduleLocked(t, d)
	c.mu.Unlock()
	return was
}
