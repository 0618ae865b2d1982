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
// lazily from the elapsed time and capped at the burst. Unlike rate, the
// instants are not time.Time values but durations on the Pacer's
// clock.Stopwatch, and the Pacer keeps them (when the balances were computed,
// when a pause ends) once for both of its buckets: time.Time arithmetic and
// wall-clock reads were most of the cost of an admission.

// bucket is one token bucket: balances only, the instants are its owner's.
// It is not safe for concurrent use: its owner (the Pacer) guards it, and
// refills it up to the instant of each call before using it, leaving out
// any time the buckets are paused.
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
	perSec float64 // refill rate in tokens per second; 0 means no limit
	burst  float64 // capacity
	tokens float64 // balance at the owner's last instant; below zero is debt

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

// refill adds the tokens refilled in d of unpaused time, up to the burst.
func (b *bucket) refill(d time.Duration) {
	if !b.unlimited() {
		b.tokens = min(b.burst, b.tokens+b.tokensFor(d))
	}
}

// readyIn returns how long from now until n tokens may be taken, pauses
// aside: until the balance reaches n, or, for n above the burst, until the
// bucket is full.
func (b *bucket) readyIn(n float64) time.Duration {
	if b.unlimited() {
		return 0
	}
	deficit := min(n, b.burst) - b.tokens
	slack := b.slack()
	if deficit <= slack {
		return 0
	}
	return b.durationFor(deficit - slack)
}

// slack is the float error tolerated when comparing balances: a thousandth
// of a nanosecond's refill plus a rounding error of the burst's magnitude.
// It is far below one nanosecond's refill for any burst under a day's worth.
func (b *bucket) slack() float64 { return b.perSec*1e-12 + b.burst*1e-14 }

// take debits n tokens for a call; the balance may go below zero. A pending
// call (one acting later than now, after refill of unpaused time) may lower
// the headroom.
func (b *bucket) take(n float64, pending bool, refill time.Duration) {
	if b.unlimited() {
		return
	}
	if pending {
		// Room is never negative: a bucket whose projection passes its
		// burst (while the call waits on the other bucket) has none.
		b.headroom = min(b.headroom, max(0, b.burst-(b.tokens+b.tokensFor(refill))))
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
	n = max(0, min(n, b.headroom))
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
