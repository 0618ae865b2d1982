package limit

import (
	"math"
	"time"
)

// Why not golang.org/x/time/rate, which this file is modelled on:
//
//   - Blocking waits must use an injected clock.Clock, so tests (ours and
//     users') advance a fake clock instead of sleeping; rate.Limiter.Wait
//     always uses the real time.
//   - Token costs are estimates corrected after the call from the response's
//     usage. Correcting an underestimate is a debit after the fact that may
//     drive the balance below zero, making later calls wait; rate.Limiter can
//     only cancel a reservation, never charge more than it reserved.
//   - A request larger than the burst must still go (alone, when the bucket
//     is full) where rate.Limiter refuses it outright.
//   - The library zone depends on nothing outside the standard library.
//
// The accounting is the same as rate's: a balance at an instant, refilled
// lazily from the elapsed time and capped at the burst.

// bucket is one token bucket. It is not safe for concurrent use: its owner
// (the Pacer) guards it. Every method expects advance(now) to have been
// called first for the instant it is used at.
//
// Reservations for a later time are debited at once (as in rate), so the
// balance is a projection: its value at a future instant is the balance then
// with every reservation acting by then already paid. That projection is only
// exact while the real bucket would not hit its cap before a pending
// reservation acts; two rules keep it so. A pause stops the refill (rather
// than letting a blocked bucket fill up and then admit a crowd of queued
// reservations at once). And headroom tracks, over the pending reservations,
// the least room between the real balance just before one acts and the
// burst: a credit while reservations are pending is cut to it, since every
// pending reservation would see the credit.
type bucket struct {
	perSec float64   // refill rate in tokens per second; 0 means no limit
	burst  float64   // capacity
	tokens float64   // balance at last; below zero is debt
	last   time.Time // when tokens was computed; zero before first use
	paused time.Time // no refill before this instant

	// headroom is the least room under the burst before any pending
	// reservation; +Inf when none is pending. The owner resets it.
	headroom float64
}

// unlimited reports whether the bucket admits everything.
func (b *bucket) unlimited() bool { return b.perSec == 0 }

// set changes the rate to perMinute (0: no limit) and the capacity to burst
// (0: one minute's worth, at least 1). A bucket that was unlimited starts
// full; a balance above the new burst is cut to it; debt is kept.
func (b *bucket) set(perMinute float64, burst int) {
	wasUnlimited := b.unlimited()
	b.perSec = perMinute / 60
	if burst <= 0 {
		burst = int(max(1, math.Ceil(perMinute)))
	}
	b.burst = float64(burst)
	if wasUnlimited || b.tokens > b.burst {
		b.tokens = b.burst
	}
}

// advance refills the bucket up to now. A now before the last instant used
// counts as no time passing.
func (b *bucket) advance(now time.Time) {
	if b.last.IsZero() || now.After(b.last) {
		if !b.last.IsZero() && !b.unlimited() {
			b.tokens = min(b.burst, b.tokens+b.refill(b.last, now))
		}
		b.last = now
	}
}

// refill returns the tokens added between from and to, leaving out any
// paused time.
func (b *bucket) refill(from, to time.Time) float64 {
	if from.Before(b.paused) {
		from = b.paused
	}
	if !to.After(from) {
		return 0
	}
	return b.tokensFor(to.Sub(from))
}

// pause stops the refill until the given instant; an earlier instant than
// the current pause is ignored.
func (b *bucket) pause(until time.Time) {
	if until.After(b.paused) {
		b.paused = until
	}
}

// readyIn returns how long from now until n tokens may be taken: until the
// pause ends and the balance reaches n, or, for n above the burst, until the
// bucket is full.
func (b *bucket) readyIn(now time.Time, n float64) time.Duration {
	var wait time.Duration
	if b.paused.After(now) {
		wait = b.paused.Sub(now)
	}
	if b.unlimited() {
		return wait
	}
	deficit := min(n, b.burst) - b.tokens
	if deficit <= b.slack() {
		return wait
	}
	return wait + b.durationFor(deficit-b.slack())
}

// slack is the float error tolerated when comparing balances: a thousandth
// of a nanosecond's refill plus a rounding error of the burst's magnitude.
// It is far below one nanosecond's refill for any burst under a day's worth.
func (b *bucket) slack() float64 { return b.perSec*1e-12 + b.burst*1e-14 }

// take debits n tokens for a call acting at at; the balance may go below
// zero. A call acting later than now becomes pending and may lower the
// headroom.
func (b *bucket) take(now, at time.Time, n float64) {
	if b.unlimited() {
		return
	}
	if at.After(now) {
		b.headroom = min(b.headroom, b.burst-(b.tokens+b.refill(now, at)))
	}
	b.tokens -= n
}

// debit takes n tokens after the fact (a settled underestimate). When the
// settled call has acted, every pending reservation acts after the debit and
// gains n of headroom; a debit for a call still pending gains nothing, as
// it is charged at that call's time.
func (b *bucket) debit(n float64, acted bool) {
	if !b.unlimited() {
		b.tokens -= n
		if acted {
			b.headroom += n
		}
	}
}

// give credits n tokens, up to the burst and the headroom, which it uses up.
func (b *bucket) give(n float64) {
	if b.unlimited() {
		return
	}
	n = min(n, b.headroom)
	b.headroom -= n
	b.tokens = min(b.burst, b.tokens+n)
}

// restore undoes the latest take of n, with the headroom from before it.
func (b *bucket) restore(n, headroom float64) {
	if !b.unlimited() {
		b.tokens = min(b.burst, b.tokens+n)
		b.headroom = headroom
	}
}

// available returns the balance (negative when in debt).
func (b *bucket) available() float64 {
	if b.unlimited() {
		return math.Inf(1)
	}
	return b.tokens
}

// tokensFor returns the tokens refilled in d. Whole seconds and the rest are
// converted apart to keep float64 precision for long durations (as rate does).
func (b *bucket) tokensFor(d time.Duration) float64 {
	sec := float64(d/time.Second) * b.perSec
	nsec := float64(d%time.Second) * b.perSec
	return sec + nsec/1e9
}

// durationFor returns the time to refill n tokens, rounded up to the
// nanosecond so a caller woken at that time finds them there.
func (b *bucket) durationFor(n float64) time.Duration {
	sec := n / b.perSec
	if sec >= float64(math.MaxInt64)/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Ceil(sec * 1e9))
}
