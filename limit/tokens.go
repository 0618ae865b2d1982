package limit

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Limits are a Pacer's rates. A zero rate means no limit in that dimension.
type Limits struct {
	// RequestsPerMinute is the request rate; 0: no request limit.
	RequestsPerMinute float64
	// TokensPerMinute is the token rate; 0: no token limit.
	TokensPerMinute float64
	// RequestBurst is how many requests may go at once; 0: one minute's
	// worth (RequestsPerMinute rounded up, at least 1).
	RequestBurst int
	// TokenBurst is how many tokens may go at once; 0: one minute's worth
	// (TokensPerMinute rounded up, at least 1). A single request estimated
	// above TokenBurst is not refused: it goes alone when the bucket is full
	// and leaves it in debt, so later requests wait.
	TokenBurst int
}

func (l Limits) validate() error {
	switch {
	case l.RequestsPerMinute < 0:
		return errors.New("limit: RequestsPerMinute is negative")
	case l.TokensPerMinute < 0:
		return errors.New("limit: TokensPerMinute is negative")
	case l.RequestBurst < 0:
		return errors.New("limit: RequestBurst is negative")
	case l.TokenBurst < 0:
		return errors.New("limit: TokenBurst is negative")
	}
	return nil
}

// PacerSettings configure a Pacer. The zero value is a Pacer that admits
// everything on the system clock.
type PacerSettings struct {
	// Limits are the initial rates; SetLimits changes them later.
	Limits
	// MaxWait bounds how long Wait waits; a call that would have to wait
	// longer gets a *LimitedError at once. 0: only the context bounds Wait.
	MaxWait time.Duration
	// Clock is the time source for the friendly forms and Wait's timers;
	// nil: the system clock.
	Clock clock.Clock
}

// Pacer keeps calls under a requests-per-minute and a tokens-per-minute limit
// together: each call takes one request and its estimated tokens from two
// token buckets, and waits for the later of the two.
//
// A Pacer is safe for concurrent use by multiple goroutines.
type Pacer struct {
	clock   clock.Clock
	maxWait time.Duration

	// mu guards limits, req, tok, lastAct and seq.
	mu      sync.Mutex
	limits  Limits
	req     bucket    // requests
	tok     bucket    // tokens
	lastAct time.Time // the latest time any reservation acts at
	seq     uint64    // reservations made so far
}

// NewPacer returns a Pacer with both buckets full. It returns an error naming
// the field when a setting is negative.
func NewPacer(s PacerSettings) (*Pacer, error) {
	if err := s.Limits.validate(); err != nil {
		return nil, err
	}
	if s.MaxWait < 0 {
		return nil, errors.New("limit: MaxWait is negative")
	}
	p := &Pacer{clock: clock.Or(s.Clock), maxWait: s.MaxWait}
	p.setLocked(s.Limits)
	return p, nil
}

// Reservation is a call's claim on a Pacer: one request and an estimate of
// its tokens, admitted at a given time. Settle it with the real usage once
// known, or Cancel it if the call is not made. A Reservation is a small
// value (returned without allocating); Settle or Cancel it at most once.
// The zero Reservation is valid and its methods do nothing.
type Reservation struct {
	p        *Pacer
	tokens   int
	at       time.Time
	prevLast time.Time // the Pacer's lastAct before this reservation
	prevReq  float64   // the request bucket's headroom before it
	prevTok  float64   // the token bucket's headroom before it
	seq      uint64    // the Pacer's seq for this reservation
}

// Tokens returns the estimate the reservation took.
func (r Reservation) Tokens() int { return r.tokens }

// ReadyAt returns when the reserved call may go.
func (r Reservation) ReadyAt() time.Time { return r.at }

// Settle corrects the reservation with the tokens the call really used,
// reading the clock once. See SettleAt.
func (r Reservation) Settle(actual int) {
	if r.p != nil {
		r.SettleAt(r.p.clock.Now(), actual)
	}
}

