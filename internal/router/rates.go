package router

import (
	"math"
	"time"

	"github.com/fuseboxhq/fusebox/limit"
)

// How much of a provider's rates may go at once. Providers count their
// limits over windows no longer than the minute they name them by (OpenAI
// quantises request limits to the second); a bucket holding a whole
// minute would let a burst send twice the limit within one minute. With
// two seconds' worth of rpm, no minute sees more than the limit and 1/30th
// of it, across the fleet too (each replica holds its share of the burst).
// Tokens get ten seconds' worth, since one prompt is often large: a single
// request above it still goes, alone, when the bucket is full.
const (
	RequestBurstWindow = 2 * time.Second
	TokenBurstWindow   = 10 * time.Second
)

// providerRates returns the pacer limits for a provider's rpm and tpm,
// with bursts of RequestBurstWindow's and TokenBurstWindow's worth (at
// least one request, one token).
func providerRates(rpm, tpm float64) limit.Limits {
	return limit.Limits{RequestsPerMinute: rpm, TokensPerMinute: tpm,
		RequestBurst: burstOf(rpm, RequestBurstWindow), TokenBurst: burstOf(tpm, TokenBurstWindow)}
}

func burstOf(perMinute float64, window time.Duration) int {
	if perMinute <= 0 {
		return 0
	}
	return max(1, int(math.Ceil(perMinute*window.Minutes())))
}
