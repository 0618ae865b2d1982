// Package clock is the source of time for every time-based Fusebox component.
//
// Components take a Clock in their settings; a nil Clock means the system
// clock, so a zero-valued settings struct just works. Tests pass the fake from
// package clocktest and advance it instead of sleeping.
//
// The package depends only on the standard library.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. Implementations must be safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a Timer that sends the time on its channel once d has
	// elapsed.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f once d has elapsed. The system clock calls it in
	// its own goroutine; a fake may call it from the goroutine that moves
	// its time. Stop on the returned Timer cancels the call; its C is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is the part of *time.Timer that Fusebox uses, so fakes can stand in.
type Timer interface {
	// C returns the channel on which the time is delivered when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether it stopped an
	// active timer.
	Stop() bool
	// Reset changes the timer to fire after d. It reports whether the timer had
	// been active.
	Reset(d time.Duration) bool
}

// Real returns the system clock.
func Real() Clock { return realClock{} }

// Or returns c, or the system clock when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return realClock{}
	}
	return c
}

// Sleep waits for d on c. It returns nil when the time has passed and
// ctx.Err() if the context ends first. A d of zero or less returns at once
// (with ctx.Err() if the context is already done).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := Or(c).NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
