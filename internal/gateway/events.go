package gateway

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// events logs what an operator needs to know happened, once each: breaker
// transitions, keys leaving and returning to rotation, and episodes of a
// target's limits being full (the first request passed over for them, and
// the first admitted after).
type events struct {
	log *slog.Logger

	// full counts the targets in a saturation episode, so that an attempt
	// pays one atomic load when none is.
	full      atomic.Int32
	mu        sync.Mutex
	saturated map[string]bool // targets whose limits turned requests away
}

// hook adds the events' logging to the router's hooks, after what they
// already do.
func (e *events) hook(spec *router.Spec) {
	onTransition, onSkip, onAttempt := spec.OnTransition, spec.OnSkip, spec.OnAttempt
	spec.OnTransition = func(t breaker.Transition) {
		if onTransition != nil {
			onTransition(t)
		}
		e.transition(t)
	}
	spec.OnSkip = func(t *router.Target, reason string) {
		if onSkip != nil {
			onSkip(t, reason)
		}
		if limitReason(reason) {
			e.episode(t.Name, true, reason)
		}
	}
	spec.OnAttempt = func(a router.AttemptEvent) {
		if onAttempt != nil {
			onAttempt(a)
		}
		if e.full.Load() > 0 {
			e.episode(a.Target.Name, false, "")
		}
	}
}

// limitReason reports whether a skip's reason is a target's own limits.
func limitReason(reason string) bool {
	return reason == "rate limited" || reason == "at its concurrency limit"
}

func (e *events) transition(t breaker.Transition) {
	attrs := []any{"target", t.Name, "from", t.From.String(), "to", t.To.String(), "reason", t.Reason.String()}
	switch t.To {
	case breaker.StateOpen, breaker.StateForcedOpen:
		if !t.OpenUntil.IsZero() {
			attrs = append(attrs, "probe_at", t.OpenUntil)
		}
		e.log.Warn("breaker opened", attrs...)
	default:
		e.log.Info("breaker "+t.To.String(), attrs...)
	}
}

// episode logs the start (full) or end of a target's saturation, once
// each.
func (e *events) episode(target string, full bool, reason string) {
	e.mu.Lock()
	was := e.saturated[target]
	if was != full {
		if e.saturated == nil {
			e.saturated = map[string]bool{}
		}
		e.saturated[target] = full
		if full {
			e.full.Add(1)
		} else {
			e.full.Add(-1)
		}
	}
	e.mu.Unlock()
	switch {
	case full && !was:
		e.log.Warn("target limits full: requests pass it over", "target", target, "reason", reason)
	case !full && was:
		e.log.Info("target limits have room again", "target", target)
	}
}

// keyEvent logs a provider key leaving or returning to the rotation.
func (e *events) keyEvent(k router.KeyEvent) {
	if k.Back {
		e.log.Info("API key back in rotation", "key", k.Key)
		return
	}
	e.log.Warn("API key taken out of rotation", "key", k.Key, "target", k.Target, "verdict", k.Verdict.Kind.String(),
		"code", k.Verdict.Code, "message", k.Verdict.Message, "for", k.For.String())
}
