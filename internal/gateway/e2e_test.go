package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func TestServesThroughTheLadder(t *testing.T) {
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	var resp *http.Response
	got, err := c.Chat.Completions.New(t.Context(), params("smart"), option.WithResponseInto(&resp))
	if err != nil || text(got) != "hello from primary" {
		t.Fatalf("%q, %v", text(got), err)
	}
	if resp.Header.Get("X-Fusebox-Target") != "primary/gpt-4.1" || resp.Header.Get("X-Fusebox-Attempts") != "1" ||
		resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("X-Fusebox-Tried") != "none" {
		t.Fatalf("headers %v", resp.Header)
	}
	if us := resp.Header.Get("X-Fusebox-Overhead-Us"); us == "" || strings.Trim(us, "0123456789") != "" {
		t.Fatalf("X-Fusebox-Overhead-Us %q; want whole microseconds", us)
	}
	if auth := p.header(0).Get("Authorization"); auth != "Bearer pk1" && auth != "Bearer pk2" {
		t.Fatalf("upstream saw Authorization %q; want one of the provider's keys", auth)
	}
}

// The 503 that runs out of targets says when to come back, the first one
// too, plain and streamed: when its failures opened no breaker, the wait
// is the shortest open period of the targets' breakers (5 s with the
// defaults).
func TestFirst503HasRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		want      []string
	}{
		{"open: 10s", twoTargets, []string{"10", "9"}},
		{"default breaker", strings.Replace(twoTargets, "    breaker: {consecutive: 3, open: 10s}\n", "", 1), []string{"5", "4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "default breaker" && strings.Contains(tc.cfg, "breaker:") {
				t.Fatal("the default-breaker configuration still sets a breaker")
			}
			p, s := newUpstream(t, status(503, "server_error")), newUpstream(t, status(503, "server_error"))
			_, gw := gateway(t, nil, tc.cfg, p, s)
			for _, body := range []string{`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`,
				`{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`} {
				resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if ra := resp.Header.Get("Retry-After"); resp.StatusCode != 503 || !slices.Contains(tc.want, ra) {
					t.Fatalf("%s: %d with Retry-After %q; want 503 and %v", body, resp.StatusCode, ra, tc.want)
				}
				if tried := resp.Header.Get("X-Fusebox-Tried"); !strings.Contains(tried, "primary/gpt-4.1") {
					t.Errorf("X-Fusebox-Tried %q; want the primary named", tried)
				}
			}
		})
	}
}

// A 503 storm: the breaker opens, traffic moves to the next target, a probe
// finds the primary recovered and traffic returns.
func TestOutageStormFailsOverAndRecovers(t *testing.T) {
	clk := clocktest.New(time.Time{})
	p, s := newUpstream(t, status(503, "server_error")), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, clk, twoTargets, p, s)
	c := newClient(gw.URL)
	for i := range 10 {
		got, err := c.Chat.Completions.New(t.Context(), params("smart"))
		if err != nil || text(got) != "hello from secondary" {
			t.Fatalf("request %d: %q, %v", i, text(got), err)
		}
	}
	if p.calls() != 3 {
		t.Fatalf("primary got %d calls; want 3 before its breaker opened", p.calls())
	}
	if st := srv.Router().Targets()[0].Breaker().State(); st != breaker.StateOpen {
		t.Fatalf("primary breaker %v", st)
	}
	p.set(chatOK("primary"))
	clk.Advance(10 * time.Second)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from primary" {
		t.Fatalf("after recovery: %q, %v", text(got), err)
	}
}

// A 429 with Retry-After rests the key and spills to the other key, then
// the secondary; the breaker stays closed.
func TestThrottleKeepsBreakerClosed(t *testing.T) {
	p, s := newUpstream(t, status(429, "rate_limit_exceeded", "Retry-After", "30")), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	for range 5 {
		got, err := c.Chat.Completions.New(t.Context(), params("smart"))
		if err != nil || text(got) != "hello from secondary" {
			t.Fatalf("%q, %v", text(got), err)
		}
	}
	if p.calls() != 2 {
		t.Fatalf("primary got %d calls; want one per key, then both rest 30 s", p.calls())
	}
	if st := srv.Router().Targets()[0].Breaker().Snapshot(); st.State != breaker.StateClosed || st.Totals.Failed != 0 {
		t.Fatalf("throttle reached the breaker: %+v", st)
	}
}