// SettleAt corrects the reservation at now with the tokens the call really
// used: an overestimate is refunded (up to the burst) and an underestimate
// is debited, which may leave the token bucket below zero so that later calls
// wait until the debt is repaid.
func (r Reservation) SettleAt(now time.Time, actual int) {
	if r.p == nil {
		return
	}
	d := float64(max(actual, 0) - r.tokens)
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(now)
	if d > 0 {
		p.tok.debit(d, !r.at.After(now))
	} else {
		p.tok.give(-d)
	}
}

// Cancel gives the reservation back, reading the clock once. See CancelAt.
func (r Reservation) Cancel() {
	if r.p != nil {
		r.CancelAt(r.p.clock.Now())
	}
}

// CancelAt gives the request and the tokens back if the reservation's time
// has not come by now, so the next caller is not penalised for a call that
// was never made. If the Pacer has made reservations since this one, only
// what they do not depend on is given back (they keep their times). A
// reservation whose time has passed stays spent (use SettleAt(now, 0) to
// refund the tokens of a call that failed to send).
func (r Reservation) CancelAt(now time.Time) {
	if r.p == nil || !r.at.After(now) {
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

// Reserve reserves a call estimated at tokens, reading the clock once. See
// ReserveAt.
func (p *Pacer) Reserve(tokens int) (Reservation, time.Duration) {
	return p.ReserveAt(p.clock.Now(), tokens)
}

// ReserveAt reserves one request and tokens (negative counts as 0) at now,
// and returns the reservation with how long the caller must wait before
// making the call. It never fails: a caller that will not wait that long
// should Cancel. Later reservations queue behind this one.
func (p *Pacer) ReserveAt(now time.Time, tokens int) (Reservation, time.Duration) {
	tokens = max(tokens, 0)
	p.mu.Lock()
	defer p.mu.Unlock()
	wait := p.waitLocked(now, tokens)
	return p.takeLocked(now, now.Add(wait), tokens), wait
}

// Allow reports whether a call estimated at tokens may go now, reading the
// clock once. See AllowAt.
func (p *Pacer) Allow(tokens int) (ok bool, retryIn time.Duration) {
	return p.AllowAt(p.clock.Now(), tokens)
}

// AllowAt reports whether a call estimated at tokens may go at now. If so,
// it takes the request and the tokens, and the estimate stands as final (use
// TryReserveAt to settle the real usage later). If not, it takes nothing and
// returns how long until the call would be allowed.
func (p *Pacer) AllowAt(now time.Time, tokens int) (ok bool, retryIn time.Duration) {
	_, ok, retryIn = p.TryReserveAt(now, tokens)
	return ok, retryIn
}

// TryReserve is AllowAt with the clock read once, returning the Reservation
// to settle. See TryReserveAt.
func (p *Pacer) TryReserve(tokens int) (r Reservation, ok bool, retryIn time.Duration) {
	return p.TryReserveAt(p.clock.Now(), tokens)
}

// TryReserveAt reserves a call estimated at tokens only if it may go at now
// without waiting; otherwise it takes nothing and returns how long until it
// would be allowed.
func (p *Pacer) TryReserveAt(now time.Time, tokens int) (r Reservation, ok bool, retryIn time.Duration) {
	tokens = max(tokens, 0)
	p.mu.Lock()
	defer p.mu.Unlock()
	if wait := p.waitLocked(now, tokens); wait > 0 {
		return Reservation{}, false, wait
	}
	return p.takeLocked(now, now, tokens), true, 0
}

// takeLocked debits one request and tokens for a call acting at at. It
// requires p.mu held.
func (p *Pacer) takeLocked(now, at time.Time, tokens int) Reservation {
	p.seq++
	r := Reservation{p: p, tokens: tokens, at: at, seq: p.seq,
		prevLast: p.lastAct, prevReq: p.req.headroom, prevTok: p.tok.headroom}
	p.req.take(now, at, 1)
	p.tok.take(now, at, float64(tokens))
	if at.After(p.lastAct) {
		p.lastAct = at
	}
	return r
}

// Wait blocks until a call estimated at tokens may go, and returns its
// Reservation to settle. If the wait would exceed MaxWait or the context's
// deadline it returns a *LimitedError (matching ErrLimited) at once, taking
// nothing. If the context ends while waiting it gives the reservation back
// and returns ctx.Err(). The wait uses the Pacer's clock; the context's
// deadline is real time, as contexts are.
func (p *Pacer) Wait(ctx context.Context, tokens int) (Reservation, error) {
	if err := ctx.Err(); err != nil {
		return Reservation{}, err
	}
	now := p.clock.Now()
	r, wait := p.ReserveAt(now, tokens)
	if wait == 0 {
		return r, nil
	}
	if p.tooLong(ctx, wait) {
		r.CancelAt(now)
		return Reservation{}, &LimitedError{RetryAfter: wait}
	}
	t := p.clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C():
		return r, nil
	case <-ctx.Done():
		r.Cancel()
		return Reservation{}, ctx.Err()
	}
}

// tooLong reports whether wait exceeds MaxWait or the time left before the
// context's deadline.
func (p *Pacer) tooLong(ctx context.Context, wait time.Duration) bool {
	if p.maxWait > 0 && wait > p.maxWait {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && wait > time.Until(dl)
}

// waitLocked advances both buckets to now and returns how long a call of
// tokens must wait. It requires p.mu held.
func (p *Pacer) waitLocked(now time.Time, tokens int) time.Duration {
	p.advanceLocked(now)
	return max(p.req.readyIn(now, 1), p.tok.readyIn(now, float64(tokens)))
}

// advanceLocked refills both buckets up to now and, once no reservation is
// pending, resets their headroom. It requires p.mu held.
func (p *Pacer) advanceLocked(now time.Time) {
	p.req.advance(now)
	p.tok.advance(now)
	if !p.lastAct.After(now) {
		p.req.headroom, p.tok.headroom = math.Inf(1), math.Inf(1)
	}
}

// Limits returns the limits as last set (zero bursts stay zero).
func (p *Pacer) Limits() Limits {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limits
}

// SetLimits changes the limits, reading the clock once. See SetLimitsAt.
func (p *Pacer) SetLimits(l Limits) error { return p.SetLimitsAt(p.clock.Now(), l) }

// SetLimitsAt changes the limits at now: balances are refilled at the old
// rates up to now, then cut to the new bursts; debt is kept. A dimension that
// had no limit starts full. Reservations already made keep their times. It
// returns an error naming the field when a value is negative, changing
// nothing.
func (p *Pacer) SetLimitsAt(now time.Time, l Limits) error {
	if err := l.validate(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(now)
	p.setLocked(l)
	return nil
}

func (p *Pacer) setLocked(l Limits) {
	p.limits = l
	p.req.set(l.RequestsPerMinute, l.RequestBurst)
	p.tok.set(l.TokensPerMinute, l.TokenBurst)
}

// Block admits no call before until, as when a provider answered "retry
// after 20s", reading the clock once. See BlockAt.
func (p *Pacer) Block(until time.Time) { p.BlockAt(p.clock.Now(), until) }

// BlockAt, called at now, admits no call before until. The buckets do not
// refill while blocked, so the end of a block does not release a burst larger
// than the balance at its start; calls queued in Wait go at until and after,
// paced as usual. Blocks do not shorten: an until before the current one is
// ignored. Reservations already made keep their times.
func (p *Pacer) BlockAt(now, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(now)
	p.req.pause(until)
	p.tok.pause(until)
}

// Available returns the request and token balances at now; a negative token
// balance is debt from settled underestimates or oversized requests. A
// dimension with no limit reports +Inf.
func (p *Pacer) Available(now time.Time) (requests, tokens float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(now)
	return p.req.available(), p.tok.available()
}
