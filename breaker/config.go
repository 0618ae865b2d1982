package breaker

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Config sets a breaker's trip rules, open period and half-open policy. Every
// trip rule is off when its field is zero, and the rules combine: the breaker
// trips when any one of them fires. When no rule is set at all, the breaker
// trips after 5 consecutive failures.
//
// The zero value of every other field is a documented default; New fills the
// defaults and rejects out-of-range values with an error naming the field.
type Config struct {
	// Name identifies the breaker in errors, events and snapshots.
	Name string

	// Window is the length of a time-based sliding window: outcomes of the
	// last Window count toward FailureThreshold, FailureRate and SlowCallRate.
	// It is kept in Buckets buckets, so memory is fixed and each call O(1);
	// outcomes leave the window a whole bucket at a time.
	Window time.Duration
	// Buckets is how many buckets a time window has. 0: 10.
	Buckets int
	// WindowCalls, when Window is 0, makes the window count-based: the last
	// WindowCalls outcomes. Setting both Window and WindowCalls is an error.
	WindowCalls int

	// FailureThreshold trips the breaker when the window holds at least this
	// many failures ("5 failures within 60 s"). Needs a window.
	FailureThreshold int
	// FailureRate trips the breaker when failures/calls in the window reach
	// this fraction (0 < rate <= 1), once MinCalls calls are in the window.
	FailureRate float64
	// MinCalls is how many calls the window must hold before FailureRate and
	// SlowCallRate are evaluated. 0: 1. With a count window it is capped at
	// WindowCalls.
	MinCalls int
	// ConsecutiveFailures trips the breaker after this many failures in a
	// row, whatever the window says. Needs no window.
	ConsecutiveFailures int
	// SlowCallDuration makes a call that takes longer than this slow,
	// whether it succeeded or failed; a call of exactly SlowCallDuration is
	// not slow (resilience4j's reading). 0: no call is slow.
	SlowCallDuration time.Duration
	// SlowCallRate trips the breaker when slow calls/calls in the window
	// reach this fraction (0 < rate <= 1), once MinCalls calls are in the
	// window. Needs SlowCallDuration and a window.
	SlowCallRate float64

	// OpenDuration is how long the breaker stays open before it admits
	// probes. 0: 30 s.
	OpenDuration time.Duration
	// OpenBackoff multiplies the open period on each consecutive reopen (a
	// failed half-open); the count resets when the breaker closes. 0 or 1:
	// fixed open period.
	OpenBackoff float64
	// MaxOpenDuration caps the open period grown by OpenBackoff and by wait
	// hints. 0: 10 × OpenDuration.
	MaxOpenDuration time.Duration
	// OpenJitter spreads each open period uniformly over ±OpenJitter of its
	// length (0 <= jitter < 1), so breakers that tripped together do not
	// probe together. 0: none.
	OpenJitter float64

	// HalfOpenProbes is how many probe calls a half-open period admits;
	// calls beyond it are refused at once. 0: HalfOpenSuccesses, or 1.
	HalfOpenProbes int
	// HalfOpenSuccesses is how many probe successes close the breaker. Any
	// probe failure reopens it. 0: HalfOpenProbes.
	HalfOpenSuccesses int
	// HalfOpenMaxWait bounds every probe: if a probe admitted in a
	// half-open period has not reported within HalfOpenMaxWait of its
	// admission (lost or hung), the breaker opens again, whether or not
	// other probe slots are free. A probe that has reported (a success that
	// did not yet close the breaker) no longer bounds the period; with no
	// probe out, the breaker stays half-open until the next call probes.
	// 0: 60 s. Raise it above your slowest legitimate call.
	HalfOpenMaxWait time.Duration

	// Classify maps the error of a call run by Execute to its outcome.
	// nil: DefaultClassify. A call whose context the caller cancelled is
	// ignored before Classify is asked, unless CountCanceled is set.
	Classify func(error) Outcome
	// CountCanceled makes Execute pass calls ended by the caller's own
	// cancellation to Classify instead of ignoring them.
	CountCanceled bool

	// OnStateChange, if set, is called once for every state change, in the
	// order the changes were made, one call at a time: each Transition's
	// From is the previous one's To. It is never called with the breaker's
	// lock held, so it may call the breaker; a change it causes is
	// delivered after it returns. Each call is made by the goroutine that
	// made the change or, if another goroutine is delivering already, by
	// that one, after the changes before it: the call that caused a change
	// may return before the listener has seen it, and a slow listener holds
	// up the goroutine that delivers.
	OnStateChange func(Transition)

	// ProbeGate, if set, lets processes that share a breaker share its
	// probes. Allow calls it in half-open only, once it has taken a local
	// probe slot and without the breaker's lock; false means another
	// process holds the fleet's probe slots, and the slot is given back and
	// the call refused as when all slots are taken (an *OpenError with
	// State StateHalfOpen). It may block for a round trip; the probe's
	// HalfOpenMaxWait and measured duration include that time. nil: every
	// local slot may probe.
	ProbeGate func() bool
	// OnRecord, if set, is called from Report, synchronously and without
	// the breaker's lock, for every outcome the closed-state rules counted:
	// calls admitted while closed and reported in the same generation, not
	// ignored. It is not called for ignored or dropped outcomes, probes, or
	// calls in a manual state (forced closed, disabled). failed and slow
	// are the outcome as the rules see it. It is called before the rules
	// evaluate the outcome, so a transition that outcome causes comes after
	// it. A caller may feed the outcomes to a rule of its own over several
	// processes and Trip the breaker. Keep it cheap: it runs on every call.
	OnRecord func(failed, slow bool)

	// Clock is the time source. nil: the system clock.
	Clock clock.Clock
	// Rand returns uniform numbers in [0, 1) for OpenJitter. nil: math/rand/v2.
	Rand func() float64
}