// A 401 on one key takes that key out of rotation; the other key serves.
func TestAuthFailureOnOneKey(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Header.Get("Authorization") == "Bearer pk1" {
			status(401, "invalid_api_key")(w, r, n)
			return
		}
		chatOK("primary")(w, r, n)
	})
	s := newUpstream(t, chatOK("secondary"))
	var logs strings.Builder
	_, gw := gatewayWithLog(t, slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil)), twoTargets, p, s)
	c := newClient(gw.URL)
	for range 6 {
		got, err := c.Chat.Completions.New(t.Context(), params("smart"))
		if err != nil || text(got) != "hello from primary" {
			t.Fatalf("%q, %v", text(got), err)
		}
	}
	bad := 0
	for i := range p.calls() {
		if p.header(i).Get("Authorization") == "Bearer pk1" {
			bad++
		}
	}
	if bad != 1 || s.calls() != 0 {
		t.Fatalf("revoked key used %d times, secondary called %d times", bad, s.calls())
	}
	if l := logs.String(); !strings.Contains(l, "key=primary#0") || !strings.Contains(l, "taken out of rotation") || strings.Contains(l, "pk1") {
		t.Fatalf("key refusal not reported, or the key leaked: %s", l)
	}
}

// A 400 is the caller's: returned as it is, no failover.
func TestClientErrorPassesThrough(t *testing.T) {
	p, s := newUpstream(t, status(400, "invalid_request_error")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	_, err := c.Chat.Completions.New(t.Context(), params("smart"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Message != "upstream says 400" {
		t.Fatalf("err = %v", err)
	}
	if s.calls() != 0 {
		t.Fatal("a 400 failed over")
	}
}

// Every target down: 503 naming each target and why, with Retry-After.
func TestAllDownAnswers503(t *testing.T) {
	clk := clocktest.New(time.Time{})
	p, s := newUpstream(t, status(503, "server_error")), newUpstream(t, status(502, "server_error"))
	_, gw := gateway(t, clk, twoTargets, p, s)
	c := newClient(gw.URL)
	var last error
	for range 4 {
		_, last = c.Chat.Completions.New(t.Context(), params("smart"))
	}
	var apiErr *openai.Error
	if !errors.As(last, &apiErr) || apiErr.StatusCode != 503 {
		t.Fatalf("err = %v", last)
	}
	if !strings.Contains(apiErr.Message, "primary/gpt-4.1 (breaker open)") || !strings.Contains(apiErr.Message, "secondary/deepseek-chat (breaker open)") {
		t.Fatalf("message %q", apiErr.Message)
	}
	if ra := apiErr.Response.Header.Get("Retry-After"); ra != "10" {
		t.Fatalf("Retry-After %q; want 10", ra)
	}
}

func TestStreamPassesThrough(t *testing.T) {
	p, s := newUpstream(t, streamOf([]string{"Hel", "lo", "!"}, nil)), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	var b strings.Builder
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 {
			b.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if st.Err() != nil || b.String() != "Hello!" {
		t.Fatalf("%q, %v", b.String(), st.Err())
	}
	if tot := srv.Router().Targets()[0].Breaker().Snapshot().Totals; tot.Succeeded != 1 {
		t.Fatalf("%+v", tot)
	}
}

// Events that arrive one at a time reach the client one at a time: the
// upstream sends each word only after the client has read the one before,
// so a relay that held an event back would hang here.
func TestStreamEventsAreNotHeldBack(t *testing.T) {
	words := []string{"one ", "two ", "three ", "four"}
	seen := make(chan struct{})
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		for _, word := range words {
			io.WriteString(w, chunk(fmt.Sprintf(`{"content":%q}`, word)))
			w.(http.Flusher).Flush()
			select {
			case <-seen:
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	_, gw := gateway(t, nil, twoTargets, p, newUpstream(t, chatOK("secondary")))
	c := newClient(gw.URL)
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	var b strings.Builder
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			b.WriteString(ch.Choices[0].Delta.Content)
			seen <- struct{}{}
		}
	}
	if st.Err() != nil || b.String() != "one two three four" {
		t.Fatalf("%q, %v", b.String(), st.Err())
	}
}

// A target that sends its preamble but no content within the TTFB budget
// is left for the next; the client sees only the secondary's answer.
func TestStreamTTFBFailsOverInvisibly(t *testing.T) {
	clk := clocktest.New(time.Time{})
	hang := make(chan struct{})
	defer close(hang)
	entered := make(chan struct{}, 1)
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		w.(http.Flusher).Flush()
		entered <- struct{}{}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	srv, gw := gateway(t, clk, twoTargets, p, s)
	c := newClient(gw.URL)
	got := make(chan string)
	go func() {
		st := c.Chat.Completions.NewStreaming(context.Background(), params("smart"))
		var b strings.Builder
		roles := 0
		for st.Next() {
			if ch := st.Current(); len(ch.Choices) > 0 {
				b.WriteString(ch.Choices[0].Delta.Content)
				if ch.Choices[0].Delta.Role != "" {
					roles++
				}
			}
		}
		if st.Err() != nil {
			b.WriteString(" ERR " + st.Err().Error())
		}
		if roles != 1 {
			b.WriteString(" (role preambles: " + string(rune('0'+roles)) + ")")
		}
		got <- b.String()
	}()
	<-entered
	clk.WaitForTimers(1)
	clk.Advance(2 * time.Second)
	if g := <-got; g != "from secondary" {
		t.Fatalf("stream %q", g)
	}
	if tot := srv.Router().Targets()[0].Breaker().Snapshot().Totals; tot.Failed != 1 {
		t.Fatalf("TTFB failure not counted: %+v", tot)
	}
}

// A stall after content has been sent ends the stream with an error event
// and without [DONE]: the client sees a failure, not a short answer.
func TestStreamStallAfterCommitIsAnError(t *testing.T) {
	clk := clocktest.New(time.Time{})
	stall := make(chan struct{})
	defer close(stall)
	p, s := newUpstream(t, streamOf([]string{"Hel", "lo"}, stall)), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, clk, twoTargets, p, s)
	c := newClient(gw.URL)
	stopClock := make(chan struct{})
	defer close(stopClock)
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	var b strings.Builder
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 {
			b.WriteString(ch.Choices[0].Delta.Content)
			if b.String() == "Hel" {
				// Time passes in steps of the idle budget until the stream
				// ends: a single step could land before the watchdog
				// re-armed for idle, and nothing would move the clock again.
				go advanceUntil(clk, 5*time.Second, stopClock)
			}
		}
	}
	if st.Err() == nil || !strings.Contains(st.Err().Error(), "incomplete") {
		t.Fatalf("stream ended with %q and err %v; want an error", b.String(), st.Err())
	}
	if b.String() != "Hel" || s.calls() != 0 {
		t.Fatalf("got %q, secondary called %d", b.String(), s.calls())
	}
	if tot := srv.Router().Targets()[0].Breaker().Snapshot().Totals; tot.Failed != 1 {
		t.Fatalf("stall not counted: %+v", tot)
	}
}

// A client that goes away cancels the upstream call, which does not count
// against the target.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	entered := make(chan struct{}, 1)
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		entered <- struct{}{}
		<-r.Context().Done()
		close(cancelled)
	})
	s := newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		_, err := c.Chat.Completions.New(ctx, params("smart"))
		done <- err
	}()
	<-entered
	cancel()
	<-done
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream call not cancelled")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		tot := srv.Router().Targets()[0].Breaker().Snapshot().Totals
		if tot.Ignored == 1 && tot.Failed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("disconnect counted: %+v", tot)
		}
		time.Sleep(time.Millisecond)
	}
	if s.calls() != 0 {
		t.Fatal("a disconnect failed over")
	}
}

