package retry

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestHint(t *testing.T) {
	tests := []struct {
		err    error
		want   time.Duration
		wantOK bool
	}{
		{nil, 0, false},
		{errFail, 0, false},
		{hintErr{2 * time.Second}, 2 * time.Second, true},
		{fmt.Errorf("call: %w", hintErr{time.Second}), time.Second, true},
		{errors.Join(errFail, fmt.Errorf("x: %w", hintErr{3 * time.Second})), 3 * time.Second, true},
		{hintErr{-time.Second}, 0, true},
		{hintErr{0}, 0, true},
	}
	for i, tt := range tests {
		got, ok := Hint(tt.err)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("case %d: Hint(%v) = %v, %v; want %v, %v", i, tt.err, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{errFail, true},
		{verdictErr{true}, true},
		{verdictErr{false}, false},
		{fmt.Errorf("wrapped: %w", verdictErr{false}), false},
		{errors.Join(errFail, verdictErr{false}), false},
	}
	for i, tt := range tests {
		if got := Retryable(tt.err); got != tt.want {
			t.Errorf("case %d: Retryable(%v) = %v; want %v", i, tt.err, got, tt.want)
		}
	}
}
