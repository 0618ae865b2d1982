package breaker

import "time"

// Snapshot is a breaker's state and figures at one instant, for metrics,
// dashboards and the admin API.
type Snapshot struct {
	Name  string
	State State
	// Since is when the breaker entered State; InState how long ago that was.
	Since   time.Time
	InState time.Duration
	// OpenUntil is when an open breaker admits its next probe (zero unless
	// open); RetryAfter is the time left until then.
	OpenUntil  time.Time
	RetryAfter time.Duration

	// Window counts: calls, failures and slow calls in the sliding window
	// (zero without a window), and the rates among them.
	Calls, Failures, SlowCalls int64
	FailureRate, SlowCallRate  float64
	// ConsecutiveFailures while closed.
	ConsecutiveFailures int64
	// ConsecutiveSuccesses counts the successes (slow ones included) the
	// closed-state rules recorded since the last failure they recorded or
	// the last state change, whichever came later: while StateClosed or
	// StateDisabled, 0 in every other state. Ignored, dropped and probe
	// outcomes do not count.
	ConsecutiveSuccesses int64
	// Probes admitted (and not ignored) and probe successes in the current
	// half-open period; a probe keeps its slot until the period ends.
	Probes, ProbeSuccesses int
	// Reopens counts consecutive failed half-open periods (drives
	// OpenBackoff).
	Reopens int

	Totals Totals
}

// Totals are counts since the breaker was made. Every admitted call ends up
// in exactly one of Succeeded, Failed, Ignored or Dropped once reported, so
// Allowed minus their sum is the calls in flight. Slow counts calls among
// Succeeded and Failed that were slow.
type Totals struct {
	Allowed, Rejected                   uint64
	Succeeded, Failed, Ignored, Dropped uint64
	Slow                                uint64
}

// State returns the breaker's current state, first making any transition
// that has fallen due (an open period that has ended, a half-open period
// with a probe out past HalfOpenMaxWait).
func (b *Breaker) State() State { return stateOf(b.advance()) }

// advance makes transitions due at the current time and returns the word.
func (b *Breaker) advance() uint64 {
	w := b.word.Load()
	now := b.now()
	switch stateOf(w) {
	case StateOpen:
		if now >= b.openUntil.Load() {
			w = b.enterHalfOpen(w, now)
		}
	case StateHalfOpen:
		if now >= b.probeUntil.Load() {
			w = b.halfOpenTimeout(w, now)
		}
	}
	return w
}

// Snapshot returns the breaker's state and figures, after making any
// transition due. The figures are read without stopping calls, so under
// load they may be a few calls apart from each other.
func (b *Breaker) Snapshot() Snapshot {
	w := b.advance()
	now := b.now()
	b.mu.Lock()
	since, reopens, probesOK := b.since, b.reopens, b.probesOK
	b.mu.Unlock()
	s := Snapshot{
		Name:                b.cfg.Name,
		State:               stateOf(w),
		Since:               b.sw.Time(time.Duration(since)),
		InState:             time.Duration(now - since),
		ConsecutiveFailures: b.consecutive.Load(),
		Reopens:             reopens,
		Totals: Totals{
			Allowed:   b.tot.load(totalAllowed),
			Rejected:  b.tot.load(totalRejected),
			Succeeded: b.tot.load(totalSucceeded),
			Failed:    b.tot.load(totalFailed),
			Ignored:   b.tot.load(totalIgnored),
			Dropped:   b.tot.load(totalDropped),
			Slow:      b.tot.load(totalSlow),
		},
	}
	switch s.State {
	case StateClosed, StateDisabled:
		s.ConsecutiveSuccesses = b.consecutiveSuccesses()
	case StateOpen:
		until := b.openUntil.Load()
		s.OpenUntil = b.sw.Time(time.Duration(until))
		s.RetryAfter = max(time.Duration(until-now), 0)
	case StateHalfOpen:
		s.Probes, s.ProbeSuccesses = int(probesOf(w)), probesOK
	}
	if b.win != nil {
		c := b.win.counts(now)
		s.Calls, s.Failures, s.SlowCalls = c.calls, c.failures, c.slow
		s.FailureRate, s.SlowCallRate = c.failureRate(), c.slowRate()
	}
	return s
}

// consecutiveSuccesses returns the successes since the run began (succBase);
// none while the last outcome recorded was a failure.
func (b *Breaker) consecutiveSuccesses() int64 {
	if b.consecutive.Load() != 0 {
		return 0
	}
	n, base := b.tot.load(totalSucceeded), b.succBase.Load()
	if n <= base {
		return 0 // sums read while reports land may cross
	}
	return int64(n - base)
}