// Defaults used when the corresponding Config field is zero.
const (
	DefaultBuckets             = 10
	DefaultOpenDuration        = 30 * time.Second
	DefaultHalfOpenMaxWait     = 60 * time.Second
	DefaultConsecutiveFailures = 5
	maxBuckets                 = 1 << 12
)

// withDefaults returns c with zero fields filled, or an error naming the first
// field out of range.
func (c Config) withDefaults() (Config, error) {
	if err := c.validate(); err != nil {
		return c, err
	}
	if c.Window > 0 && c.Buckets == 0 {
		c.Buckets = DefaultBuckets
		if c.Window < time.Duration(c.Buckets) {
			c.Buckets = int(c.Window)
		}
	}
	if c.MinCalls == 0 {
		c.MinCalls = 1
	}
	if c.WindowCalls > 0 && c.MinCalls > c.WindowCalls {
		c.MinCalls = c.WindowCalls
	}
	if !c.hasRule() {
		c.ConsecutiveFailures = DefaultConsecutiveFailures
	}
	if c.OpenDuration == 0 {
		c.OpenDuration = DefaultOpenDuration
	}
	if c.MaxOpenDuration == 0 {
		c.MaxOpenDuration = 10 * c.OpenDuration
		if c.OpenDuration > math.MaxInt64/10 {
			c.MaxOpenDuration = math.MaxInt64 // 10× would overflow
		}
	}
	if c.HalfOpenProbes == 0 {
		c.HalfOpenProbes = max(c.HalfOpenSuccesses, 1)
	}
	if c.HalfOpenSuccesses == 0 {
		c.HalfOpenSuccesses = c.HalfOpenProbes
	}
	if c.HalfOpenMaxWait == 0 {
		c.HalfOpenMaxWait = DefaultHalfOpenMaxWait
	}
	if c.Classify == nil {
		c.Classify = DefaultClassify
	}
	return c, nil
}

func (c Config) hasRule() bool {
	return c.FailureThreshold > 0 || c.FailureRate > 0 || c.ConsecutiveFailures > 0 || c.SlowCallRate > 0
}

func (c Config) hasWindow() bool { return c.Window > 0 || c.WindowCalls > 0 }

func (c Config) validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("breaker %q: %s = %v: %s", c.Name, field, v, why))
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"Window", c.Window}, {"SlowCallDuration", c.SlowCallDuration}, {"OpenDuration", c.OpenDuration},
		{"MaxOpenDuration", c.MaxOpenDuration}, {"HalfOpenMaxWait", c.HalfOpenMaxWait}} {
		if f.v < 0 {
			bad(f.name, f.v, "must not be negative")
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Buckets", c.Buckets}, {"WindowCalls", c.WindowCalls}, {"FailureThreshold", c.FailureThreshold},
		{"MinCalls", c.MinCalls}, {"ConsecutiveFailures", c.ConsecutiveFailures},
		{"HalfOpenProbes", c.HalfOpenProbes}, {"HalfOpenSuccesses", c.HalfOpenSuccesses}} {
		if f.v < 0 {
			bad(f.name, f.v, "must not be negative")
		}
	}
	if c.Buckets > maxBuckets {
		bad("Buckets", c.Buckets, fmt.Sprintf("must be at most %d", maxBuckets))
	}
	if c.Window > 0 && c.WindowCalls > 0 {
		bad("WindowCalls", c.WindowCalls, "set Window (time-based) or WindowCalls (count-based), not both")
	}
	if c.Buckets > 0 && c.Window == 0 {
		bad("Buckets", c.Buckets, "needs a time Window")
	}
	if c.FailureRate < 0 || c.FailureRate > 1 {
		bad("FailureRate", c.FailureRate, "must be in (0, 1]")
	}
	if c.SlowCallRate < 0 || c.SlowCallRate > 1 {
		bad("SlowCallRate", c.SlowCallRate, "must be in (0, 1]")
	}
	if c.OpenJitter < 0 || c.OpenJitter >= 1 {
		bad("OpenJitter", c.OpenJitter, "must be in [0, 1)")
	}
	if c.OpenBackoff < 0 {
		bad("OpenBackoff", c.OpenBackoff, "must not be negative")
	}
	if !c.hasWindow() {
		for _, f := range []struct {
			name string
			set  bool
			v    any
		}{{"FailureThreshold", c.FailureThreshold > 0, c.FailureThreshold}, {"FailureRate", c.FailureRate > 0, c.FailureRate},
			{"SlowCallRate", c.SlowCallRate > 0, c.SlowCallRate}} {
			if f.set {
				bad(f.name, f.v, "needs a window: set Window or WindowCalls")
			}
		}
	}
	if c.SlowCallRate > 0 && c.SlowCallDuration == 0 {
		bad("SlowCallRate", c.SlowCallRate, "needs SlowCallDuration")
	}
	if c.HalfOpenProbes > 0 && c.HalfOpenSuccesses > c.HalfOpenProbes {
		bad("HalfOpenSuccesses", c.HalfOpenSuccesses, fmt.Sprintf("cannot exceed HalfOpenProbes (%d)", c.HalfOpenProbes))
	}
	if c.MaxOpenDuration > 0 && c.OpenDuration > c.MaxOpenDuration {
		bad("MaxOpenDuration", c.MaxOpenDuration, fmt.Sprintf("is below OpenDuration (%v)", c.OpenDuration))
	}
	return errors.Join(errs...)
}
