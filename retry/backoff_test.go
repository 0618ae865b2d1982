package retry

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestCeiling(t *testing.T) {
	tests := []struct {
		p       Policy
		attempt int
		want    time.Duration
	}{
		{Policy{}, 0, 100 * time.Millisecond},
		{Policy{}, 1, 100 * time.Millisecond},
		{Policy{}, 2, 200 * time.Millisecond},
		{Policy{}, 3, 400 * time.Millisecond},
		{Policy{}, 7, 6400 * time.Millisecond},
		{Policy{}, 8, 10 * time.Second}, // 12.8s capped
		{Policy{}, 1 << 30, 10 * time.Second},
		{Policy{Base: time.Second, Multiplier: 3, Max: time.Minute}, 3, 9 * time.Second},
		{Policy{Base: time.Second, Multiplier: 0.5}, 5, time.Second}, // below 1: constant
		{Policy{Base: time.Second, Multiplier: math.NaN()}, 5, time.Second},
		{Policy{Base: time.Second, Multiplier: math.Inf(1)}, 2, 10 * time.Second},
		{Policy{Base: -time.Second, Max: -1}, 1, DefaultBase},
		{Policy{Base: time.Hour, Max: time.Duration(math.MaxInt64)}, 200, time.Duration(math.MaxInt64)},
	}
	for i, tt := range tests {
		if got := tt.p.Ceiling(tt.attempt); got != tt.want {
			t.Errorf("case %d: Ceiling(%d) = %v; want %v", i, tt.attempt, got, tt.want)
		}
	}
}

func TestBackoffFullJitter(t *testing.T) {
	for _, tt := range []struct {
		r    float64
		want time.Duration
	}{
		{0, 0},
		{0.25, 100 * time.Millisecond},
		{0.5, 200 * time.Millisecond},
		{0.999999999999, 400*time.Millisecond - 1},
		{1, 400*time.Millisecond - 1}, // clamped into [0, ceiling)
		{-3, 0},
		{math.NaN(), 0},
	} {
		p := Policy{Rand: func() float64 { return tt.r }}
		if got := p.Backoff(3); got != tt.want {
			t.Errorf("Rand %v: Backoff(3) = %v; want %v", tt.r, got, tt.want)
		}
	}
	var nilPolicy *Policy
	if got := nilPolicy.Backoff(1); got < 0 || got >= DefaultBase {
		t.Errorf("nil policy Backoff(1) = %v; want in [0, %v)", got, DefaultBase)
	}
}

func TestBackoffWithinCeilingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := Policy{
			Base:       time.Duration(rapid.Int64Range(-10, int64(time.Hour)).Draw(t, "base")),
			Max:        time.Duration(rapid.Int64Range(-10, math.MaxInt64).Draw(t, "max")),
			Multiplier: rapid.Float64Range(-1, 1e6).Draw(t, "multiplier"),
		}
		r := rapid.Float64Range(-1, 2).Draw(t, "rand")
		p.Rand = func() float64 { return r }
		attempt := rapid.IntRange(-5, 1<<20).Draw(t, "attempt")
		ceiling := p.Ceiling(attempt)
		limit := p.Max
		if limit <= 0 {
			limit = DefaultMax
		}
		if ceiling <= 0 || ceiling > limit {
			t.Fatalf("Ceiling(%d) = %v; want in (0, %v]", attempt, ceiling, limit)
		}
		if got := p.Backoff(attempt); got < 0 || got >= ceiling {
			t.Fatalf("Backoff(%d) = %v; want in [0, %v)", attempt, got, ceiling)
		}
	})
}
