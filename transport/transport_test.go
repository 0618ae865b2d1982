package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/openai/openai-go/v3"
)

// A 503 storm on the primary: requests fail over to the secondary without
// the caller seeing an error; the primary's breaker opens so it stops
// getting calls, then a probe finds it recovered.
func TestOutageFailsOverAndBreakerOpens(t *testing.T) {
	clk := fakeClock()
	down := true
	var mu sync.Mutex
	primary := newUpstream(t, "primary", func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		d := down
		mu.Unlock()
		if d {
			status(503, "server_error")(w, r, n)
			return
		}
		chatOK("primary")(w, r, n)
	})
	secondary := newUpstream(t, "secondary", chatOK("secondary"))
	var ev events
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{
			{Name: "primary", BaseURL: primary.URL + "/v1"},
			{Name: "secondary", BaseURL: secondary.URL + "/v1"},
		},
		Breaker:   breaker.Config{ConsecutiveFailures: 3, OpenDuration: 10 * time.Second},
		Clock:     clk,
		OnAttempt: ev.add,
	})
	client := openaiClient(primary.URL, rt)
	for i := range 20 {
		c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
		if err != nil {
			t.Fatalf("request %d: %v (events %v)", i, err, &ev)
		}
		if got := content(c); got != "hello from secondary" {
			t.Fatalf("request %d answered %q", i, got)
		}
	}
	if got := primary.calls(); got != 3 {
		t.Fatalf("primary got %d calls during the storm; want 3 (then its breaker opened)", got)
	}
	snaps := rt.Breakers()
	if snaps[0].Name != "primary/gpt-4.1" || snaps[0].State != breaker.StateOpen {
		t.Fatalf("breakers %+v", snaps)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	clk.Advance(10 * time.Second)
	c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	if err != nil || content(c) != "hello from primary" {
		t.Fatalf("after recovery: %q, %v", content(c), err)
	}
	if s := rt.Breakers()[0].State; s != breaker.StateClosed {
		t.Fatalf("primary breaker %v after a good probe", s)
	}
}

// A 429 with Retry-After: the breaker stays closed; a short wait is waited
// out on the same endpoint, a long one fails over.
func TestThrottleWaitsOrFailsOver(t *testing.T) {
	clk := fakeClock()
	primary := newUpstream(t, "primary", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			status(429, "rate_limit_exceeded", "Retry-After", "1")(w, r, n)
			return
		}
		chatOK("primary")(w, r, n)
	})
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: primary.URL + "/v1"}}, Clock: clk,
		Breaker: breaker.Config{ConsecutiveFailures: 1}})
	client := openaiClient(primary.URL, rt)
	done := make(chan error)
	go func() {
		c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
		if err == nil && content(c) != "hello from primary" {
			err = errors.New("wrong answer " + content(c))
		}
		done <- err
	}()
	clk.WaitForTimers(1) // parked on the 1 s wait
	clk.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if primary.calls() != 2 {
		t.Fatalf("primary got %d calls; want 2", primary.calls())
	}
	if s := rt.Breakers()[0]; s.State != breaker.StateClosed || s.Totals.Ignored != 1 {
		t.Fatalf("a throttle touched the breaker: %+v", s)
	}
	// the idempotency key was renewed after the refusal
	k1, k2 := primary.req(0).header.Get("Idempotency-Key"), primary.req(1).header.Get("Idempotency-Key")
	if k1 == "" || k1 == k2 {
		t.Fatalf("idempotency keys %q, %q: want a key, renewed after a 429", k1, k2)
	}

	// a 20 s wait with a secondary available: fail over at once
	slow := newUpstream(t, "slow", status(429, "rate_limit_exceeded", "Retry-After", "20"))
	secondary := newUpstream(t, "secondary", chatOK("secondary"))
	rt2 := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: slow.URL + "/v1"}, {BaseURL: secondary.URL + "/v1"}}, Clock: clk})
	client2 := openaiClient(slow.URL, rt2)
	c, err := client2.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	if err != nil || content(c) != "hello from secondary" {
		t.Fatalf("long throttle: %q, %v", content(c), err)
	}
}

// A 401 on one endpoint's key takes it out of rotation; the other serves
// and the refused endpoint is not called again.
func TestAuthFailureTakesKeyOutOfRotation(t *testing.T) {
	bad := newUpstream(t, "bad", status(401, "invalid_api_key"))
	good := newUpstream(t, "good", chatOK("good"))
	rt := mustNew(t, Config{Endpoints: []Endpoint{
		{Name: "bad", BaseURL: bad.URL + "/v1", APIKey: "sk-revoked"},
		{Name: "good", BaseURL: good.URL + "/v1", APIKey: "sk-good"},
	}})
	client := openaiClient(bad.URL, rt)
	for range 5 {
		if _, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1")); err != nil {
			t.Fatal(err)
		}
	}
	if bad.calls() != 1 {
		t.Fatalf("revoked endpoint got %d calls; want 1", bad.calls())
	}
	if got := good.req(0).header.Get("Authorization"); got != "Bearer sk-good" {
		t.Fatalf("good endpoint saw Authorization %q", got)
	}
	if s := rt.Breakers(); s[0].Totals.Failed != 0 {
		t.Fatalf("an auth failure counted against the breaker: %+v", s[0])
	}
}

