package transport

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/limit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// idle keep-alive connections of the shared http.DefaultTransport
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// An endpoint at its request rate is skipped for the next one rather than
// waited on past Limits.MaxWait.
func TestPacedEndpointSpillsOver(t *testing.T) {
	clk := fakeClock()
	primary := newUpstream(t, "primary", chatOK("primary"))
	secondary := newUpstream(t, "secondary", chatOK("secondary"))
	var ev events
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{
			{Name: "primary", BaseURL: primary.URL + "/v1", Limits: Limits{RequestsPerMinute: 2, MaxWait: time.Second}},
			{Name: "secondary", BaseURL: secondary.URL + "/v1"},
		},
		Clock: clk, OnAttempt: ev.add,
	})
	client := openaiClient(primary.URL, rt)
	var got []string
	for range 4 {
		c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimPrefix(content(c), "hello from "))
	}
	if strings.Join(got, ",") != "primary,primary,secondary,secondary" {
		t.Fatalf("served by %v; want the primary's 2 per minute, then the secondary (%v)", got, &ev)
	}
	var le *limit.LimitedError
	if !errors.As(ev.all[4].Skipped, &le) || le.RetryAfter <= time.Second {
		t.Fatalf("skip reason %v", ev.all[4].Skipped)
	}
	clk.Advance(30 * time.Second) // one request's worth refilled
	c, _ := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	if content(c) != "hello from primary" {
		t.Fatalf("after refill: %q", content(c))
	}
}

// A full bulkhead sends the request elsewhere.
func TestBulkheadSpillsOver(t *testing.T) {
	clk := fakeClock()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	primary := newUpstream(t, "primary", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			entered <- struct{}{}
			<-release
		}
		chatOK("primary")(w, r, n)
	})
	secondary := newUpstream(t, "secondary", chatOK("secondary"))
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{
			{BaseURL: primary.URL + "/v1", Limits: Limits{MaxInFlight: 1, MaxWait: time.Second}},
			{BaseURL: secondary.URL + "/v1"},
		},
		Clock: clk,
	})
	client := openaiClient(primary.URL, rt)
	first := make(chan string)
	go func() {
		c, _ := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
		first <- content(c)
	}()
	<-entered
	second := make(chan string)
	go func() {
		c, _ := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
		second <- content(c)
	}()
	clk.WaitForTimers(1) // the second request waits for the slot…
	clk.Advance(time.Second)
	if got := <-second; got != "hello from secondary" { // …then goes elsewhere
		t.Fatalf("second request: %q", got)
	}
	close(release)
	if got := <-first; got != "hello from primary" {
		t.Fatalf("first request: %q", got)
	}
}

// A caller's own idempotency key is sent as it is and never replaced.
func TestCallerIdempotencyKeyKept(t *testing.T) {
	clk := fakeClock()
	up := newUpstream(t, "up", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			status(429, "rate_limit_exceeded", "Retry-After", "1")(w, r, n)
			return
		}
		chatOK("up")(w, r, n)
	})
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: up.URL + "/v1"}}, Clock: clk})
	done := make(chan error)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, up.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"m","messages":[]}`))
		req.Header.Set("Idempotency-Key", "caller-key-1")
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	clk.WaitForTimers(1)
	clk.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if k := up.req(i).header.Get("Idempotency-Key"); k != "caller-key-1" {
			t.Fatalf("attempt %d key %q", i+1, k)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Endpoints: []Endpoint{{BaseURL: "api.openai.com/v1"}}}, "Endpoints[0].BaseURL"},
		{Config{Endpoints: []Endpoint{{BaseURL: "https://x/v1", Auth: "basic"}}}, "Endpoints[0].Auth"},
		{Config{Idle: -time.Second}, "Idle"},
		{Config{Endpoints: []Endpoint{{BaseURL: "https://x", Limits: Limits{RequestsPerMinute: -1}}}}, "Endpoints[0].Limits"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}
