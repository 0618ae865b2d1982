package breaker

import (
	"errors"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Helpers for the scenario_*_test.go files: behaviours taken from other
// circuit-breaker libraries' test suites, re-expressed with our API and the
// fake clock.

// mustAllow asks for a permit and fails the test if the call is refused.
func mustAllow(t *testing.T, b *Breaker) Permit {
	t.Helper()
	p, err := b.Allow()
	if err != nil {
		t.Fatalf("Allow refused (state %v): %v", b.State(), err)
	}
	return p
}

// mustRefuse asks for a permit, fails the test if the call is admitted, and
// returns the refusal.
func mustRefuse(t *testing.T, b *Breaker) *OpenError {
	t.Helper()
	_, err := b.Allow()
	var oe *OpenError
	if !errors.As(err, &oe) || !errors.Is(err, ErrOpen) {
		t.Fatalf("Allow = %v (state %v); want an *OpenError matching ErrOpen", err, b.State())
	}
	return oe
}

func wantState(t *testing.T, b *Breaker, want State) {
	t.Helper()
	if got := b.State(); got != want {
		t.Fatalf("state %v; want %v", got, want)
	}
}

// wantWindow checks the window's calls and failures in a snapshot.
func wantWindow(t *testing.T, b *Breaker, calls, failures int64) {
	t.Helper()
	if s := b.Snapshot(); s.Calls != calls || s.Failures != failures {
		t.Fatalf("window holds %d calls, %d failures; want %d, %d", s.Calls, s.Failures, calls, failures)
	}
}

// transitions collects the breaker's state changes; single goroutine use.
type transitions []Transition

func (ts *transitions) add(t Transition) { *ts = append(*ts, t) }

func (ts transitions) last() Transition {
	if len(ts) == 0 {
		return Transition{}
	}
	return ts[len(ts)-1]
}

var errBoom = errors.New("boom")

func isOpen(err error) bool { return errors.Is(err, ErrOpen) }

// clocktestStart is the fake clock's default start, the zero of newTest.
func clocktestStart() time.Time { return clocktest.New(time.Time{}).Now() }
