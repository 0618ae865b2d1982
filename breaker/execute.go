package breaker

import (
	"context"
	"errors"
)

// Execute runs fn if the breaker admits it and records its outcome through
// Config.Classify. A refused call returns an *OpenError (matching ErrOpen)
// without running fn. A context that is already done returns its error
// without asking the breaker: a caller's cancellation is never the
// upstream's failure. If fn returns after the caller cancelled ctx, the call
// is ignored (unless Config.CountCanceled). If fn panics, the call counts as
// a failure and the panic goes on.
func (b *Breaker) Execute(ctx context.Context, fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := b.Allow()
	if err != nil {
		return err
	}
	reported := false
	defer func() {
		if !reported {
			p.Failure()
		}
	}()
	err = fn(ctx)
	reported = true
	if err != nil && !b.cfg.CountCanceled && errors.Is(ctx.Err(), context.Canceled) {
		p.Ignore()
		return err
	}
	p.Report(b.cfg.Classify(err))
	return err
}
