package limit

import "time"

// Reservation is a call's claim on a Pacer: one request and an estimate of
// its tokens, admitted at a given time. Settle it with the real usage once
// known, or Cancel it if the call is not made. A Reservation is a small
// value (returned without allocating); Settle or Cancel it at most once.
// The zero Reservation is valid and its methods do nothing.
type Reservation struct {
	p      *Pacer
	tokens int
	at     time.Duration // the instant the call acts at

	// ReadyAt is base plus fromBase, added only when asked for: the
	// caller's now and the wait for the At forms, else the Pacer's start
	// and at.
	base     time.Time
	fromBase time.Duration

	prevLast time.Duration // the Pacer's lastAct before this reservation
	prevReq  float64       // the request bucket's headroom before it
	prevTok  float64       // the token bucket's headroom before it
	seq      uint64        // the Pacer's seq for this reservation
}

// Tokens returns the estimate the reservation took.
func (r Reservation) Tokens() int { return r.tokens }

// ReadyAt returns when the reserved call may go.
func (r Reservation) ReadyAt() time.Time { return r.base.Add(r.fromBase) }

// Settle corrects the reservation with the tokens the call really used,
// reading the clock once. See SettleAt.
func (r Reservation) Settle(actual int) {
	if r.p != nil {
		r.settle(r.p.sw.Elapsed(), actual)
	}
}

// SettleAt corrects the reservation at now with the tokens the call really
// used: an overestimate is refunded (up to the burst) and an underestimate
// is debited, which may leave the token bucket below zero so that later calls
// wait until the debt is repaid.
func (r Reservation) SettleAt(now time.Time, actual int) {
	if r.p != nil {
		r.settle(r.p.instant(now), actual)
	}
}

func (r Reservation) settle(now time.Duration, actual int) {
	d := float64(max(actual, 0) - r.tokens)
	p := r.p
	p.mu.Lock()
	p.advanceLocked(now)
	if d > 0 {
		p.tok.debit(d, r.at <= now)
	} else {
		p.tok.give(-d)
	}
	p.mu.Unlock()
}

// Cancel gives the reservation back, reading the clock once. See CancelAt.
func (r Reservation) Cancel() {
	if r.p != nil {
		r.cancel(r.p.sw.Elapsed())
	}
}

// CancelAt gives the request and the tokens back if the reservation's time
// has not come by now, so the next caller is not penalised for a call that
// was never made. If the Pacer has made reservations since this one, only
// what they do not depend on is given back (they keep their times). A
// reservation whose time has passed stays spent (use SettleAt(now, 0) to
// refund the tokens of a call that failed to send).
func (r Reservation) CancelAt(now time.Time) {
	if r.p != nil {
		r.cancel(r.p.instant(now))
	}
}

func (r Reservation) cancel(now time.Duration) {
	if r.at <= now {
		return
	}
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(now)
	if r.seq == p.seq { // the latest reservation: undo it entirely
		p.lastAct = r.prevLast
		p.req.restore(1, r.prevReq)
		p.tok.restore(float64(r.tokens), r.prevTok)
		return
	}
	p.req.give(1)
	p.tok.give(float64(r.tokens))
}

// reservationLocked returns the Reservation that the next takeLocked of
// tokens acting at at makes, all but its ReadyAt. It requires p.mu held.
func (p *Pacer) reservationLocked(at time.Duration, tokens int) Reservation {
	return Reservation{p: p, tokens: tokens, at: at, seq: p.seq + 1,
		prevLast: p.lastAct, prevReq: p.req.headroom, prevTok: p.tok.headroom}
}
