package router

import (
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
)

// minComeBack is the least wait a 503 announces: one second, Retry-After's
// unit.
const minComeBack = time.Second

// noTarget is the error the walk ends with when its ladder is exhausted.
func (w *Walk) noTarget() *NoTargetError {
	e := &NoTargetError{Alias: w.alias.Name, Skips: w.Skips}
	if w.refused != nil && w.refusals == len(w.Skips) {
		e.Unservable = w.refused
	}
	if w.soonest > 0 {
		e.RetryAfter = time.Duration(w.soonest - w.r.now())
	} else {
		e.RetryAfter = w.comeBack()
	}
	e.RetryAfter = max(e.RetryAfter, minComeBack)
	return e
}

// comeBack is how long a walk that skipped nothing with a known return
// (its attempts failed) tells its client to wait: steps 2 to 4 of the
// package doc's "Coming back".
func (w *Walk) comeBack() time.Duration {
	var soonest time.Duration
	for _, t := range w.order {
		if s := t.breaker.Snapshot(); s.State == breaker.StateOpen && s.RetryAfter > 0 && (soonest == 0 || s.RetryAfter < soonest) {
			soonest = s.RetryAfter
		}
	}
	if soonest == 0 && w.failed != nil {
		soonest = w.failed.Verdict.Wait
	}
	if soonest == 0 {
		soonest = w.shortestOpen()
	}
	return soonest
}

// shortestOpen is the shortest open period of the walk's targets'
// breakers.
func (w *Walk) shortestOpen() time.Duration {
	var d time.Duration
	for _, t := range w.order {
		if d == 0 || t.openFor < d {
			d = t.openFor
		}
	}
	return d
}

// openPeriod is the open period a breaker built from c has before any
// backoff: c.OpenDuration, or the breaker's default when it is zero.
func openPeriod(c breaker.Config) time.Duration {
	if c.OpenDuration > 0 {
		return c.OpenDuration
	}
	return breaker.DefaultOpenDuration
}