func TestBadRequestsGetOpenAIErrors(t *testing.T) {
	p := newUpstream(t, chatOK("primary"))
	_, gw := gateway(t, nil, twoTargets, p, newUpstream(t, chatOK("s")))
	for _, tc := range []struct {
		body, want, param string
		status            int
	}{
		{`{"model":`, "We could not parse the JSON body", "", 400},
		{`{"messages":[]}`, "You must provide a model parameter.", "model", 400},
		{`{"model":"smart"}`, "Missing required parameter: 'messages'.", "messages", 400},
		{`{"model":"smart","messages":"hi"}`, "Invalid type for 'messages'", "messages", 400},
		{`{"model":"nope","messages":[]}`, "The model `nope` does not exist", "model", 404},
	} {
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if resp.StatusCode != tc.status || !strings.HasPrefix(e.Error.Message, tc.want) || param != tc.param || e.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %+v; want %d %q param %q", tc.body, resp.StatusCode, e.Error, tc.status, tc.want, tc.param)
		}
	}
	if p.calls() != 0 {
		t.Fatal("a bad request reached the upstream")
	}
}

func TestModelsAndEmbeddings(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path != "/v1/embeddings" {
			t.Errorf("path %s", r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`)
	})
	_, gw := gateway(t, nil, twoTargets, p, newUpstream(t, chatOK("s")))
	c := newClient(gw.URL)
	page, err := c.Models.List(t.Context())
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != "smart" {
		t.Fatalf("models %+v, %v", page, err)
	}
	emb, err := c.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
		Model: "smart", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")},
	})
	if err != nil || len(emb.Data) != 1 || emb.Data[0].Embedding[1] != 0.25 {
		t.Fatalf("embeddings %+v, %v", emb, err)
	}
}

// provider/model goes to that provider directly.
func TestDirectProviderModel(t *testing.T) {
	p := newUpstream(t, chatOK("primary"))
	_, gw := gateway(t, nil, twoTargets, p, newUpstream(t, chatOK("s")))
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("primary/gpt-4.1-mini"))
	if err != nil || text(got) != "hello from primary" || !strings.Contains(p.bodies[0], `"model":"gpt-4.1-mini"`) {
		t.Fatalf("%q %v %s", text(got), err, p.bodies)
	}
}

// /metrics shows attempts by verdict, breaker states and transitions.
func TestMetrics(t *testing.T) {
	p, s := newUpstream(t, status(503, "server_error")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	for range 4 {
		if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the fourth request in the metrics", func() bool {
		return strings.Contains(scrape(t, gw.URL), `fusebox_requests_total{code="200",model="smart"} 4`)
	})
	b := scrape(t, gw.URL)
	for _, want := range []string{
		`fusebox_upstream_attempts_total{target="primary/gpt-4.1",verdict="outage"} 3`,
		`fusebox_upstream_attempts_total{target="secondary/deepseek-chat",verdict="success"} 4`,
		`fusebox_breaker_state{state="open",target="primary/gpt-4.1"} 1`,
		`fusebox_breaker_transitions_total{from="closed",target="primary/gpt-4.1",to="open"} 1`,
		`fusebox_target_skips_total{reason="breaker open",target="primary/gpt-4.1"} 1`,
		`fusebox_requests_total{code="200",model="smart"} 4`,
		`fusebox_client_requests_total{client="",code="200"} 4`,
		`fusebox_failovers_total{target="primary/gpt-4.1",verdict="outage"} 3`,
		`fusebox_target_in_flight{target="primary/gpt-4.1"} 0`,
		`fusebox_target_in_flight{target="secondary/deepseek-chat"} 0`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// Retries on the same target and waits at a target's limits are counted;
// a request in flight shows in the in-flight gauge until it ends.
func TestMetricsRetriesLimitsInFlight(t *testing.T) {
	release := make(chan struct{})
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch n {
		case 1:
			status(503, "server_error")(w, r, n)
		case 3:
			<-release
			chatOK("slow")(w, r, n)
		default:
			chatOK("primary")(w, r, n)
		}
	})
	_, gw := gateway(t, nil, `
clients:
  - {name: web, key: kw}
providers:
  p: {type: openai, base_url: "%s", keys: [k], limits: {max_in_flight: 4}}
models:
  - name: m
    targets: [{provider: p, model: x}]
    retry: {attempts: 2, base: 1ms, max: 1ms}
`, p)
	c := newClient(gw.URL, option.WithAPIKey("kw"))
	if got, err := c.Chat.Completions.New(t.Context(), params("m")); err != nil || text(got) != "hello from primary" {
		t.Fatalf("%q %v", text(got), err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Chat.Completions.New(context.Background(), params("m"))
	}()
	eventually(t, "the slow call in flight", func() bool {
		return strings.Contains(scrape(t, gw.URL), `fusebox_target_in_flight{target="p/x"} 1`)
	})
	close(release)
	<-done
	eventually(t, "the slow call's end", func() bool {
		return strings.Contains(scrape(t, gw.URL), `fusebox_client_requests_total{client="web",code="200"} 2`)
	})
	b := scrape(t, gw.URL)
	for _, want := range []string{
		`fusebox_retries_total{target="p/x"} 1`,
		`fusebox_limiter_wait_seconds_count{target="p/x"} 3`,
		`fusebox_target_in_flight{target="p/x"} 0`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// The status document and the dashboard need the admin token and never
// show keys.
func TestStatusAndDashboardNeedAdminToken(t *testing.T) {
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, "admin_token: adm-secret\n"+twoTargets, p, s)
	c := newClient(gw.URL)
	if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
		t.Fatal(err)
	}
	get := func(path, auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, gw.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/fusebox/status", ""); code != 401 {
		t.Fatalf("status without token: %d", code)
	}
	if code, _ := get("/fusebox/status", "wrong"); code != 401 {
		t.Fatalf("status with a wrong token: %d", code)
	}
	code, body := get("/fusebox/status", "adm-secret")
	if code != 200 || !strings.Contains(body, `"name":"primary/gpt-4.1","state":"closed"`) || !strings.Contains(body, `"succeeded":1`) {
		t.Fatalf("status %d %s", code, body)
	}
	for _, secret := range []string{"pk1", "pk2", "sk1", "adm-secret"} {
		if strings.Contains(body, secret) {
			t.Fatalf("status leaks %q", secret)
		}
	}
	if code, body := get("/dashboard?token=adm-secret", ""); code != 200 || !strings.Contains(body, "/fusebox/status") {
		t.Fatalf("dashboard %d", code)
	}
}

// /readyz follows the breakers; an operator can force and reset one, and
// the access log names the client and target but never a key.
func TestReadyAdminAndAccessLog(t *testing.T) {
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	var logs strings.Builder
	var logMu sync.Mutex
	_, gw := start(t, Options{Logger: slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))},
		"admin_token: adm\nclients:\n  - {name: web, key: client-secret-1}\n"+twoTargets, p, s)
	c := newClient(gw.URL, option.WithAPIKey("client-secret-1"))
	if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
		t.Fatal(err)
	}
	do := func(method, path string) int {
		req, _ := http.NewRequest(method, gw.URL+path, nil)
		req.Header.Set("Authorization", "Bearer adm")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := do("GET", "/readyz"); code != 200 {
		t.Fatalf("readyz %d", code)
	}
	for _, target := range []string{"primary/gpt-4.1", "secondary/deepseek-chat"} {
		if code := do("POST", "/fusebox/breaker?target="+target+"&action=force-open"); code != 200 {
			t.Fatalf("force-open %s: %d", target, code)
		}
	}
	if code := do("GET", "/readyz"); code != 503 {
		t.Fatalf("readyz with every target forced open: %d", code)
	}
	if code := do("POST", "/fusebox/breaker?target=primary/gpt-4.1&action=reset"); code != 200 {
		t.Fatalf("reset %d", code)
	}
	if code := do("GET", "/readyz"); code != 200 {
		t.Fatalf("readyz after reset %d", code)
	}
	if code := do("POST", "/fusebox/breaker?target=nope&action=reset"); code != 404 {
		t.Fatalf("unknown target %d", code)
	}
	eventually(t, "the request's log line", func() bool { return strings.Contains(logsString(&logs, &logMu), `"client":"web"`) })
	l := logsString(&logs, &logMu)
	if !strings.Contains(l, `"client":"web"`) || !strings.Contains(l, `"target":"primary/gpt-4.1"`) || !strings.Contains(l, `"action":"force-open"`) ||
		!strings.Contains(l, `"tokens_in":3,"tokens_out":3,"cost_usd":0.00003`) {
		t.Fatalf("log lacks the request or the admin action:\n%s", l)
	}
	for _, secret := range []string{"client-secret-1", "adm\"", "pk1", "sk1"} {
		if strings.Contains(l, secret) {
			t.Fatalf("log leaks %q:\n%s", secret, l)
		}
	}
}

// The answer's cost, from its usage at the target's price, is in a header
// and the metrics; a body that breaks off before it is sent fails over.
func TestCostAndBrokenBodyFailover(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			io.WriteString(w, `{"id":"chatcmpl-1","choices":[`)
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		chatOK("primary")(w, r, n)
	})
	s := newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, twoTargets, p, s)
	var resp *http.Response
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"), option.WithResponseInto(&resp))
	if err != nil || text(got) != "hello from secondary" {
		t.Fatalf("broken body: %q, %v", text(got), err)
	}
	// secondary: 3 prompt + 3 completion tokens at $0.27 / $1.10 per Mtok
	if c := resp.Header.Get("X-Fusebox-Cost"); c != "0.00000411" {
		t.Fatalf("X-Fusebox-Cost %q", c)
	}
	b := scrape(t, gw.URL)
	for _, want := range []string{`fusebox_cost_usd_total{target="secondary/deepseek-chat"} 4.11`,
		`fusebox_tokens_total{direction="output",target="secondary/deepseek-chat"} 3`} {
		if !strings.Contains(b, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// A client key's own rpm: over it, a 429 with Retry-After, and the
// upstream never sees the request.
func TestClientRateLimit(t *testing.T) {
	clk := clocktest.New(time.Time{})
	p := newUpstream(t, chatOK("primary"))
	_, gw := gateway(t, clk, "clients:\n  - {name: batch, key: kb, limits: {rpm: 2}}\n"+twoTargets, p, newUpstream(t, chatOK("s")))
	c := newClient(gw.URL, option.WithAPIKey("kb"))
	for range 2 {
		if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Chat.Completions.New(t.Context(), params("smart"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || !strings.Contains(apiErr.Message, `client "batch"`) ||
		apiErr.Response.Header.Get("Retry-After") != "30" {
		t.Fatalf("third request in a minute: %v", err)
	}
	if p.calls() != 2 {
		t.Fatalf("upstream saw %d calls", p.calls())
	}
	clk.Advance(30 * time.Second)
	if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
		t.Fatalf("after 30 s: %v", err)
	}
}

// A conversation stays on the target that served it while that target is
// healthy, and moves only on failover.
func TestStickySessions(t *testing.T) {
	a, b := newUpstream(t, chatOK("a")), newUpstream(t, chatOK("b"))
	_, gw := gateway(t, nil, `
providers:
  pa: {type: openai, base_url: "%s", keys: [k]}
  pb: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: smart
    strategy: weighted
    targets: [{provider: pa, model: m, weight: 1}, {provider: pb, model: m, weight: 1}]
    retry: {attempts: 1}
`, a, b)
	c := newClient(gw.URL, option.WithHeader("X-Fusebox-Session", "conv-1"))
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil {
		t.Fatal(err)
	}
	first := text(got)
	for i := range 20 {
		got, err := c.Chat.Completions.New(t.Context(), params("smart"))
		if err != nil || text(got) != first {
			t.Fatalf("request %d of the conversation served by %q; want %q", i, text(got), first)
		}
	}
	// the conversation's target fails: it moves, and stays moved
	up, other := a, "hello from b"
	if first == "hello from b" {
		up, other = b, "hello from a"
	}
	up.set(status(503, "server_error"))
	for i := range 5 {
		got, err := c.Chat.Completions.New(t.Context(), params("smart"))
		if err != nil || text(got) != other {
			t.Fatalf("after failover, request %d served by %q; want %q", i, text(got), other)
		}
	}
	up.set(chatOK("recovered"))
	if got, _ := c.Chat.Completions.New(t.Context(), params("smart")); text(got) != other {
		t.Fatalf("the conversation moved back to %q while its new target was healthy", text(got))
	}
}

// An operator takes a key out of the rotation and puts it back; the status
// document names keys by ID only.
func TestAdminKeyToggle(t *testing.T) {
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, nil, "admin_token: adm\n"+twoTargets, p, s)
	post := func(q string) int {
		req, _ := http.NewRequest(http.MethodPost, gw.URL+"/fusebox/key?"+q, nil)
		req.Header.Set("Authorization", "Bearer adm")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, id := range []string{"primary%230", "primary%231"} {
		if code := post("id=" + id + "&action=disable"); code != 200 {
			t.Fatalf("disable %s: %d", id, code)
		}
	}
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from secondary" || p.calls() != 0 {
		t.Fatalf("with the primary's keys disabled: %q %v (primary called %d)", text(got), err, p.calls())
	}
	if code := post("id=primary%230&action=enable"); code != 200 {
		t.Fatalf("enable: %d", code)
	}
	if got, _ := c.Chat.Completions.New(t.Context(), params("smart")); text(got) != "hello from primary" {
		t.Fatalf("after enabling a key: %q", text(got))
	}
	if code := post("id=nope&action=enable"); code != 404 {
		t.Fatalf("unknown key: %d", code)
	}
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/fusebox/status", nil)
	req.Header.Set("Authorization", "Bearer adm")
	resp, _ := http.DefaultClient.Do(req)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"id":"primary#1","state":"disabled"`) || strings.Contains(string(b), "pk1") {
		t.Fatalf("status keys: %s", b)
	}
}

// A client's budget admits a request only while what it may cost at most
// (prompt and max_tokens at the dearest target's price) fits; past it a
// 429 names the budget and when it resets, until the next UTC day. Each
// answer is settled at what it really cost.
func TestClientBudget(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	p := newUpstream(t, chatOK("primary")) // 3 + 3 tokens at $2/$8 per Mtok = $0.00003
	_, gw := gateway(t, clk, "clients:\n  - {name: web, key: kw, budget: {daily: 0.0002}}\n"+twoTargets, p, newUpstream(t, chatOK("s")))
	c := newClient(gw.URL, option.WithAPIKey("kw"))
	small := params("smart")
	small.MaxTokens = openai.Int(3) // reserves about $0.00006: ~20 prompt tokens and 3 out
	served := 0
	var err error
	for range 20 {
		if _, err = c.Chat.Completions.New(t.Context(), small); err != nil {
			break
		}
		served++
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || !strings.Contains(apiErr.Message, "daily budget of $0.0002") ||
		!strings.Contains(apiErr.Message, "2026-03-11T00:00:00Z") || apiErr.Response.Header.Get("Retry-After") != "43200" {
		t.Fatalf("over budget: %v", err)
	}
	// Settled at $0.00003 each, the spend stays within the budget, and the
	// last request was refused because its reservation did not fit.
	if spent := float64(served) * 0.00003; served < 4 || spent > 0.0002 {
		t.Fatalf("%d requests served ($%g); want the budget used, never passed", served, spent)
	}
	clk.Set(time.Date(2026, 3, 11, 0, 0, 1, 0, time.UTC))
	if _, err := c.Chat.Completions.New(t.Context(), small); err != nil {
		t.Fatalf("the next day: %v", err)
	}
}

// A 2xx that is not a JSON object (an HTML page from a proxy in the way, a
// cut body) is no answer: the walk goes on to the next target unseen, and
// counts it against the target that sent it.
func TestNonJSONSuccessFailsOver(t *testing.T) {
	page := func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>Service temporarily unavailable</body></html>")
	}
	p, s := newUpstream(t, page), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	var resp *http.Response
	got, err := c.Chat.Completions.New(t.Context(), params("smart"), option.WithResponseInto(&resp))
	if err != nil || text(got) != "hello from secondary" {
		t.Fatalf("%q %v", text(got), err)
	}
	if tried := resp.Header.Get("X-Fusebox-Tried"); !strings.Contains(tried, "invalid_answer") {
		t.Fatalf("tried %q; want the primary's invalid answer named", tried)
	}
	if tot := srv.Router().Targets()[0].Breaker().Snapshot().Totals; tot.Failed != 1 {
		t.Fatalf("primary breaker totals %+v; want one failure", tot)
	}
	// Every target so: a 503 that says why.
	s.set(page)
	_, err = c.Chat.Completions.New(t.Context(), params("smart"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || !strings.Contains(apiErr.Message, "not a JSON object") &&
		!strings.Contains(apiErr.Message, "invalid_answer") {
		t.Fatalf("all targets answering HTML: %v", err)
	}
}

// advanceUntil moves clk on by step whenever a timer is pending, until
// stop is closed.
func advanceUntil(clk *clocktest.Clock, step time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
		}
		if clk.Pending() > 0 {
			clk.Advance(step)
		}
	}
}
