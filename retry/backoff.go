package retry

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff returns the jittered wait after failed attempt number attempt
// (from 1), ignoring errors, hints and deadlines: a uniformly random duration
// in [0, ceiling), where ceiling = min(Max, Base × Multiplier^(attempt-1))
// ("full jitter"). Attempts below 1 count as 1. It does not allocate.
func (p *Policy) Backoff(attempt int) time.Duration {
	s := p.resolve()
	return s.backoff(attempt)
}

// Ceiling returns the upper bound of Backoff(attempt):
// min(Max, Base × Multiplier^(attempt-1)), attempts below 1 counting as 1.
func (p *Policy) Ceiling(attempt int) time.Duration {
	s := p.resolve()
	return s.ceiling(attempt)
}

func (s *settings) backoff(attempt int) time.Duration {
	return jitter(s.ceiling(attempt), s.rand)
}

func (s *settings) ceiling(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	c := float64(s.base) * math.Pow(s.multiplier, float64(attempt-1))
	if !(c < float64(s.max)) { // also catches +Inf
		return s.max
	}
	return time.Duration(c)
}

// jitter returns a random duration in [0, ceiling) drawn with r (nil:
// math/rand/v2); 0 for a ceiling of 0 or less.
func jitter(ceiling time.Duration, r func() float64) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	var f float64
	if r != nil {
		f = r()
	} else {
		f = rand.Float64()
	}
	switch {
	case !(f > 0): // also NaN
		return 0
	case f >= 1:
		return ceiling - 1
	}
	return min(time.Duration(f*float64(ceiling)), ceiling-1)
}
