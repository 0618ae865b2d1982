package breaker

import (
	"math"
	"time"
)

// What a half-open period admits, and how it ends. Every probe admitted in a
// period is bounded by HalfOpenMaxWait from its admission: the period keeps
// the admission times of its probes that have not reported (probesOut) and
// publishes the earliest deadline among them in probeUntil, which callers
// compare with the time without taking the lock.

// enterHalfOpen moves an open breaker whose period has ended, still in word
// w, to half-open. It returns the current word.
func (b *Breaker) enterHalfOpen(w uint64, now int64) uint64 {
	b.mu.Lock()
	if b.word.Load() != w || now < b.openUntil.Load() {
		// Changed, or the deadline moved (OpenUntil) since w was read.
		w = b.word.Load()
		b.mu.Unlock()
		return w
	}
	b.probesOK = 0
	b.probesOut = b.probesOut[:0]
	b.probeUntil.Store(math.MaxInt64)
	b.setLocked(StateHalfOpen, now, ReasonOpenElapsed)
	w = b.word.Load()
	b.mu.Unlock()
	b.deliver()
	return w
}

// halfOpenTimeout reopens a half-open breaker, still of w's generation,
// with a probe that has not reported within HalfOpenMaxWait of its
// admission. It returns the current word.
func (b *Breaker) halfOpenTimeout(w uint64, now int64) uint64 {
	b.mu.Lock()
	cur := b.word.Load()
	if genOf(cur) != genOf(w) || now < b.probeUntil.Load() {
		// Changed, or the late probe reported since the caller looked.
		b.mu.Unlock()
		return cur
	}
	b.reopens++
	b.openLocked(now, ReasonHalfOpenTimeout, 0)
	w = b.word.Load()
	b.mu.Unlock()
	b.deliver()
	return w
}

// admitProbe takes a probe slot of the half-open period of word w for a
// probe admitted at now. It reports whether it did, with the current word.
func (b *Breaker) admitProbe(w uint64, now int64) (uint64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.word.Load()
	if genOf(cur) != genOf(w) || probesOf(cur) >= int64(b.cfg.HalfOpenProbes) {
		return cur, false
	}
	b.probesOut = append(b.probesOut, now)
	b.probeUntil.Store(min(b.probeUntil.Load(), after(now, b.cfg.HalfOpenMaxWait)))
	cur += 1 << probeShift
	b.word.Store(cur)
	return cur, true
}

// gateProbe asks Config.ProbeGate, if set, whether the probe admitted at
// start in generation gen may go; if not, its slot is given back and the
// call refused as when all slots are taken.
func (b *Breaker) gateProbe(gen uint64, start int64) (Permit, error) {
	if b.cfg.ProbeGate != nil && !b.cfg.ProbeGate() {
		b.releaseProbe(gen, start)
		b.tot.add(totalRejected)
		return Permit{}, b.halfOpenErr
	}
	b.tot.add(totalAllowed)
	return Permit{b: b, gen: gen, state: StateHalfOpen, start: start}, nil
}

// releaseProbe gives back the slot of the probe of generation gen admitted
// at start (an ignored probe, or one the ProbeGate refused).
func (b *Breaker) releaseProbe(gen uint64, start int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.word.Load()
	if genOf(w) != gen || probesOf(w) == 0 {
		return
	}
	b.word.Store(w - 1<<probeShift)
	b.reportedLocked(start)
}

// reportedLocked stops the probe admitted at start from bounding the
// half-open period. Probes admitted at the same instant have the same
// deadline, so any one of them may stand for another.
func (b *Breaker) reportedLocked(start int64) {
	until := int64(math.MaxInt64)
	found := false
	out := b.probesOut[:0]
	for _, at := range b.probesOut {
		if at == start && !found {
			found = true
			continue
		}
		out = append(out, at)
		until = min(until, after(at, b.cfg.HalfOpenMaxWait))
	}
	b.probesOut = out
	b.probeUntil.Store(until)
}

// recordProbe applies the outcome of the probe of generation gen admitted
// at start.
func (b *Breaker) recordProbe(gen uint64, start int64, failed bool, hint time.Duration) {
	b.mu.Lock()
	if w := b.word.Load(); genOf(w) != gen {
		// Changed state since Report checked: counted in the totals
		// already, it only misses the rules.
		b.mu.Unlock()
		return
	}
	now := b.now()
	switch {
	case failed:
		b.reopens++
		b.openLocked(now, ReasonProbeFailed, hint)
	case b.probesOK+1 >= b.cfg.HalfOpenSuccesses:
		b.closeLocked(now, ReasonProbesSucceeded)
	default:
		// The probe keeps its slot until the period ends, but no longer
		// bounds it.
		b.probesOK++
		b.reportedLocked(start)
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	b.deliver()
}
