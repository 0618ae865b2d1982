package breaker

// counts is what a window holds: calls, failures and slow calls among them.
type counts struct {
	calls, failures, slow int64
}

func (c counts) failureRate() float64 { return rate(c.failures, c.calls) }
func (c counts) slowRate() float64    { return rate(c.slow, c.calls) }

func rate(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	// Unsynchronised reads of a striped window can see a failure before
	// its call; a rate never exceeds 1.
	return min(float64(n)/float64(of), 1)
}

// window is a sliding window of outcomes, time-based or count-based. Both
// are safe for concurrent use.
type window interface {
	// record adds one outcome at now (nanoseconds on the breaker's
	// stopwatch). It reports the counts afterwards and whether they are
	// worth evaluating: false when the window holds no failure or slow
	// call, so no rule can fire.
	record(now int64, failed, slow bool) (c counts, evaluate bool)
	// counts returns the window's counts at now.
	counts(now int64) counts
	// reset empties the window.
	reset()
}

// tripReason evaluates the window rules on c and returns the first that
// fires, or ReasonNone.
func (cfg *Config) tripReason(c counts) Reason {
	if cfg.FailureThreshold > 0 && c.failures >= int64(cfg.FailureThreshold) {
		return ReasonFailureThreshold
	}
	if c.calls < int64(cfg.MinCalls) {
		return ReasonNone
	}
	if cfg.FailureRate > 0 && c.failures > 0 && c.failureRate() >= cfg.FailureRate {
		return ReasonFailureRate
	}
	if cfg.SlowCallRate > 0 && c.slow > 0 && c.slowRate() >= cfg.SlowCallRate {
		return ReasonSlowCallRate
	}
	return ReasonNone
}
