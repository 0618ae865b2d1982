package retry

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fuseboxhq/fusebox/breaker"
)

func TestNext(t *testing.T) {
	open := &breaker.OpenError{Name: "a", State: breaker.StateOpen, Until: time.Now().Add(time.Minute)}
	classify := func(err error) Decision {
		switch err {
		case errFail:
			return Decision{Action: Stop}
		case hint5s:
			return Decision{Action: Again, After: time.Second}
		}
		return Decision{}
	}
	tests := []struct {
		name       string
		p          Policy
		attempt    int
		err        error
		remaining  time.Duration
		wantWait   time.Duration
		wantReason Reason
	}{
		{"plain", Policy{}, 1, errFail, NoDeadline, 50 * time.Millisecond, ReasonNone},
		{"second", Policy{}, 2, errFail, NoDeadline, 100 * time.Millisecond, ReasonNone},
		{"last attempt", Policy{}, 3, errFail, NoDeadline, 0, ReasonExhausted},
		{"one attempt", Policy{Attempts: 1}, 1, errFail, NoDeadline, 0, ReasonExhausted},
		{"unlimited", Policy{Attempts: -1}, 1000, errFail, NoDeadline, 5 * time.Second, ReasonNone},
		{"breaker open", Policy{}, 1, open, NoDeadline, 0, ReasonBreakerOpen},
		{"breaker open wrapped", Policy{}, 1, fmt.Errorf("t: %w", open), NoDeadline, 0, ReasonBreakerOpen},
		{"breaker open beats Classify", Policy{Classify: func(error) Decision { return Decision{Action: Again} }}, 1, open, NoDeadline, 0, ReasonBreakerOpen},
		{"canceled", Policy{}, 1, fmt.Errorf("x: %w", context.Canceled), NoDeadline, 0, ReasonCanceled},
		{"not retryable", Policy{}, 1, verdictErr{false}, NoDeadline, 0, ReasonNotRetryable},
		{"retryable", Policy{}, 1, verdictErr{true}, NoDeadline, 50 * time.Millisecond, ReasonNone},
		{"not retryable beats exhausted", Policy{}, 3, verdictErr{false}, NoDeadline, 0, ReasonNotRetryable},
		{"hint longer than backoff", Policy{}, 1, hint5s, NoDeadline, 5 * time.Second, ReasonNone},
		{"hint shorter than backoff", Policy{}, 1, hintErr{time.Millisecond}, NoDeadline, 50 * time.Millisecond, ReasonNone},
		{"hint zero", Policy{}, 1, hintErr{0}, NoDeadline, 50 * time.Millisecond, ReasonNone},
		{"hint at MaxWait", Policy{MaxWait: 5 * time.Second}, 1, hint5s, NoDeadline, 5 * time.Second, ReasonNone},
		{"hint too long", Policy{MaxWait: 4 * time.Second}, 1, hint5s, NoDeadline, 5 * time.Second, ReasonHintTooLong},
		{"hint too long default", Policy{}, 1, hintErr{31 * time.Second}, NoDeadline, 31 * time.Second, ReasonHintTooLong},
		{"negative MaxWait", Policy{MaxWait: -1}, 1, hintErr{time.Millisecond}, NoDeadline, time.Millisecond, ReasonHintTooLong},
		{"negative MaxWait zero hint", Policy{MaxWait: -1}, 1, hintErr{0}, NoDeadline, 50 * time.Millisecond, ReasonNone},
		{"hint beyond deadline", Policy{}, 1, hint5s, 4 * time.Second, 5 * time.Second, ReasonDeadline},
		{"hint equals deadline", Policy{}, 1, hint5s, 5 * time.Second, 5 * time.Second, ReasonDeadline},
		{"hint within deadline", Policy{}, 1, hint5s, 6 * time.Second, 5 * time.Second, ReasonNone},
		{"backoff beyond deadline", Policy{}, 1, errFail, 40 * time.Millisecond, 50 * time.Millisecond, ReasonDeadline},
		{"deadline passed", Policy{}, 1, errFail, -time.Second, 50 * time.Millisecond, ReasonDeadline},
		{"classify stop", Policy{Classify: classify}, 1, errFail, NoDeadline, 0, ReasonNotRetryable},
		{"classify again overrides hint", Policy{Classify: classify}, 1, hint5s, NoDeadline, time.Second, ReasonNone},
		{"classify defers", Policy{Classify: classify}, 1, verdictErr{false}, NoDeadline, 0, ReasonNotRetryable},
		{"classify hint too long", Policy{Classify: classify, MaxWait: time.Millisecond}, 1, hint5s, NoDeadline, time.Second, ReasonHintTooLong},
		{"nil error", Policy{}, 1, nil, NoDeadline, 0, ReasonNotRetryable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.Rand = half
			wait, reason := tt.p.Next(tt.attempt, tt.err, tt.remaining)
			if wait != tt.wantWait || reason != tt.wantReason {
				t.Errorf("Next(%d, %v, %v) = %v, %v; want %v, %v",
					tt.attempt, tt.err, tt.remaining, wait, reason, tt.wantWait, tt.wantReason)
			}
		})
	}
}

var hint5s = hintErr{5 * time.Second}

// A retry decided by Next never waits past the deadline, never cuts a
// server's hint short, and never waits longer than the larger of Max and the
// hint; a hint above MaxWait never leads to a retry.
func TestNextProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := Policy{
			Attempts:   rapid.IntRange(-1, 10).Draw(t, "attempts"),
			Base:       time.Duration(rapid.Int64Range(0, int64(time.Minute)).Draw(t, "base")),
			Max:        time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "max")),
			Multiplier: rapid.Float64Range(0, 10).Draw(t, "multiplier"),
			MaxWait:    time.Duration(rapid.Int64Range(-1, int64(time.Hour)).Draw(t, "maxWait")),
		}
		r := rapid.Float64Range(0, 1).Draw(t, "rand")
		p.Rand = func() float64 { return r }
		attempt := rapid.IntRange(1, 100).Draw(t, "attempt")
		var err error = errFail
		hint := time.Duration(rapid.Int64Range(-1, int64(2*time.Hour)).Draw(t, "hint"))
		if hint >= 0 {
			err = hintErr{hint}
		}
		remaining := time.Duration(rapid.Int64Range(math.MinInt64, math.MaxInt64).Draw(t, "remaining"))

		wait, reason := p.Next(attempt, err, remaining)
		if reason != ReasonNone {
			return
		}
		maxWait := p.MaxWait
		if maxWait == 0 {
			maxWait = DefaultMaxWait
		}
		switch {
		case wait < 0 || wait >= remaining:
			t.Fatalf("wait %v outside [0, remaining %v)", wait, remaining)
		case wait < hint:
			t.Fatalf("wait %v cuts hint %v short", wait, hint)
		case hint > 0 && (maxWait < 0 || hint > maxWait):
			t.Fatalf("retried on hint %v above MaxWait %v", hint, p.MaxWait)
		case wait > max(p.Ceiling(attempt), hint):
			t.Fatalf("wait %v above ceiling %v and hint %v", wait, p.Ceiling(attempt), hint)
		case p.Attempts > 0 && attempt >= p.Attempts:
			t.Fatalf("retried attempt %d of %d", attempt, p.Attempts)
		}
	})
}

func TestReasonString(t *testing.T) {
	for r := ReasonNone; r <= ReasonCanceled+1; r++ {
		if r.String() == "" {
			t.Errorf("Reason(%d).String() is empty", r)
		}
	}
	if got := Reason(200).String(); got != "unknown" {
		t.Errorf("Reason(200).String() = %q; want unknown", got)
	}
}
