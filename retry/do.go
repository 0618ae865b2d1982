package retry

import (
	"context"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
)

// Do calls fn until it returns nil or the policy stops, and returns nil or an
// *Error holding the last error and the reason for stopping. fn gets the
// attempt's number, from 1, and should return promptly once ctx is done.
//
// Between attempts Do follows Next, then asks the Budget (if any) for the
// retry, then calls OnRetry (if any), then waits on Clock. It never starts a
// wait that would reach the context's deadline, and it returns as soon as the
// context ends, with an *Error matching the context's error. Do tells the
// Budget of one request per call.
//
// Do does not allocate unless it fails (one *Error) or waits (one timer,
// reused for every wait).
func (p *Policy) Do(ctx context.Context, fn func(ctx context.Context, attempt int) error) error {
	s := p.resolve()
	var budget *Budget
	var onRetry func(Attempt)
	var c clock.Clock
	if p != nil {
		budget, onRetry, c = p.Budget, p.OnRetry, p.Clock
	}
	c = clock.Or(c)
	if budget != nil {
		budget.Request()
	}
	var w waiter
	defer w.stop()
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return canceled(ctx, attempt-1, nil)
		}
		err := fn(ctx, attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return canceled(ctx, attempt, err)
		}
		wait, reason := s.next(p.classifier(), attempt, err, Remaining(ctx, c.Now()))
		if reason == ReasonNone && budget != nil && !budget.TryRetry() {
			reason = ReasonBudget
		}
		if reason != ReasonNone {
			return stopped(reason, attempt, wait, err)
		}
		if onRetry != nil {
			onRetry(Attempt{N: attempt, Err: err, Wait: wait})
		}
		if !w.wait(ctx, c, wait) {
			return canceled(ctx, attempt, err)
		}
	}
}

// waiter waits on one timer, made at the first wait and reset for the next.
type waiter struct{ timer clock.Timer }

// wait waits for d on c and reports true, or false if ctx ends first. A d of
// zero or less returns true at once.
func (w *waiter) wait(ctx context.Context, c clock.Clock, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	if w.timer == nil {
		w.timer = c.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C():
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *waiter) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// stopped builds Do's error for a stop decided by the rules or the budget.
func stopped(reason Reason, attempts int, wait time.Duration, last error) *Error {
	e := &Error{Reason: reason, Attempts: attempts, Last: last, cause: reason.sentinel()}
	if reason == ReasonHintTooLong || reason == ReasonDeadline || reason == ReasonBudget {
		e.Wait = wait
	}
	return e
}

// canceled builds Do's error for a context that ended.
func canceled(ctx context.Context, attempts int, last error) *Error {
	return &Error{Reason: ReasonCanceled, Attempts: attempts, Last: last, cause: ctx.Err()}
}
