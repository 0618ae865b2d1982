package breaker

import (
	"errors"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// halfOpen returns a breaker made from cfg (plus ConsecutiveFailures 1 and
// an OpenDuration of 1 s) that has tripped and is half-open, no probe out.
func halfOpen(t *testing.T, cfg Config) (*Breaker, *clocktest.Clock) {
	t.Helper()
	cfg.ConsecutiveFailures, cfg.OpenDuration = 1, time.Second
	b, clk := newTest(t, cfg)
	run(t, b, clk, seq(one(step{0, opFailure, StateOpen}), one(step{time.Second, opNone, StateHalfOpen})))
	return b, clk
}

// With two probe slots, one probe that never reports no longer keeps the
// breaker half-open for ever while the other slot is free: HalfOpenMaxWait
// bounds every probe from its own admission.
func TestHalfOpenMaxWaitBoundsEveryProbe(t *testing.T) {
	cfg := Config{HalfOpenProbes: 2, HalfOpenMaxWait: 10 * time.Second}

	t.Run("lost probe, slot free", func(t *testing.T) {
		var events transitions
		cfg := cfg
		cfg.OnStateChange = events.add
		b, clk := halfOpen(t, cfg)
		lost := mustAllow(t, b)
		clk.Advance(10*time.Second - 1)
		wantState(t, b, StateHalfOpen)
		clk.Advance(1)
		oe := mustRefuse(t, b) // the call that notices reopens and is refused
		if oe.State != StateOpen || events.last().Reason != ReasonHalfOpenTimeout {
			t.Fatalf("refused by %v after %+v; want open on a half-open timeout", oe.State, events.last())
		}
		lost.Success() // too late: dropped
		wantState(t, b, StateOpen)
		if s := b.Snapshot(); s.Reopens != 1 || s.Totals.Dropped != 1 {
			t.Fatalf("snapshot %+v; want 1 reopen, the late probe dropped", s)
		}
	})

	t.Run("State notices too", func(t *testing.T) {
		b, clk := halfOpen(t, cfg)
		mustAllow(t, b)
		clk.Advance(10 * time.Second)
		wantState(t, b, StateOpen)
	})

	t.Run("oldest unreported probe bounds the period", func(t *testing.T) {
		b, clk := halfOpen(t, cfg)
		lost := mustAllow(t, b)
		clk.Advance(5 * time.Second)
		mustAllow(t, b).Ignore() // a later probe reports; the lost one still bounds
		clk.Advance(5*time.Second - 1)
		wantState(t, b, StateHalfOpen)
		clk.Advance(1)
		wantState(t, b, StateOpen)
		lost.Failure()
	})

	t.Run("a reported probe stops bounding it", func(t *testing.T) {
		b, clk := halfOpen(t, cfg) // HalfOpenSuccesses 2: one success does not close
		first := mustAllow(t, b)
		clk.Advance(5 * time.Second)
		second := mustAllow(t, b)
		first.Success()
		clk.Advance(10*time.Second - 1) // 15 s after the first, 10 s after the second
		wantState(t, b, StateHalfOpen)
		clk.Advance(1)
		wantState(t, b, StateOpen)
		second.Success()
	})

	t.Run("no probe out: nothing to wait for", func(t *testing.T) {
		b, clk := halfOpen(t, cfg)
		mustAllow(t, b).Ignore()
		clk.Advance(time.Hour)
		wantState(t, b, StateHalfOpen)
		mustAllow(t, b).Success()
		mustAllow(t, b).Success()
		wantState(t, b, StateClosed)
	})
}

// ProbeGate is asked only in half-open, once a local slot is taken; false
// gives the slot back and refuses the call as a full half-open does.
func TestProbeGate(t *testing.T) {
	var b *Breaker
	asked, open := 0, false
	b, clk := newTest(t, Config{ConsecutiveFailures: 1, OpenDuration: time.Second, ProbeGate: func() bool {
		asked++
		if !b.mu.TryLock() {
			t.Error("ProbeGate called with the breaker's lock held")
		} else {
			b.mu.Unlock()
		}
		if s := b.Snapshot(); s.Probes != 1 {
			t.Errorf("ProbeGate asked with %d local slots taken; want 1", s.Probes)
		}
		return open
	}})
	mustAllow(t, b).Failure()
	mustRefuse(t, b)
	if asked != 0 {
		t.Fatalf("ProbeGate asked %d times while closed or open", asked)
	}
	clk.Advance(time.Second)
	refused := mustRefuse(t, b)
	if refused != b.halfOpenErr || asked != 1 {
		t.Fatalf("gate said no: refused with %+v after %d asks; want the half-open-full error after 1", refused, asked)
	}
	if s := b.Snapshot(); s.State != StateHalfOpen || s.Probes != 0 || s.Totals.Rejected != 2 || s.Totals.Allowed != 1 {
		t.Fatalf("snapshot %+v; want half-open, the slot given back, the call rejected", s)
	}
	open = true
	probe := mustAllow(t, b)
	if _, err := b.Allow(); !errors.Is(err, ErrOpen) || asked != 2 {
		t.Fatalf("second call with the one slot taken: %v after %d asks; want refused without asking", err, asked)
	}
	probe.Success()
	wantState(t, b, StateClosed)
	mustAllow(t, b).Success()
	if asked != 2 {
		t.Fatalf("ProbeGate asked %d times; want 2", asked)
	}
}