// A 400 is the caller's bug: returned as it is, no failover, no trip.
func TestClientErrorReturnedAsIs(t *testing.T) {
	primary := newUpstream(t, "primary", status(400, "invalid_request_error"))
	secondary := newUpstream(t, "secondary", chatOK("secondary"))
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: primary.URL + "/v1"}, {BaseURL: secondary.URL + "/v1"}}})
	client := openaiClient(primary.URL, rt)
	_, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "test 400") {
		t.Fatalf("err = %v; want the upstream's 400 with its body", err)
	}
	if secondary.calls() != 0 {
		t.Fatal("a 400 failed over")
	}
	if s := rt.Breakers()[0]; s.Totals.Failed != 0 || s.Totals.Ignored != 1 {
		t.Fatalf("breaker %+v", s.Totals)
	}
}

// context_length_exceeded fails over where FailoverOn says so.
func TestFailoverOnContextLength(t *testing.T) {
	short := newUpstream(t, "short", status(400, "context_length_exceeded"))
	long := newUpstream(t, "long", chatOK("long"))
	rt := mustNew(t, Config{
		Endpoints:  []Endpoint{{BaseURL: short.URL + "/v1"}, {BaseURL: long.URL + "/v1", Model: "gpt-4.1-long"}},
		FailoverOn: []aierr.SubKind{aierr.ContextLength},
	})
	client := openaiClient(short.URL, rt)
	c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	if err != nil || content(c) != "hello from long" {
		t.Fatalf("%q, %v", content(c), err)
	}
	if body := long.req(0).body; !strings.Contains(body, `"model":"gpt-4.1-long"`) {
		t.Fatalf("model not rewritten: %s", body)
	}
}

// A single endpoint failing with 503 is retried with the same body and the
// same idempotency key.
func TestRetryReplaysBody(t *testing.T) {
	clk := fakeClock()
	up := newUpstream(t, "up", func(w http.ResponseWriter, r *http.Request, n int) {
		if n < 3 {
			status(503, "server_error")(w, r, n)
			return
		}
		chatOK("up")(w, r, n)
	})
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: up.URL + "/v1"}}, Clock: clk})
	done := make(chan error)
	go func() {
		client := openaiClient(up.URL, rt)
		_, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
		done <- err
	}()
	for range 2 {
		clk.WaitForTimers(1)
		clk.AdvanceToNext()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if up.calls() != 3 {
		t.Fatalf("%d calls; want 3", up.calls())
	}
	first := up.req(0)
	for i := 1; i < 3; i++ {
		r := up.req(i)
		if r.body != first.body || r.body == "" {
			t.Fatalf("attempt %d body %q; want %q", i+1, r.body, first.body)
		}
		if r.header.Get("Idempotency-Key") != first.header.Get("Idempotency-Key") {
			t.Fatal("idempotency key changed across retries of an outage")
		}
	}
}

// Every endpoint refused by its breaker: a typed error at once, matching
// breaker.ErrOpen, with the time until the soonest probe.
func TestAllOpenRefusesAtOnce(t *testing.T) {
	clk := fakeClock()
	up := newUpstream(t, "up", status(503, "server_error"))
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: up.URL + "/v1"}}, Clock: clk,
		Breaker: breaker.Config{ConsecutiveFailures: 1, OpenDuration: 30 * time.Second},
		Retry:   retryOnce})
	client := openaiClient(up.URL, rt)
	if _, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1")); err == nil {
		t.Fatal("want the 503")
	}
	clk.Advance(10 * time.Second)
	_, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	var open *breaker.OpenError
	var un *UnavailableError
	if !errors.Is(err, breaker.ErrOpen) || !errors.As(err, &open) || !errors.As(err, &un) {
		t.Fatalf("err = %v; want an UnavailableError wrapping the breaker's refusal", err)
	}
	if un.RetryAfter() != 20*time.Second || open.RetryAfter() != 20*time.Second {
		t.Fatalf("RetryAfter %v / %v; want 20s", un.RetryAfter(), open.RetryAfter())
	}
	if up.calls() != 1 {
		t.Fatalf("%d upstream calls; want 1", up.calls())
	}
}

// The caller cancelling a call in flight returns at once and does not
// count against the endpoint.
func TestCancellationIsNotAFailure(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	up := newUpstream(t, "up", func(w http.ResponseWriter, r *http.Request, n int) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: up.URL + "/v1"}}, Breaker: breaker.Config{ConsecutiveFailures: 1}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		client := openaiClient(up.URL, rt)
		_, err := client.Chat.Completions.New(ctx, chatParams("gpt-4.1"))
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	s := rt.Breakers()[0]
	if s.State != breaker.StateClosed || s.Totals.Failed != 0 || s.Totals.Ignored != 1 {
		t.Fatalf("cancellation counted: %+v", s)
	}
}

// A model the endpoint does not have (Azure's DeploymentNotFound) fails
// over without FailoverOn, and does not count against its breaker; on the
// last endpoint it returns to the caller.
func TestFailoverOnAModelNotDeployed(t *testing.T) {
	notThere := func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		io.WriteString(w, `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}`)
	}
	azure := newUpstream(t, "azure", notThere)
	other := newUpstream(t, "other", chatOK("other"))
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: azure.URL + "/v1"}, {BaseURL: other.URL + "/v1"}}})
	client := openaiClient(azure.URL, rt)
	c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	if err != nil || content(c) != "hello from other" {
		t.Fatalf("%q, %v", content(c), err)
	}
	if s := rt.Breakers()[0]; s.Totals.Failed != 0 {
		t.Fatalf("breaker %+v: a missing model is not an outage", s.Totals)
	}
	alone := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: azure.URL + "/v1"}}})
	lone := openaiClient(azure.URL, alone)
	if _, err := lone.Chat.Completions.New(t.Context(), chatParams("gpt-4.1")); err == nil {
		t.Fatal("the last endpoint's 404 did not reach the caller")
	}
}
