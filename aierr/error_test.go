package aierr

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestErrorAdapter(t *testing.T) {
	v := Classify(429, http.Header{"Retry-After": {"2"}}, []byte(`{"error":{"code":"rate_limit_exceeded","message":"slow down"}}`))
	err := v.Err()
	var re interface {
		RetryAfter() time.Duration
		Retryable() bool
	}
	if !errors.As(err, &re) {
		t.Fatal("Err() does not offer RetryAfter and Retryable")
	}
	if re.RetryAfter() != 2*time.Second || !re.Retryable() {
		t.Errorf("RetryAfter %v Retryable %v; want 2s true", re.RetryAfter(), re.Retryable())
	}
	if got := err.Error(); got != "aierr: throttle 429 rate_limit_exceeded wait=2s: slow down" {
		t.Errorf("Error() = %q", got)
	}
	got, ok := FromError(err)
	if !ok || got.Kind != Throttle {
		t.Errorf("FromError = %v, %v", got, ok)
	}
	if Classify(200, nil, nil).Err() != nil {
		t.Error("Success.Err() != nil")
	}
	if _, ok := FromError(errors.New("plain")); ok {
		t.Error("FromError found a verdict in a plain error")
	}
	if (&Error{Verdict: Classify(401, nil, nil)}).Retryable() {
		t.Error("auth error retryable on the same target")
	}
}

func TestWrapError(t *testing.T) {
	if WrapError(nil) != nil {
		t.Error("WrapError(nil) != nil")
	}
	err := WrapError(context.Canceled)
	if !errors.Is(err, context.Canceled) {
		t.Error("wrapped error lost its cause")
	}
	v, ok := FromError(err)
	if !ok || v.Kind != Canceled || v.SameTarget || v.OtherTarget {
		t.Errorf("wrapped cancellation = %v", v)
	}
	if !strings.Contains(err.Error(), "canceled") {
		t.Errorf("Error() = %q", err.Error())
	}
	if again := WrapError(err); again != err {
		t.Error("WrapError wrapped an *Error twice")
	}
	e := &Error{Verdict: Verdict{Kind: Outage}, Err: errors.New("boom")}
	if got := e.Error(); got != "aierr: outage: boom" {
		t.Errorf("Error() = %q", got)
	}
}
