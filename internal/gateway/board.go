package gateway

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// board is what the dashboard knows beyond the router's own state: the
// timeline of recent events, each target's throttle (the provider's
// Retry-After being honoured), the sampled history and the live streams.
// It is fed by router hooks that run on state changes, never per request,
// except one comparison per attempt for throttles. It is safe for
// concurrent use.
type board struct {
	clk      clock.Clock
	timeline timeline
	// throttles maps a target's name to the end of its current throttle,
	// in Unix ns (*atomic.Int64).
	throttles sync.Map
	hist      *history
	hub       *hub
}

// newBoard returns a board on clk, sampling every interval (0: 5 s).
func newBoard(clk clock.Clock, interval time.Duration) *board {
	b := &board{clk: clk, hub: newHub(maxDashboardStreams, streamQueue)}
	b.hist = newHistory(clk, interval)
	return b
}

// hook adds the board's recording to the router's hooks, after what they
// already do.
func (b *board) hook(spec *router.Spec) {
	onTransition, onAttempt, onKey := spec.OnTransition, spec.OnAttempt, spec.OnKeyDisabled
	spec.OnTransition = func(t breaker.Transition) {
		if onTransition != nil {
			onTransition(t)
		}
		b.transition(t)
	}
	spec.OnAttempt = func(a router.AttemptEvent) {
		if onAttempt != nil {
			onAttempt(a)
		}
		if a.Verdict.Kind == aierr.Throttle {
			b.throttled(a.Target.Name, a.Verdict.Wait)
		}
	}
	spec.OnKeyDisabled = func(k router.KeyEvent) {
		if onKey != nil {
			onKey(k)
		}
		b.keyEvent(k)
	}
}

// transition records a breaker's state change and tells the live streams
// at once, so an opened breaker shows without waiting for the next sample.
func (b *board) transition(t breaker.Transition) {
	at := t.At
	if at.IsZero() {
		at = b.clk.Now()
	}
	e := timelineEntry{Time: at, Kind: "breaker", Target: t.Name, From: t.From.String(), To: t.To.String(),
		Reason: t.Reason.String(), Until: until(t.OpenUntil)}
	b.timeline.add(e)
	b.hub.publish(encodeEvent("transition", e))
}

// minThrottle is how long a throttle without a wait hint is shown: the
// router rests the key for a moment then too.
const minThrottle = time.Second

// throttled records that target's provider asked to wait (0: no hint).
// A new episode (the last one over) goes in the timeline.
func (b *board) throttled(target string, wait time.Duration) {
	if wait <= 0 {
		wait = minThrottle
	}
	now := b.clk.Now()
	end := now.Add(wait).UnixNano()
	v, _ := b.throttles.Load(target)
	if v == nil {
		v, _ = b.throttles.LoadOrStore(target, new(atomic.Int64))
	}
	cur := v.(*atomic.Int64)
	for {
		old := cur.Load()
		if old >= end {
			return
		}
		if cur.CompareAndSwap(old, end) {
			if old < now.UnixNano() {
				e := timelineEntry{Time: now, Kind: "throttle", Target: target,
					Reason: "throttled (429): waiting " + wait.String() + " as the provider asked", Until: until(time.Unix(0, end))}
				b.timeline.add(e)
				b.hub.publish(encodeEvent("timeline", e))
			}
			return
		}
	}
}

// throttleUntil returns when target's current throttle ends, or the zero
// time when it is not throttled at now.
func (b *board) throttleUntil(target string, now time.Time) time.Time {
	v, ok := b.throttles.Load(target)
	if !ok {
		return time.Time{}
	}
	end := v.(*atomic.Int64).Load()
	if end <= now.UnixNano() {
		return time.Time{}
	}
	return time.Unix(0, end).UTC()
}

// keyEvent records a key leaving or returning to the rotation.
func (b *board) keyEvent(k router.KeyEvent) {
	now := b.clk.Now()
	e := timelineEntry{Time: now, Kind: "key", Key: k.Key, Target: k.Target, To: "in rotation", Reason: "a probe found it working again"}
	if !k.Back {
		e.To = "out of rotation"
		e.Reason = k.Verdict.Kind.String()
		if k.Verdict.Status > 0 {
			e.Reason = strconv.Itoa(k.Verdict.Status) + " " + e.Reason
		}
		if k.Verdict.Code != "" {
			e.Reason += " (" + k.Verdict.Detail() + ")"
		}
		if k.For > 0 {
			e.Until = until(now.Add(k.For))
		}
	}
	b.timeline.add(e)
	b.hub.publish(encodeEvent("timeline", e))
}

// admin records an operator's action.
func (b *board) admin(target, key, action, result string) {
	e := timelineEntry{Time: b.clk.Now(), Kind: "admin", Target: target, Key: key, To: result, Reason: "operator: " + action}
	b.timeline.add(e)
	b.hub.publish(encodeEvent("timeline", e))
}
