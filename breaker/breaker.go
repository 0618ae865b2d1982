package breaker

import (
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Breaker is a circuit breaker. It is safe for concurrent use.
//
// The hot paths take no lock: the state, its generation and the half-open
// probe count live in one atomic word, the window and totals are striped
// atomics, and state changes (rare) take a mutex that is never held while a
// protected call runs or a listener is called. Transitions that fall due with
// time (open → half-open, a half-open period that outlived HalfOpenMaxWait)
// are made lazily by the next call that notices them; a breaker owns no
// goroutine. While open it keeps one Clock.AfterFunc timer that marks the end
// of the open period, so that refusals need not read the clock.
type Breaker struct {
	cfg Config
	clk clock.Clock
	sw  clock.Stopwatch
	win window // nil: no window rules
	// needStart: slow calls are measured, so Allow reads the clock.
	// needNow: the window is time-based, so a report reads the clock.
	needStart, needNow bool

	// word is state | probes<<probeShift | generation<<genShift.
	word        atomic.Uint64
	consecutive atomic.Int64 // consecutive failures while closed
	openUntil   atomic.Int64 // end of the open period, ns on sw
	// openDue is the generation of the open period whose end has passed,
	// set by a timer so refusals need not read the clock.
	openDue    atomic.Uint64
	probeUntil atomic.Int64 // HalfOpenMaxWait after the last probe admitted, ns on sw
	refusal    atomic.Pointer[OpenError]
	tot        totals

	halfOpenErr, forcedErr *OpenError

	// mu serialises state changes (stores to word) and guards the fields
	// below.
	mu        sync.Mutex
	since     int64       // when the current state began, ns on sw
	reopens   int         // consecutive failed half-open periods
	openTimer clock.Timer // sets openDue; nil unless open
	probesOK  int         // probe successes in this half-open period
}

const (
	stateMask  = 0xff
	probeShift = 8
	probeMask  = 0xffff
	genShift   = 24
)

func stateOf(w uint64) State  { return State(w & stateMask) }
func probesOf(w uint64) int64 { return int64(w>>probeShift) & probeMask }
func genOf(w uint64) uint64   { return w >> genShift }

// New returns a closed breaker, or an error naming the Config field that is
// out of range.
func New(cfg Config) (*Breaker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	b := &Breaker{
		cfg:         cfg,
		clk:         clock.Or(cfg.Clock),
		sw:          clock.NewStopwatch(cfg.Clock),
		needStart:   cfg.SlowCallDuration > 0,
		needNow:     cfg.Window > 0,
		tot:         newTotals(),
		halfOpenErr: &OpenError{Name: cfg.Name, State: StateHalfOpen, clock: cfg.Clock},
		forcedErr:   &OpenError{Name: cfg.Name, State: StateForcedOpen, clock: cfg.Clock},
	}
	switch {
	case cfg.Window > 0:
		b.win = newTimeWindow(int64(cfg.Window), cfg.Buckets)
	case cfg.WindowCalls > 0:
		b.win = newCountWindow(cfg.WindowCalls)
	}
	return b, nil
}

// Name returns Config.Name.
func (b *Breaker) Name() string { return b.cfg.Name }

// now reads the breaker's clock as nanoseconds since the breaker was made.
func (b *Breaker) now() int64 { return int64(b.sw.Elapsed()) }

// Permit is an admitted call. Report its outcome exactly once when the call
// ends, however late (a stream may report minutes later); an outcome that
// arrives after the breaker changed state is dropped, so a slow success from
// the closed era can never close a half-open breaker. The zero Permit ignores
// reports.
type Permit struct {
	b     *Breaker
	gen   uint64
	state State
	start int64
}

// Allow asks to make a call. It returns a Permit, or an *OpenError (matching
// ErrOpen) when the breaker refuses: it is open, forced open, or half-open
// with all probe slots taken. It never waits.
func (b *Breaker) Allow() (Permit, error) {
	w := b.word.Load()
	switch stateOf(w) {
	case StateClosed, StateForcedClosed, StateDisabled:
		b.tot.add(totalAllowed)
		p := Permit{b: b, gen: genOf(w), state: stateOf(w)}
		if b.needStart {
			p.start = b.now()
		}
		return p, nil
	}
	return b.allowSlow(w)
}

// allowSlow handles the open, half-open and forced-open states.
func (b *Breaker) allowSlow(w uint64) (Permit, error) {
	if stateOf(w) == StateOpen && b.openDue.Load() != genOf(w) {
		// The common refusal: the open period's timer has not fired.
		b.tot.add(totalRejected)
		return Permit{}, b.refusal.Load()
	}
	now := b.now()
	for {
		switch stateOf(w) {
		case StateOpen:
			if now < b.openUntil.Load() {
				b.tot.add(totalRejected)
				return Permit{}, b.refusal.Load()
			}
			w = b.enterHalfOpen(w, now)
		case StateHalfOpen:
			if probesOf(w) < int64(b.cfg.HalfOpenProbes) {
				// The wait is extended before the slot is taken, so a
				// caller that sees the slots full also sees the wait.
				b.extendProbeWait(now)
				if b.word.CompareAndSwap(w, w+1<<probeShift) {
					b.tot.add(totalAllowed)
					return Permit{b: b, gen: genOf(w), state: StateHalfOpen, start: now}, nil
				}
				w = b.word.Load()
				continue
			}
			if now < b.probeUntil.Load() {
				b.tot.add(totalRejected)
				return Permit{}, b.halfOpenErr
			}
			w = b.halfOpenTimeout(w, now)
		case StateForcedOpen:
			b.tot.add(totalRejected)
			return Permit{}, b.forcedErr
		default:
			b.tot.add(totalAllowed)
			return Permit{b: b, gen: genOf(w), state: stateOf(w), start: now}, nil
		}
	}
}

// Report records how the permitted call ended.
func (p Permit) Report(o Outcome) {
	b := p.b
	if b == nil {
		return
	}
	if genOf(b.word.Load()) != p.gen {
		b.tot.add(totalDropped)
		return
	}
	if o.Result == Ignored {
		b.tot.add(totalIgnored)
		if p.state == StateHalfOpen {
			b.releaseProbe(p.gen)
		}
		return
	}
	var now int64
	if b.needNow || (b.needStart && o.Duration == 0) {
		now = b.now()
	}
	slow := false
	if b.needStart {
		d := o.Duration
		if d == 0 {
			d = time.Duration(now - p.start)
		}
		slow = d >= b.cfg.SlowCallDuration
	}
	failed := o.Result == Failure
	if failed {
		b.tot.add(totalFailed)
	} else {
		b.tot.add(totalSucceeded)
	}
	if slow {
		b.tot.add(totalSlow)
	}
	switch p.state {
	case StateClosed:
		b.recordClosed(p.gen, now, failed, slow, o.RetryAfter)
	case StateHalfOpen:
		b.recordProbe(p.gen, failed || (slow && b.cfg.SlowCallRate > 0), o.RetryAfter)
	case StateDisabled:
		b.recordClosed(p.gen, now, failed, slow, -1)
	}
}

// Success reports a successful call.
func (p Permit) Success() { p.Report(Outcome{Result: Success}) }

// Failure reports a failed call.
func (p Permit) Failure() { p.Report(Outcome{Result: Failure}) }

// Ignore reports a call whose outcome says nothing about the upstream's
// health. A half-open probe's slot is freed for another probe.
func (p Permit) Ignore() { p.Report(Outcome{Result: Ignored}) }

// Done reports the call's error through Config.Classify.
func (p Permit) Done(err error) {
	if p.b != nil {
		p.Report(p.b.cfg.Classify(err))
	}
}

// recordClosed applies an outcome to a closed (or disabled) breaker and
// trips it when a rule fires. A negative hint means "never trip" (disabled).
func (b *Breaker) recordClosed(gen uint64, now int64, failed, slow bool, hint time.Duration) {
	reason := ReasonNone
	if failed {
		if n := b.consecutive.Add(1); b.cfg.ConsecutiveFailures > 0 && n >= int64(b.cfg.ConsecutiveFailures) {
			reason = ReasonConsecutiveFailures
		}
	} else if b.consecutive.Load() != 0 {
		b.consecutive.Store(0)
	}
	if b.win != nil {
		if c, eval := b.win.record(now, failed, slow); eval && reason == ReasonNone {
			reason = b.cfg.tripReason(c)
		}
	}
	if reason != ReasonNone && hint >= 0 {
		b.trip(gen, reason, hint)
	}
}

// trip opens a closed breaker of generation gen.
func (b *Breaker) trip(gen uint64, reason Reason, hint time.Duration) {
	b.mu.Lock()
	w := b.word.Load()
	if genOf(w) != gen || stateOf(w) != StateClosed {
		b.mu.Unlock()
		return
	}
	t := b.openLocked(b.now(), reason, hint)
	b.mu.Unlock()
	b.emit(t)
}

// enterHalfOpen moves an open breaker whose period has ended, still in word
// w, to half-open. It returns the current word.
func (b *Breaker) enterHalfOpen(w uint64, now int64) uint64 {
	b.mu.Lock()
	if b.word.Load() != w {
		w = b.word.Load()
		b.mu.Unlock()
		return w
	}
	b.probesOK = 0
	b.probeUntil.Store(after(now, b.cfg.HalfOpenMaxWait))
	t := b.setLocked(StateHalfOpen, now, ReasonOpenElapsed)
	w = b.word.Load()
	b.mu.Unlock()
	b.emit(t)
	return w
}

// halfOpenTimeout reopens a half-open breaker, still of w's generation,
// whose probes did not decide it within HalfOpenMaxWait.
func (b *Breaker) halfOpenTimeout(w uint64, now int64) uint64 {
	b.mu.Lock()
	cur := b.word.Load()
	if genOf(cur) != genOf(w) {
		b.mu.Unlock()
		return cur
	}
	b.reopens++
	t := b.openLocked(now, ReasonHalfOpenTimeout, 0)
	w = b.word.Load()
	b.mu.Unlock()
	b.emit(t)
	return w
}

// extendProbeWait makes the half-open period wait for its probes at least
// HalfOpenMaxWait from now: a probe admitted late in the period gets the
// whole wait, rather than being taken for lost by the next caller.
func (b *Breaker) extendProbeWait(now int64) {
	until := after(now, b.cfg.HalfOpenMaxWait)
	for {
		old := b.probeUntil.Load()
		if old >= until || b.probeUntil.CompareAndSwap(old, until) {
			return
		}
	}
}

// releaseProbe gives back the probe slot of an ignored probe.
func (b *Breaker) releaseProbe(gen uint64) {
	for {
		w := b.word.Load()
		if genOf(w) != gen || stateOf(w) != StateHalfOpen || probesOf(w) == 0 {
			return
		}
		if b.word.CompareAndSwap(w, w-1<<probeShift) {
			return
		}
	}
}

// recordProbe applies a half-open probe's outcome.
func (b *Breaker) recordProbe(gen uint64, failed bool, hint time.Duration) {
	b.mu.Lock()
	if w := b.word.Load(); genOf(w) != gen || stateOf(w) != StateHalfOpen {
		// Changed state since Report checked: counted in the totals
		// already, it only misses the rules.
		b.mu.Unlock()
		return
	}
	now := b.now()
	var t Transition
	switch {
	case failed:
		b.reopens++
		t = b.openLocked(now, ReasonProbeFailed, hint)
	case b.probesOK+1 >= b.cfg.HalfOpenSuccesses:
		t = b.closeLocked(now, ReasonProbesSucceeded)
	default:
		b.probesOK++
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	b.emit(t)
}

// openLocked opens the breaker for the period due after b.reopens failed
// half-open periods, at least hint long, never ending before a deadline
// already set.
func (b *Breaker) openLocked(now int64, reason Reason, hint time.Duration) Transition {
	d := b.openPeriodLocked()
	until := after(now, d)
	if hint > 0 {
		until = max(until, after(now, min(hint, b.cfg.MaxOpenDuration)))
	}
	until = max(until, b.openUntil.Load())
	b.openUntil.Store(until)
	b.refusal.Store(&OpenError{Name: b.cfg.Name, State: StateOpen, Until: b.sw.Time(time.Duration(until)), clock: b.cfg.Clock})
	b.consecutive.Store(0)
	t := b.setLocked(StateOpen, now, reason)
	gen := genOf(b.word.Load())
	b.openTimer = b.clk.AfterFunc(time.Duration(until-now), func() { b.openDue.Store(gen) })
	return t
}

// openPeriodLocked returns the next open period: OpenDuration grown by
// OpenBackoff per reopen, capped, then jittered.
func (b *Breaker) openPeriodLocked() time.Duration {
	d := float64(b.cfg.OpenDuration)
	if b.cfg.OpenBackoff > 1 {
		for i := 0; i < b.reopens && d < float64(b.cfg.MaxOpenDuration); i++ {
			d *= b.cfg.OpenBackoff
		}
	}
	d = min(d, float64(b.cfg.MaxOpenDuration))
	if j := b.cfg.OpenJitter; j > 0 {
		d *= 1 + j*(2*b.cfg.Rand()-1)
	}
	if d >= math.MaxInt64 {
		return math.MaxInt64 // a float beyond int64 has no defined conversion
	}
	return time.Duration(d)
}

// after returns the instant d after now (ns on the stopwatch), saturating
// instead of wrapping: a period of hundreds of years means "until Reset",
// not "already over".
func after(now int64, d time.Duration) int64 {
	if d > 0 && now > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return now + int64(d)
}

// closeLocked closes the breaker with an empty window.
func (b *Breaker) closeLocked(now int64, reason Reason) Transition {
	if b.win != nil {
		b.win.reset()
	}
	b.consecutive.Store(0)
	b.reopens = 0
	return b.setLocked(StateClosed, now, reason)
}

// setLocked publishes state to, with a new generation and no probes. Fields
// the new state's readers need must be stored before it is called.
func (b *Breaker) setLocked(to State, now int64, reason Reason) Transition {
	old := b.word.Load()
	if b.openTimer != nil {
		b.openTimer.Stop()
		b.openTimer = nil
	}
	b.word.Store((genOf(old)+1)<<genShift | uint64(to))
	b.since = now
	t := Transition{Name: b.cfg.Name, From: stateOf(old), To: to, Reason: reason, At: b.sw.Time(time.Duration(now))}
	if to == StateOpen {
		t.OpenUntil = b.sw.Time(time.Duration(b.openUntil.Load()))
	}
	return t
}

// emit calls the state-change listener; callers must not hold b.mu.
func (b *Breaker) emit(t Transition) {
	if b.cfg.OnStateChange != nil && t.Reason != ReasonNone {
		b.cfg.OnStateChange(t)
	}
}
