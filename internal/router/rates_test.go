package router

import (
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/limit"
)

// A provider's rpm is held over any minute: offered ten times the limit, a
// pacer of providerRates admits the limit and its short burst, not the two
// minutes' worth a full-minute bucket would.
func TestProviderRatesHoldAMinute(t *testing.T) {
	for _, rpm := range []float64{1, 7, 60, 600, 10_000} {
		clk := clocktest.New(time.Unix(0, 0))
		p, err := limit.NewPacer(limit.PacerSettings{Limits: providerRates(rpm, 0), Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		offered := int(10 * rpm) // finely sampled, so that the lower bound holds too
		step := time.Minute / time.Duration(offered)
		admitted := 0
		for range offered {
			if ok, _ := p.Allow(0); ok {
				admitted++
			}
			clk.Advance(step)
		}
		if hi := int(rpm) + burstOf(rpm, RequestBurstWindow); admitted < int(rpm)-1 || admitted > hi {
			t.Errorf("rpm %v: %d admitted in a minute offered %d; want %v..%d", rpm, admitted, offered, rpm-1, hi)
		}
	}
	if l := providerRates(0, 30_000); l.RequestBurst != 0 || l.TokenBurst != 5000 {
		t.Errorf("tpm 30000 alone: %+v; want no request limit and 5000 tokens at once", l)
	}
}
