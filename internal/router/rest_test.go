package router

import (
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Providers count rate limits per model: a throttle rests the key for the
// throttled (key, model) only, so one key still serves the provider's
// other models.

// oneKeyTwoModels returns a router with one provider of one key and an
// alias over its models m1 then m2.
func oneKeyTwoModels(t *testing.T, m1, m2 *stub) (*clocktest.Clock, *Router) {
	t.Helper()
	clk := clocktest.New(time.Time{})
	r := build(t, clk, nil, []AliasSpec{{Name: "smart",
		Targets: []TargetSpec{{Provider: "p", Model: "m1"}, {Provider: "p", Model: "m2"}}}},
		ProviderSpec{Name: "p", Upstream: models{"m1": m1, "m2": m2}, Keys: []string{"k"}})
	return clk, r
}

func TestThrottleRestsTheKeyForThatModelOnly(t *testing.T) {
	m1, m2 := newStub(status(429, "Retry-After", "30")), newStub(status(200))
	_, r := oneKeyTwoModels(t, m1, m2)
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "p/m2").Succeed()
	if c, _ := m2.call(0); c.Key != "k" {
		t.Errorf("m2 was sent key %q; want the throttled key k", c.Key)
	}
}

func TestThrottledKeyShowsAsResting(t *testing.T) {
	m1, m2 := newStub(status(429, "Retry-After", "30")), newStub(status(200))
	clk, r := oneKeyTwoModels(t, m1, m2)
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "p/m2").Succeed()
	clk.Advance(10 * time.Second)
	want := KeyState{ID: "p#0", State: "resting", RetryIn: 20 * time.Second}
	if got := r.Keys(); len(got) != 1 || got[0] != want {
		t.Fatalf("Keys() = %+v; want [%+v]", got, want)
	}
}

// While its rest lasts, the throttled model is passed over without a call.
func TestRestingKeyIsNotSentToTheThrottledModel(t *testing.T) {
	m1, m2 := newStub(status(429, "Retry-After", "30")), newStub(status(200))
	_, r := oneKeyTwoModels(t, m1, m2)
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "p/m2").Succeed()
	w := start(t, r, "smart", nil)
	served(t, await(t, goNext(t.Context(), w)), "p/m2").Succeed()
	if m1.n() != 1 {
		t.Errorf("m1 called %d times; want 1 (resting after its throttle)", m1.n())
	}
	if len(w.Skips) != 1 || w.Skips[0] != (Skip{Target: "p/m1", Reason: "no usable key"}) {
		t.Errorf("skips %+v; want p/m1 no usable key", w.Skips)
	}
}

func TestSetKeyEnabledEndsAThrottleRest(t *testing.T) {
	m1, m2 := newStub(status(429, "Retry-After", "30"), status(200)), newStub(status(200))
	_, r := oneKeyTwoModels(t, m1, m2)
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "p/m2").Succeed()
	if err := r.SetKeyEnabled("p#0", true); err != nil {
		t.Fatal(err)
	}
	want := KeyState{ID: "p#0", State: "in rotation"}
	if got := r.Keys(); len(got) != 1 || got[0] != want {
		t.Fatalf("Keys() = %+v; want [%+v]", got, want)
	}
	served(t, await(t, goNext(t.Context(), start(t, r, "smart", nil))), "p/m1").Succeed()
}
