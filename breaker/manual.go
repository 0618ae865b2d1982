package breaker

// Manual control, for operators and tests. Each change takes effect at once,
// starts a new generation (outcomes of calls admitted before it are dropped)
// and is reported to OnStateChange with ReasonManual. Forcing the state the
// breaker is already in is not a change: it does nothing.

// ForceOpen refuses every call until Reset or another manual state.
func (b *Breaker) ForceOpen() { b.setManual(StateForcedOpen) }

// ForceClosed admits every call and never trips; outcomes count only in the
// totals, the window is left as it was.
func (b *Breaker) ForceClosed() { b.setManual(StateForcedClosed) }

// Disable admits every call, records outcomes in the window (so Snapshot shows
// what would trip) but never trips.
func (b *Breaker) Disable() { b.setManual(StateDisabled) }

// Reset returns the breaker to closed with an empty window, no consecutive
// failures and the open period back to OpenDuration.
func (b *Breaker) Reset() {
	b.mu.Lock()
	now := b.now()
	b.openUntil.Store(0)
	b.closeLocked(now, ReasonManual)
	b.mu.Unlock()
	b.deliver()
}

func (b *Breaker) setManual(s State) {
	b.mu.Lock()
	if stateOf(b.word.Load()) == s {
		// Idempotent: an admin API or reconcile loop may repeat itself;
		// that must not emit events or drop the outcomes of calls in flight.
		b.mu.Unlock()
		return
	}
	b.setLocked(s, b.now(), ReasonManual)
	b.mu.Unlock()
	b.deliver()
}
