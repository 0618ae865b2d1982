package router

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/retry"
)

// Every 503 a walk ends with says when to come back (issue 19), the first
// one too: with the default breaker, a single target whose upstream
// answers 503 with no Retry-After opens no breaker within one request,
// and the wait is the breaker's open period.

// lone returns a router with alias "smart" over the one target a/m, with
// breaker settings bc and retries without jitter (attempts calls, 0 for
// the default).
func lone(t *testing.T, clk *clocktest.Clock, bc breaker.Config, attempts int, up Upstream) *Router {
	t.Helper()
	return build(t, clk, nil, []AliasSpec{{Name: "smart", Breaker: bc, Retry: retry.Policy{Attempts: attempts, Rand: noJitter},
		Targets: []TargetSpec{{Provider: "a", Model: "m"}}}}, ProviderSpec{Name: "a", Upstream: up})
}

// comeBackOf runs a walk of req to its end and returns its RetryAfter.
func comeBackOf(t *testing.T, r *Router, req *Request) time.Duration {
	t.Helper()
	_, err := start(t, r, "smart", req).Next(t.Context())
	var nt *NoTargetError
	if !errors.As(err, &nt) {
		t.Fatalf("Next: %v; want a NoTargetError", err)
	}
	return nt.RetryAfter
}

// streamOutage is a streamed request whose Prepare finds an error event
// before any content: the stream fails before it is committed.
func streamOutage() *Request {
	req := streamRequest("smart")
	req.Prepare = PrepareFunc(func(a *Attempt) aierr.Verdict {
		return aierr.Verdict{Kind: aierr.Outage, Status: 200, Code: "server_error"}
	})
	return req
}

func TestFirst503HasRetryAfterWithTheDefaultBreaker(t *testing.T) {
	cases := []struct {
		name string
		bc   breaker.Config
		up   answer
		req  func() *Request
		want time.Duration
		// attempts 1 for an upstream whose wait the retries would honour
		// on the fake clock.
		attempts int
	}{
		{"plain, breaker defaults", breaker.Config{}, status(503), func() *Request { return request("smart") }, breaker.DefaultOpenDuration, 0},
		{"plain, config defaults", breaker.Config{OpenDuration: 5 * time.Second, OpenBackoff: 1.5, MaxOpenDuration: 8 * time.Second},
			status(503), func() *Request { return request("smart") }, 5 * time.Second, 0},
		{"stream answered 503", breaker.Config{OpenDuration: 5 * time.Second}, status(503), func() *Request { return streamRequest("smart") }, 5 * time.Second, 0},
		{"stream failing before content", breaker.Config{OpenDuration: 5 * time.Second}, status(200), streamOutage, 5 * time.Second, 0},
		{"upstream's wait", breaker.Config{}, status(503, "Retry-After", "7"), func() *Request { return request("smart") }, 7 * time.Second, 1},
		{"transport error", breaker.Config{OpenDuration: 3 * time.Second},
			func(ctx context.Context, c *Call) (*http.Response, error) {
				return nil, errors.New("connection reset by peer")
			},
			func() *Request { return request("smart") }, 3 * time.Second, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := clocktest.New(time.Time{})
			up := newStub(c.up)
			r := lone(t, clk, c.bc, c.attempts, up)
			if got := comeBackOf(t, r, c.req()); got != c.want {
				t.Errorf("RetryAfter %v after %d calls; want %v", got, up.n(), c.want)
			}
			if st := target(t, r, "a/m").Breaker().State(); st != breaker.StateClosed {
				t.Fatalf("breaker %v; the case wants one that has not opened", st)
			}
		})
	}
}

// Once the breaker is open, the wait is its next probe, counted down.
func TestRetryAfterCountsDownToTheProbe(t *testing.T) {
	clk := clocktest.New(time.Time{})
	r := lone(t, clk, breaker.Config{ConsecutiveFailures: 1, OpenDuration: 10 * time.Second}, 0, newStub(status(503)))
	if got := comeBackOf(t, r, request("smart")); got != 10*time.Second {
		t.Fatalf("RetryAfter %v; want the open period", got)
	}
	clk.Advance(4 * time.Second)
	if got := comeBackOf(t, r, request("smart")); got != 6*time.Second {
		t.Fatalf("RetryAfter %v; want the 6 s left to the probe", got)
	}
}

// The shortest open period of the ladder's breakers is the fallback, and
// a target shared with another alias keeps the breaker settings of the
// first alias that listed it.
func TestRetryAfterIsTheShortestOpenPeriod(t *testing.T) {
	clk := clocktest.New(time.Time{})
	a, b := newStub(status(503)), newStub(status(500))
	r := build(t, clk, nil, []AliasSpec{
		{Name: "other", Breaker: breaker.Config{OpenDuration: 4 * time.Second}, Targets: []TargetSpec{{Provider: "b", Model: "m"}}},
		{Name: "smart", Breaker: breaker.Config{OpenDuration: 20 * time.Second}, Retry: retry.Policy{Attempts: 1},
			Targets: []TargetSpec{{Provider: "a", Model: "m"}, {Provider: "b", Model: "m"}}},
	}, ProviderSpec{Name: "a", Upstream: a}, ProviderSpec{Name: "b", Upstream: b})
	if got := comeBackOf(t, r, request("smart")); got != 4*time.Second {
		t.Fatalf("RetryAfter %v; want b's 4 s", got)
	}
}

// A wait already past (a key rested until now) still says a second.
func TestRetryAfterIsAtLeastASecond(t *testing.T) {
	clk := clocktest.New(time.Time{})
	r := lone(t, clk, breaker.Config{}, 1, newStub(status(429, "Retry-After-Ms", "300")))
	if got := comeBackOf(t, r, request("smart")); got != time.Second {
		t.Fatalf("RetryAfter %v; want the one-second floor", got)
	}
}
