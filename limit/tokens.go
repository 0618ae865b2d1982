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
// Inside, an instant is a time.Duration on a clock.Stopwatch started with the
// Pacer: the friendly forms read it (only the monotonic clock, for the system
// clock), and the At forms convert their time.Time with one Sub. Times more
// than about 292 years from the Pacer's start are clamped, as time.Time.Sub
// clamps.
//
// A Pacer is safe for concurrent use by multiple goroutines.
type Pacer struct {
	sw      clock.Stopwatch
	start   time.Time   // the Stopwatch's start: instant 0
	clock   clock.Clock // the Stopwatch's clock, for Wait's timers
	maxWait time.Duration

	// mu guards limits, req, tok, last, paused, lastAct and seq.
	mu      sync.Mutex
	limits  Limits
	req     bucket        // requests
	tok     bucket        // tokens
	last    time.Duration // when the balances were computed; never before first use
	paused  time.Duration // no refill before this instant; never when not paused
	lastAct time.Duration // the latest instant any reservation acts at; never before one
	seq     uint64        // reservations made so far
}

// never is the instant before every other, where a zero time.Time would
// stand: not yet used, not paused, nothing reserved.
const never = time.Duration(math.MinInt64)

// NewPacer returns a Pacer with both buckets full. It returns an error naming
// the field when a setting is negative.
func NewPacer(s PacerSettings) (*Pacer, error) {
	if err := s.Limits.validate(); err != nil {
		return nil, err
	}
	if s.MaxWait < 0 {
		return nil, errors.New("limit: MaxWait is negative")
	}
	sw := clock.NewStopwatch(s.Clock)
	p := &Pacer{sw: sw, start: sw.Time(0), clock: sw.Clock(), maxWait: s.MaxWait,
		last: never, paused: never, lastAct: never}
	p.setLocked(s.Limits)
	return p, nil
}

// instant converts t to an instant on the Pacer's Stopwatch.
func (p *Pacer) instant(t time.Time) time.Duration { return t.Sub(p.start) }

// Reserve reserves a call estimated at tokens, reading the clock once. See
// ReserveAt.
func (p *Pacer) Reserve(tokens int) (Reservation, time.Duration) {
	r, wait := p.reserve(p.sw.Elapsed(), tokens)
	r.base, r.fromBase = p.start, r.at
	return r, wait
}

// ReserveAt reserves one request and tokens (negative counts as 0) at now,
// and returns the reservation with how long the caller must wait before
// making the call. It never fails: a caller that will not wait that long
// should Cancel. Later reservations queue behind this one.
func (p *Pacer) ReserveAt(now time.Time, tokens int) (Reservation, time.Duration) {
	r, wait := p.reserve(p.instant(now), tokens)
	r.base, r.fromBase = now, wait
	return r, wait
}

// reserve is ReserveAt at an instant; the caller fills in r's ReadyAt.
func (p *Pacer) reserve(now time.Duration, tokens int) (r Reservation, wait time.Duration) {
	tokens = max(tokens, 0)
	p.mu.Lock()
	wait = p.waitLocked(now, tokens)
	at := after(now, wait)
	r = p.reservationLocked(at, tokens)
	p.takeLocked(now, at, tokens)
	p.mu.Unlock()
	return r, wait
}

// Allow reports whether a call estimated at tokens may go now, reading the
// clock once. See AllowAt.
func (p *Pacer) Allow(tokens int) (ok bool, retryIn time.Duration) {
	return p.allow(p.sw.Elapsed(), tokens)
}

// AllowAt reports whether a call estimated at tokens may go at now. If so,
// it takes the request and the tokens, and the estimate stands as final (use
// TryReserveAt to settle the real usage later). If not, it takes nothing and
// returns how long until the call would be allowed.
func (p *Pacer) AllowAt(now time.Time, tokens int) (ok bool, retryIn time.Duration) {
	return p.allow(p.instant(now), tokens)
}

// allow is AllowAt at an instant: tryReserve without a Reservation to fill.
func (p *Pacer) allow(now time.Duration, tokens int) (ok bool, retryIn time.Duration) {
	tokens = max(tokens, 0)
	p.mu.Lock()
	if wait := p.waitLocked(now, tokens); wait > 0 {
		p.mu.Unlock()
		return false, wait
	}
	p.takeLocked(now, now, tokens)
	p.mu.Unlock()
	return true, 0
}

// TryReserve is AllowAt with the clock read once, returning the Reservation
// to settle. See TryReserveAt.
func (p *Pacer) TryReserve(tokens int) (r Reservation, ok bool, retryIn time.Duration) {
	r, ok, retryIn = p.tryReserve(p.sw.Elapsed(), tokens)
	if ok {
		r.base, r.fromBase = p.start, r.at
	}
	return r, ok, retryIn
}

