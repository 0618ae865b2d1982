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
// protected call runs or a listener is called. Admitting a half-open probe (a
// handful per half-open period) takes the mutex too; refusals do not.
// Transitions that fall due with time (open → half-open, a half-open period
// with a probe that outlived HalfOpenMaxWait) are made lazily by the next
// call that notices them; a breaker owns no goroutine. While open it keeps
// one Clock.AfterFunc timer that marks the end of the open period, so that
// refusals need not read the clock. Transitions are queued as they are made,
// under the mutex, and delivered to the listener in that order (deliver.go).
type Breaker struct {
	cfg Config
	clk clock.Clock
	sw  clock.Stopwatch
	win window // nil: no window rules
	// needStart: slow calls are measured, so Allow reads the clock.
	// needNow: the window is time-based, so a report reads the clock.
	needStart, needNow bool

	// word is state | probes<<probeShift | generation<<genShift. It is
	// stored only with mu held.
	word        atomic.Uint64
	consecutive atomic.Int64 // consecutive failures while closed
	// succBase is the Succeeded total when the current run of successes
	// began (the last state change, or the first success after a failure):
	// Snapshot derives ConsecutiveSuccesses from it, so a success pays
	// nothing more than its total.
	succBase  atomic.Uint64
	openUntil atomic.Int64 // end of the open period, ns on sw
	// openDue is the generation of the open period whose end has passed,
	// set by a timer so refusals need not read the clock; 0: none.
	openDue atomic.Uint64
	// probeUntil is HalfOpenMaxWait after the admission of the oldest probe
	// of this half-open period that has not reported, ns on sw;
	// math.MaxInt64 when none is out. Stored only with mu held.
	probeUntil atomic.Int64
	refusal    atomic.Pointer[OpenError]
	tot        totals

	halfOpenErr, forcedErr *OpenError

	// mu serialises state changes (stores to word) and guards the fields
	// below.
	mu         sync.Mutex
	since      int64        // when the current state began, ns on sw
	reopens    int          // consecutive failed half-open periods
	openTimer  clock.Timer  // sets openDue; nil unless open
	probesOK   int          // probe successes in this half-open period
	probesOut  []int64      // admission times of this period's unreported probes, ns on sw
	queue      []Transition // made, not yet delivered; queue[head:] is pending
	head       int
	delivering bool // a goroutine is calling the listener
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
// with all probe slots taken (here or, by Config.ProbeGate, in the fleet).
// It never waits, but for a ProbeGate asked in half-open.
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
			if now >= b.probeUntil.Load() {
				// A probe has not reported within HalfOpenMaxWait.
				w = b.halfOpenTimeout(w, now)
				continue
			}
			if probesOf(w) >= int64(b.cfg.HalfOpenProbes) {
				b.tot.add(totalRejected)
				return Permit{}, b.halfOpenErr
			}
			var ok bool
			if w, ok = b.admitProbe(w, now); ok {
				return b.gateProbe(genOf(w), now)
			}
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
			b.releaseProbe(p.gen, p.start)
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
		slow = d > b.cfg.SlowCallDuration
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
		if b.cfg.OnRecord != nil {
			b.cfg.OnRecord(failed, slow)
		}
		b.recordClosed(p.gen, now, failed, slow, o.RetryAfter)
	case StateHalfOpen:
		b.recordProbe(p.gen, p.start, failed || (slow && b.cfg.SlowCallRate > 0), o.RetryAfter)
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
		// The first success after failures starts a run of successes;
		// its own is already in the total.
		b.consecutive.Store(0)
		b.succBase.Store(b.tot.load(totalSucceeded) - 1)
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
	b.openLocked(b.now(), reason, hint)
	b.mu.Unlock()
	b.deliver()
}

// openLocked opens the breaker for the period due after b.reopens failed
// half-open periods, at least hint long, never ending before a deadline
// already set.
func (b *Breaker) openLocked(now int64, reason Reason, hint time.Duration) {
	d := b.openPeriodLocked()
	until := after(now, d)
	if hint > 0 {
		until = max(until, after(now, min(hint, b.cfg.MaxOpenDuration)))
	}
	b.openToLocked(now, max(until, b.openUntil.Load()), reason)
}

// openToLocked opens the breaker until the instant until (ns on the
// stopwatch; at or before now means the period is already over).
func (b *Breaker) openToLocked(now, until int64, reason Reason) {
	b.openUntil.Store(until)
	b.refusal.Store(b.openError(until))
	b.consecutive.Store(0)
	b.setLocked(StateOpen, now, reason)
	b.armOpenTimerLocked(now, until)
}

// armOpenTimerLocked starts the timer that marks the current open period,
// ending at until, as due.
func (b *Breaker) armOpenTimerLocked(now, until int64) {
	gen := genOf(b.word.Load())
	b.openTimer = b.clk.AfterFunc(time.Duration(until-now), func() { b.openDue.Store(gen) })
}

// openError returns the refusal of an open period ending at until.
func (b *Breaker) openError(until int64) *OpenError {
	return &OpenError{Name: b.cfg.Name, State: StateOpen, Until: b.sw.Time(time.Duration(until)), clock: b.cfg.Clock}
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
func (b *Breaker) closeLocked(now int64, reason Reason) {
	if b.win != nil {
		b.win.reset()
	}
	b.consecutive.Store(0)
	b.reopens = 0
	b.setLocked(StateClosed, now, reason)
}

// setLocked publishes state to, with a new generation and no probes, and
// queues the transition for the listener; the caller calls deliver once it
// has released b.mu. Fields the new state's readers need must be stored
// before it is called.
func (b *Breaker) setLocked(to State, now int64, reason Reason) {
	old := b.word.Load()
	if b.openTimer != nil {
		b.openTimer.Stop()
		b.openTimer = nil
	}
	b.succBase.Store(b.tot.load(totalSucceeded))
	b.word.Store((genOf(old)+1)<<genShift | uint64(to))
	b.since = now
	if b.cfg.OnStateChange == nil || reason == ReasonNone {
		return
	}
	t := Transition{Name: b.cfg.Name, From: stateOf(old), To: to, Reason: reason, At: b.sw.Time(time.Duration(now))}
	if to == StateOpen {
		t.OpenUntil = b.sw.Time(time.Duration(b.openUntil.Load()))
	}
	b.queueLocked(t)
}
