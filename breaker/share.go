package breaker

import "time"

// Hooks for keeping one breaker in step across processes (a fleet of
// gateway replicas sharing state through a store the breaker knows nothing
// of). A process publishes its own transitions from Config.OnStateChange,
// skipping those with ReasonRemote, and applies the others' with OpenUntil
// and CloseRemote; ProbeGate shares the probe slots; OnRecord and Trip let
// the caller run a trip rule over the whole fleet's outcomes. Each change
// made here starts a new generation, so outcomes of calls admitted before it
// are dropped, and is delivered to OnStateChange in order with the others.
// Manual states (forced open or closed, disabled) win over all of them.

// Trip opens a closed or half-open breaker now, as if one of its rules had
// tripped: for its next open period (OpenDuration, grown by OpenBackoff,
// jittered), reporting reason, which callers set to ReasonExternal
// (ReasonNone means ReasonExternal). A half-open period it ends counts as a
// failed one, as a probe failure would. An open period that is over is
// first ended, so Trip reopens a breaker that was due to probe. It does
// nothing to a breaker that is open, or in a manual state.
func (b *Breaker) Trip(reason Reason) {
	if reason == ReasonNone {
		reason = ReasonExternal
	}
	b.advance()
	b.mu.Lock()
	switch stateOf(b.word.Load()) {
	case StateClosed:
	case StateHalfOpen:
		b.reopens++
	default:
		b.mu.Unlock()
		return
	}
	b.openLocked(b.now(), reason, 0)
	b.mu.Unlock()
	b.deliver()
}

// OpenUntil makes the breaker open until until, a time on the breaker's
// clock as Transition.OpenUntil and Snapshot.OpenUntil report it (another
// process's transition, say), with ReasonRemote. It reports whether it
// changed anything:
//
//   - closed or half-open: opens until until (a new generation). A half-open
//     period it ends counts as a failed one, as a probe failure would.
//   - open: moves the deadline to until if that is later, and reports true;
//     this is not a state change, so it starts no generation and delivers
//     no Transition (Snapshot and refusals show the new deadline). An
//     earlier deadline changes nothing.
//   - a manual state: changes nothing.
//
// until is capped at MaxOpenDuration from now, so a skewed clock or a bad
// message cannot hold the breaker open for longer than its own rules could.
// An until that is not after now opens a closed breaker with its open
// period already over, reported as open until now: the next call finds it
// due and probes, so a process that missed most of another's open period
// still probes before it trusts the upstream again. Such an until changes
// nothing in any other state: a half-open breaker is where that open period
// led already, an open one is open longer.
func (b *Breaker) OpenUntil(until time.Time) bool {
	b.mu.Lock()
	now := b.now()
	at := min(b.instant(until), after(now, b.cfg.MaxOpenDuration))
	changed := true
	switch w := b.word.Load(); {
	case stateOf(w) == StateClosed:
		b.openToLocked(now, max(at, now), ReasonRemote)
	case at <= now:
		changed = false
	case stateOf(w) == StateHalfOpen:
		b.reopens++
		b.openToLocked(now, at, ReasonRemote)
	case stateOf(w) == StateOpen && at > b.openUntil.Load():
		b.extendOpenLocked(now, at)
	default:
		changed = false
	}
	b.mu.Unlock()
	if changed {
		b.deliver()
	}
	return changed
}

// CloseRemote closes an open or half-open breaker, with ReasonRemote, as a
// successful half-open period does: an empty window, no consecutive
// failures, the open period back to OpenDuration, a new generation. It
// reports whether it changed anything; a closed breaker or one in a manual
// state is left alone.
func (b *Breaker) CloseRemote() bool {
	b.mu.Lock()
	if s := stateOf(b.word.Load()); s != StateOpen && s != StateHalfOpen {
		b.mu.Unlock()
		return false
	}
	b.openUntil.Store(0) // the next trip owes nothing to this period
	b.closeLocked(b.now(), ReasonRemote)
	b.mu.Unlock()
	b.deliver()
	return true
}

// extendOpenLocked moves the end of the current open period to until, later
// than it was, and re-arms the timer that marks it due.
func (b *Breaker) extendOpenLocked(now, until int64) {
	b.openUntil.Store(until)
	b.refusal.Store(b.openError(until))
	if b.openTimer != nil {
		b.openTimer.Stop()
	}
	// If the old timer fired (or is firing as it is stopped), openDue
	// marks this period due: clear the mark so refusals go back to not
	// reading the clock. A mark that lands late only sends refusals
	// through the check against openUntil, which still refuses.
	b.openDue.Store(0)
	b.armOpenTimerLocked(now, until)
}

// instant converts a time on the breaker's clock to ns on its stopwatch
// (saturating, as time.Time.Sub does).
func (b *Breaker) instant(t time.Time) int64 { return int64(t.Sub(b.sw.Time(0))) }
