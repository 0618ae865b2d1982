package batch

import (
	"math"
	"sync/atomic"
)

// progress holds a run's counters, read by Progress while it runs.
type progress struct {
	read, skipped, ok, dead       atomic.Int64
	sending, waiting              atomic.Int64
	throttled, retried            atomic.Int64
	tokensIn, tokensOut           atomic.Int64
	costBits, maxBits             atomic.Uint64 // float64 bits
	priorOK, priorDead, priorCost atomic.Uint64
}

// resumed counts what earlier runs finished.
func (p *progress) resumed(cp checkpoint) {
	p.priorOK.Store(uint64(cp.ok))
	p.priorDead.Store(uint64(cp.failed))
	p.costBits.Store(math.Float64bits(cp.cost))
}

func addFloat(a *atomic.Uint64, d float64) {
	for {
		old := a.Load()
		if a.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func raiseFloat(a *atomic.Uint64, v float64) {
	for {
		old := a.Load()
		if v <= math.Float64frombits(old) || a.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

func (p *progress) maxCost() float64 { return math.Float64frombits(p.maxBits.Load()) }

// Progress is a snapshot of a running batch.
type Progress struct {
	// Read counts input lines read this run, Skipped those of them done
	// by an earlier run.
	Read, Skipped int64
	// OK and Dead count lines finished, answered and dead-lettered, in
	// this run and earlier ones together.
	OK, Dead int64
	// InFlight counts lines admitted and not yet finished (at most
	// Concurrency); Sending those of them being sent now, the others
	// waiting to be retried or for their turn.
	InFlight, Sending int64
	// Throttled counts throttle answers, Retried the attempts after a
	// line's first.
	Throttled, Retried int64
	// Concurrency is the current limit on lines sent at once.
	Concurrency int
	// TokensIn, TokensOut and Cost are the usage and spending so far (the
	// cost across runs).
	TokensIn, TokensOut int64
	Cost                float64
}

// Progress returns the batch's counters now.
func (r *Runner) Progress() Progress {
	p := &r.p
	return Progress{
		Read: p.read.Load(), Skipped: p.skipped.Load(),
		OK: p.ok.Load() + int64(p.priorOK.Load()), Dead: p.dead.Load() + int64(p.priorDead.Load()),
		InFlight: p.waiting.Load(), Sending: p.sending.Load(),
		Throttled: p.throttled.Load(), Retried: p.retried.Load(),
		Concurrency: r.aimd.Limit(),
		TokensIn:    p.tokensIn.Load(), TokensOut: p.tokensOut.Load(),
		Cost: math.Float64frombits(p.costBits.Load()),
	}
}
