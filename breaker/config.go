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
	// SlowCallDuration makes a call that takes at least this long slow,
	// whether it succeeded or failed. 0: no call is slow.
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
	// HalfOpenMaxWait bounds a half-open period: if the probes have not
	// decided it within HalfOpenMaxWait of the last probe admitted (lost or
	// hung probes), the breaker opens again. 0: 60 s. Raise it above your
	// slowest legitimate call.
	HalfOpenMaxWait time.Duration

	// Classify maps the error of a call run by Execute to its outcome.
	// nil: DefaultClassify. A call whose context the caller cancelled is
	// ignored before Classify is asked, unless CountCanceled is set.
	Classify func(error) Outcome
	// CountCanceled makes Execute pass calls ended by the caller's own
	// cancellation to Classify instead of ignoring them.
	CountCanceled bool

	// OnStateChange, if set, is called after every state change, never with
	// the breaker's lock held. Calls for concurrent changes may overlap.
	OnStateChange func(Transition)

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