// TryReserveAt reserves a call estimated at tokens only if it may go at now
// without waiting; otherwise it takes nothing and returns how long until it
// would be allowed.
func (p *Pacer) TryReserveAt(now time.Time, tokens int) (r Reservation, ok bool, retryIn time.Duration) {
	r, ok, retryIn = p.tryReserve(p.instant(now), tokens)
	if ok {
		r.base = now
	}
	return r, ok, retryIn
}

// tryReserve is TryReserveAt at an instant; the caller fills in r's ReadyAt.
func (p *Pacer) tryReserve(now time.Duration, tokens int) (r Reservation, ok bool, retryIn time.Duration) {
	tokens = max(tokens, 0)
	p.mu.Lock()
	if wait := p.waitLocked(now, tokens); wait > 0 {
		p.mu.Unlock()
		return Reservation{}, false, wait
	}
	r = p.reservationLocked(now, tokens)
	p.takeLocked(now, now, tokens)
	p.mu.Unlock()
	return r, true, 0
}

// takeLocked debits one request and tokens for a call acting at at. It
// requires p.mu held.
func (p *Pacer) takeLocked(now, at time.Duration, tokens int) {
	p.seq++
	pending := at > now
	var refill time.Duration
	if pending {
		refill = p.refillBetween(now, at)
	}
	p.req.take(1, pending, refill)
	p.tok.take(float64(tokens), pending, refill)
	if at > p.lastAct {
		p.lastAct = at
	}
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
	now := p.sw.Elapsed()
	r, wait := p.reserve(now, tokens)
	r.base, r.fromBase = p.start, r.at
	if wait == 0 {
		return r, nil
	}
	if p.tooLong(ctx, wait) {
		r.cancel(now)
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
// tokens must wait: until a pause ends, and then until both buckets hold
// enough, clamped to the largest Duration. It requires p.mu held.
func (p *Pacer) waitLocked(now time.Duration, tokens int) time.Duration {
	p.advanceLocked(now)
	ready := max(p.req.readyIn(1), p.tok.readyIn(float64(tokens)))
	if p.paused > now {
		return after(since(p.paused, now), ready)
	}
	return ready
}

// advanceLocked refills both buckets up to now (a now before the last
// instant used counts as no time passing) and, once no reservation is
// pending, resets their headroom. It requires p.mu held.
func (p *Pacer) advanceLocked(now time.Duration) {
	if now > p.last {
		if p.last != never {
			if d := p.refillBetween(p.last, now); d > 0 {
				p.req.refill(d)
				p.tok.refill(d)
			}
		}
		p.last = now
	}
	if p.lastAct <= now {
		p.req.headroom, p.tok.headroom = math.Inf(1), math.Inf(1)
	}
}

// refillBetween returns the time between from and to that refills the
// buckets: all of it but any paused time. It requires p.mu held.
func (p *Pacer) refillBetween(from, to time.Duration) time.Duration {
	from = max(from, p.paused)
	if to <= from {
		return 0
	}
	return since(to, from)
}

// since returns to-from for to after from, clamped to the largest Duration
// as time.Time.Sub clamps.
func since(to, from time.Duration) time.Duration {
	if d := to - from; d > 0 {
		return d
	}
	return math.MaxInt64
}

// after returns now+wait for a wait of zero or more, clamped to the largest
// Duration: the instant wait after now, or the sum of two waits.
func after(now, wait time.Duration) time.Duration {
	if at := now + wait; at >= now {
		return at
	}
	return math.MaxInt64
}

// Limits returns the limits as last set (zero bursts stay zero).
func (p *Pacer) Limits() Limits {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limits
}

// SetLimits changes the limits, reading the clock once. See SetLimitsAt.
func (p *Pacer) SetLimits(l Limits) error { return p.setLimits(p.sw.Elapsed(), l) }

// SetLimitsAt changes the limits at now: balances are refilled at the old
// rates up to now, then cut to the new bursts; debt is kept. A dimension that
// had no limit starts full. Reservations already made keep their times. It
// returns an error naming the field when a value is negative, changing
// nothing.
func (p *Pacer) SetLimitsAt(now time.Time, l Limits) error { return p.setLimits(p.instant(now), l) }

func (p *Pacer) setLimits(now time.Duration, l Limits) error {
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
func (p *Pacer) Block(until time.Time) { p.block(p.sw.Elapsed(), p.instant(until)) }

// BlockAt, called at now, admits no call before until. The buckets do not
// refill while blocked, so the end of a block does not release a burst larger
// than the balance at its start; calls queued in Wait go at until and after,
// paced as usual. Blocks do not shorten: an until before the current one is
// ignored. Reservations already made keep their times.
func (p *Pacer) BlockAt(now, until time.Time) { p.block(p.instant(now), p.instant(until)) }

func (p *Pacer) block(now, until time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(now)
	p.paused = max(p.paused, until)
}

// Available returns the request and token balances at now; a negative token
// balance is debt from settled underestimates or oversized requests. A
// dimension with no limit reports +Inf.
func (p *Pacer) Available(now time.Time) (requests, tokens float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advanceLocked(p.instant(now))
	return p.req.available(), p.tok.available()
}
