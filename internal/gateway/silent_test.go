package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Silent failures end to end, over loopback and in real time: upstreams
// that hang, stall or end early, watchdogs that cut them, hedges, request
// deadlines and clients that leave. Budgets are a few hundred
// milliseconds; the tests assert who served and what each target's
// breaker heard, never tight durations.

// silentLadder is twoTargets with one key per provider and short budgets;
// extra is appended to the alias (it must not contain %).
func silentLadder(timeouts, extra string) string {
	return `
providers:
  primary: {type: openai, base_url: "%s", keys: [pk1]}
  secondary: {type: openai, base_url: "%s", keys: [sk1]}
models:
  - name: smart
    targets:
      - {provider: primary, model: gpt-4.1, price: {input: 2, output: 8}}
      - {provider: secondary, model: deepseek-chat, price: {input: 0.27, output: 1.1}}
    breaker: {consecutive: 3, open: 10s}
    timeouts: ` + timeouts + "\n" + extra
}

// hangingUpstream is an upstream whose handler may block: release is
// closed when the test ends (before the server's Close, which waits for
// its handlers), so a hung handler never outlives its test.
func hangingUpstream(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{})) *upstream {
	release := make(chan struct{})
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) { handle(w, r, n, release) })
	t.Cleanup(func() { close(release) })
	return u
}

// block waits until the caller's request ends or the test does; it
// reports whether the request ended (the gateway canceled it).
func block(r *http.Request, release <-chan struct{}) bool {
	select {
	case <-r.Context().Done():
		return true
	case <-release:
		return false
	}
}

// hangBeforeHeaders never answers.
func hangBeforeHeaders(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
	block(r, release)
}

// hangAfterHeaders sends 200 headers, then nothing.
func hangAfterHeaders(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	block(r, release)
}

// totals returns the breaker totals of the target named name.
func totals(t *testing.T, srv *Server, name string) breaker.Totals {
	t.Helper()
	return targetNamed(t, srv, name).Breaker().Snapshot().Totals
}

func breakerState(t *testing.T, srv *Server, name string) breaker.State {
	t.Helper()
	return targetNamed(t, srv, name).Breaker().State()
}

func targetNamed(t *testing.T, srv *Server, name string) *router.Target {
	t.Helper()
	for _, tg := range srv.Router().Targets() {
		if tg.Name == name {
			return tg
		}
	}
	t.Fatalf("no target %s", name)
	return nil
}

// settled waits until the target's breaker has heard of n attempts in
// all (succeeded, failed or ignored): attempts are reported as they end,
// which may be just after the client has its answer.
func settled(t *testing.T, srv *Server, name string, n uint64) breaker.Totals {
	t.Helper()
	var tot breaker.Totals
	eventually(t, name+"'s attempts reported", func() bool {
		tot = totals(t, srv, name)
		return tot.Succeeded+tot.Failed+tot.Ignored >= n
	})
	return tot
}

// metricSum adds up the samples of the /metrics series that start with
// prefix (a name and the first labels).
func metricSum(t *testing.T, base, prefix string) float64 {
	t.Helper()
	sum := 0.0
	for _, line := range strings.Split(scrape(t, base), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += f
	}
	return sum
}

// streamText reads an openai-go stream to its end: the text, the number
// of role preambles, and the stream's error.
func streamText(st interface {
	Next() bool
	Current() openai.ChatCompletionChunk
	Err() error
}) (string, int, error) {
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
	return b.String(), roles, st.Err()
}

// A plain answer whose upstream never sends its headers: the TTFB
// watchdog cuts it, the secondary answers, and the primary's breaker
// counts each cut until it opens; then the primary is not called at all.
func TestHangBeforeHeadersFailsOver(t *testing.T) {
	testHangFailsOver(t, hangBeforeHeaders)
}

// The same with headers sent and then silence: the TTFB budget covers the
// first byte of the body too.
func TestHangAfterHeadersFailsOver(t *testing.T) {
	testHangFailsOver(t, hangAfterHeaders)
}

func testHangFailsOver(t *testing.T, hang func(http.ResponseWriter, *http.Request, int, <-chan struct{})) {
	p, s := hangingUpstream(t, hang), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 300ms, idle: 300ms}", ""), p, s)
	c := newClient(gw.URL)
	for i := range 4 {
		var resp *http.Response
		got, err := c.Chat.Completions.New(t.Context(), params("smart"), option.WithResponseInto(&resp))
		if err != nil || text(got) != "hello from secondary" {
			t.Fatalf("request %d: %q, %v", i, text(got), err)
		}
		if tg := resp.Header.Get("X-Fusebox-Target"); tg != "secondary/deepseek-chat" {
			t.Fatalf("request %d served by %q", i, tg)
		}
		if i < 3 {
			if tot := settled(t, srv, "primary/gpt-4.1", uint64(i+1)); tot.Failed != uint64(i+1) || tot.Succeeded != 0 {
				t.Fatalf("after request %d the primary's breaker has %+v; want %d failures", i, tot, i+1)
			}
		}
	}
	if p.calls() != 3 {
		t.Fatalf("primary got %d calls; want 3 (one per request, none retried, none once open)", p.calls())
	}
	if st := breakerState(t, srv, "primary/gpt-4.1"); st != breaker.StateOpen {
		t.Fatalf("primary breaker %v; want open", st)
	}
	if s.calls() != 4 {
		t.Fatalf("secondary got %d calls", s.calls())
	}
	// Three failovers from the primary's cuts; the fourth request skipped
	// an open breaker, which is no failover.
	if n := metricSum(t, gw.URL, `fusebox_failovers_total{target="primary/gpt-4.1",verdict="outage"}`); n != 3 {
		t.Fatalf("fusebox_failovers_total for the primary is %v; want 3", n)
	}
}

// A slow primary is hedged: the secondary's answer wins long before the
// primary's would have come, the primary's request is canceled, and the
// attempt the hedge beat is reported to its breaker as what it was, a
// first byte too late (a hung target's breaker opens under hedging as it
// does without). The wait for it is not the gateway's own time.
func TestHedgeWinsAndCancelsTheSlowTarget(t *testing.T) {
	canceled := make(chan struct{})
	var once sync.Once
	p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
		select {
		case <-time.After(2 * time.Second):
			chatOK("primary")(w, r, n)
		case <-r.Context().Done():
			once.Do(func() { close(canceled) })
		case <-release:
		}
	})
	s := newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 5s}", "    hedge: {after: 200ms, max: 1, budget: 1}\n"), p, s)
	c := newClient(gw.URL)
	began := time.Now()
	var resp *http.Response
	got, err := c.Chat.Completions.New(t.Context(), params("smart"), option.WithResponseInto(&resp))
	took := time.Since(began)
	if err != nil || text(got) != "hello from secondary" {
		t.Fatalf("%q, %v", text(got), err)
	}
	if tg := resp.Header.Get("X-Fusebox-Target"); tg != "secondary/deepseek-chat" {
		t.Fatalf("served by %q", tg)
	}
	if took > 1500*time.Millisecond {
		t.Fatalf("the hedged answer took %v; the primary answers after 2s", took)
	}
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the primary's request was not canceled after the hedge won")
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 || tot.Ignored != 0 || tot.Succeeded != 0 {
		t.Fatalf("the attempt the hedge beat: %+v, want one failure", tot)
	}
	wait, _ := strconv.Atoi(resp.Header.Get("X-Fusebox-Hedge-Wait-Us"))
	own, _ := strconv.Atoi(resp.Header.Get("X-Fusebox-Overhead-Us"))
	if wait == 0 || own >= wait {
		t.Fatalf("X-Fusebox-Hedge-Wait-Us %d, X-Fusebox-Overhead-Us %d: the hedge's wait is its own field", wait, own)
	}
	if p.calls() != 1 || s.calls() != 1 {
		t.Fatalf("calls: primary %d, secondary %d", p.calls(), s.calls())
	}
	if n := metricSum(t, gw.URL, `fusebox_failovers_total{target="primary/gpt-4.1",`); n != 0 {
		t.Fatalf("fusebox_failovers_total for the primary is %v; a hedge is no failover", n)
	}
	if a, b := p.header(0).Get("Idempotency-Key"), s.header(0).Get("Idempotency-Key"); a == "" || a == b {
		t.Fatalf("idempotency keys %q and %q; want one of its own for the hedge", a, b)
	}
}

// A hedged stream: the primary sends its preamble and then nothing for
// 2s, the secondary streams at once. The client gets the secondary's
// stream alone, with one preamble, and the primary's attempt is canceled.
func TestHedgedStreamTakesTheFirstContent(t *testing.T) {
	canceled := make(chan struct{})
	var once sync.Once
	p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		w.(http.Flusher).Flush()
		select {
		case <-time.After(2 * time.Second):
			io.WriteString(w, chunk(`{"content":"from primary"}`))
			io.WriteString(w, "data: [DONE]\n\n")
		case <-r.Context().Done():
			once.Do(func() { close(canceled) })
		case <-release:
		}
	})
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 5s, idle: 5s}", "    hedge: {after: 200ms, max: 1, budget: 1}\n"), p, s)
	c := newClient(gw.URL)
	var resp *http.Response
	got, roles, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart"), option.WithResponseInto(&resp)))
	if err != nil || got != "from secondary" || roles != 1 {
		t.Fatalf("stream %q (%d role preambles), %v", got, roles, err)
	}
	if tg := resp.Header.Get("X-Fusebox-Target"); tg != "secondary/deepseek-chat" {
		t.Fatalf("served by %q", tg)
	}
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the primary's stream was not canceled after the hedge won")
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 || tot.Succeeded != 0 {
		t.Fatalf("the silent stream the hedge beat: %+v, want one failure", tot)
	}
	if tot := settled(t, srv, "secondary/deepseek-chat", 1); tot.Succeeded != 1 {
		t.Fatalf("the winner's breaker: %+v", tot)
	}
}

// When the primary answers after the hedge was sent but before the hedge
// does, the primary wins and the hedge is the one canceled.
func TestHedgeLosesToAPrimaryThatAnswers(t *testing.T) {
	canceled := make(chan struct{})
	var once sync.Once
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		select {
		case <-time.After(400 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		chatOK("primary")(w, r, n)
	})
	s := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
		if block(r, release) {
			once.Do(func() { close(canceled) })
		}
	})
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 5s}", "    hedge: {after: 200ms, max: 1, budget: 1}\n"), p, s)
	c := newClient(gw.URL)
	var resp *http.Response
	got, err := c.Chat.Completions.New(t.Context(), params("smart"), option.WithResponseInto(&resp))
	if err != nil || text(got) != "hello from primary" || resp.Header.Get("X-Fusebox-Target") != "primary/gpt-4.1" {
		t.Fatalf("%q, %v", text(got), err)
	}
	if s.calls() != 1 {
		t.Fatalf("the secondary got %d calls; want the hedge", s.calls())
	}
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the hedge was not canceled after the primary won")
	}
	if tot := settled(t, srv, "secondary/deepseek-chat", 1); tot.Failed != 0 || tot.Succeeded != 0 {
		t.Fatalf("the canceled hedge was reported: %+v", tot)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Succeeded != 1 {
		t.Fatalf("the primary's breaker: %+v", tot)
	}
}

// A stream that sends its role preamble and then nothing is left before
// it commits: the client gets the secondary's whole stream, with one
// preamble and no error.
func TestStreamStallBeforeCommitFailsOver(t *testing.T) {
	p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		w.(http.Flusher).Flush()
		block(r, release)
	})
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 300ms, idle: 300ms}", ""), p, s)
	c := newClient(gw.URL)
	var resp *http.Response
	got, roles, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart"), option.WithResponseInto(&resp)))
	if err != nil || got != "from secondary" || roles != 1 {
		t.Fatalf("stream %q (%d role preambles), %v", got, roles, err)
	}
	if tg := resp.Header.Get("X-Fusebox-Target"); tg != "secondary/deepseek-chat" {
		t.Fatalf("served by %q", tg)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 {
		t.Fatalf("the stall was not counted: %+v", tot)
	}
}

// A stream that stalls after its content began is cut by the idle
// watchdog: the client has the chunks sent and then an error, never
// [DONE]; the primary's breaker hears of it; the access log says broken;
// and no failover is counted, since the request did not go on.
func TestStreamStallAfterCommitIsBroken(t *testing.T) {
	p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		io.WriteString(w, chunk(`{"content":"Hel"}`))
		io.WriteString(w, chunk(`{"content":"lo"}`))
		w.(http.Flusher).Flush()
		block(r, release)
	})
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	var logs strings.Builder
	var logMu sync.Mutex
	srv, gw := start(t, Options{Logger: slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))},
		silentLadder("{ttfb: 2s, idle: 300ms}", ""), p, s)
	c := newClient(gw.URL)
	got, _, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart")))
	if err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("stream ended with %q and err %v; want an error", got, err)
	}
	if got != "Hello" || s.calls() != 0 {
		t.Fatalf("got %q, secondary called %d times", got, s.calls())
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 || tot.Succeeded != 0 {
		t.Fatalf("the stall was not counted: %+v", tot)
	}
	eventually(t, "the access log line", func() bool { return strings.Contains(logsString(&logs, &logMu), `"msg":"request"`) })
	if l := logsString(&logs, &logMu); !strings.Contains(l, `"outcome":"broken"`) {
		t.Fatalf("access log lacks outcome broken:\n%s", l)
	}
	if n := metricSum(t, gw.URL, `fusebox_failovers_total{target="primary/gpt-4.1",`); n != 0 {
		t.Fatalf("fusebox_failovers_total for the primary is %v; a broken stream is no failover", n)
	}
}

// A request deadline ends a request whose targets all hang: a 504 in
// OpenAI's shape, and the attempts it cut were canceled, not failed.
func TestDeadlineAnswers504(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			p, s := hangingUpstream(t, hangBeforeHeaders), hangingUpstream(t, hangBeforeHeaders)
			srv, gw := gateway(t, nil, silentLadder("{deadline: 500ms, ttfb: 5s}", ""), p, s)
			began := time.Now()
			body := `{"model":"smart","stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"user","content":"hi"}]}`
			resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if took := time.Since(began); took > 4*time.Second {
				t.Fatalf("the 504 took %v; the deadline is 500ms", took)
			}
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if resp.StatusCode != http.StatusGatewayTimeout || json.Unmarshal(b, &e) != nil || e.Error.Message == "" ||
				e.Error.Code == nil || *e.Error.Code != "request_timeout" || !strings.Contains(e.Error.Message, "deadline") {
				t.Fatalf("%d %s; want a 504 in OpenAI's error shape", resp.StatusCode, b)
			}
			tot := settled(t, srv, "primary/gpt-4.1", 1)
			if tot.Failed != 0 || tot.Succeeded != 0 {
				t.Fatalf("the primary's breaker counted the deadline: %+v", tot)
			}
			if tot := totals(t, srv, "secondary/deepseek-chat"); tot.Failed != 0 || tot.Succeeded != 0 {
				t.Fatalf("the secondary's breaker counted the deadline: %+v", tot)
			}
			if n := metricSum(t, gw.URL, `fusebox_failovers_total{target="primary/gpt-4.1",`); n != 0 {
				t.Fatalf("fusebox_failovers_total for the primary is %v; the deadline is no failover", n)
			}
		})
	}
}

// The deadline passes while the secondary's attempt is in flight, after
// the primary's own TTFB watchdog cut it: the primary's cut counts, the
// secondary's cancellation does not.
func TestDeadlineCancelsTheAttemptInFlight(t *testing.T) {
	p, s := hangingUpstream(t, hangBeforeHeaders), hangingUpstream(t, hangBeforeHeaders)
	yaml := `
providers:
  primary: {type: openai, base_url: "%s", keys: [pk1], timeouts: {ttfb: 200ms}}
  secondary: {type: openai, base_url: "%s", keys: [sk1], timeouts: {ttfb: 5s}}
defaults:
  timeouts: {deadline: 700ms}
models:
  - name: smart
    targets:
      - {provider: primary, model: gpt-4.1}
      - {provider: secondary, model: deepseek-chat}
    breaker: {consecutive: 3, open: 10s}
`
	srv, gw := gateway(t, nil, yaml, p, s)
	c := newClient(gw.URL)
	_, err := c.Chat.Completions.New(t.Context(), params("smart"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("err = %v; want a 504", err)
	}
	if p.calls() != 1 || s.calls() != 1 {
		t.Fatalf("calls: primary %d, secondary %d; want one each", p.calls(), s.calls())
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 {
		t.Fatalf("the primary's TTFB cut was not counted: %+v", tot)
	}
	if tot := settled(t, srv, "secondary/deepseek-chat", 1); tot.Failed != 0 || tot.Succeeded != 0 || tot.Ignored != 1 {
		t.Fatalf("the secondary's breaker: %+v; want the deadline's cancellation ignored", tot)
	}
}

// A client that leaves while the primary hangs, before anything was sent
// or in the middle of a stream: the primary's breaker hears neither a
// failure nor a success, and nothing fails over.
func TestClientLeavesWhilePrimaryHangs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		hang   func(http.ResponseWriter, *http.Request, int, <-chan struct{})
	}{
		{"plain", false, hangBeforeHeaders},
		{"stream-before-commit", true, hangBeforeHeaders},
		{"stream-after-commit", true, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk(`{"role":"assistant","content":"Hel"}`))
			w.(http.Flusher).Flush()
			block(r, release)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered := make(chan struct{}, 1)
			ended := make(chan struct{})
			var once sync.Once
			p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
				entered <- struct{}{}
				tc.hang(w, r, n, release)
				if r.Context().Err() != nil {
					once.Do(func() { close(ended) })
				}
			})
			s := newUpstream(t, streamOf([]string{"secondary"}, nil))
			// No drain: the client's leaving cancels at once (drain_test.go
			// has the drained case).
			srv, gw := gateway(t, nil, "server: {usage_drain: 0s}\n"+silentLadder("{ttfb: 10s, idle: 10s}", ""), p, s)
			c := newClient(gw.URL)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			first := make(chan struct{}, 1) // the client has content
			done := make(chan error, 1)
			go func() {
				if !tc.stream {
					_, err := c.Chat.Completions.New(ctx, params("smart"))
					done <- err
					return
				}
				st := c.Chat.Completions.NewStreaming(ctx, params("smart"))
				for st.Next() {
					if ch := st.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
						first <- struct{}{}
					}
				}
				st.Close()
				done <- st.Err()
			}()
			<-entered
			if tc.name == "stream-after-commit" {
				<-first
			}
			cancel()
			if err := <-done; err == nil {
				t.Fatal("the canceled request succeeded")
			}
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the primary's request was not canceled")
			}
			tot := settled(t, srv, "primary/gpt-4.1", 1)
			if tot.Failed != 0 || tot.Succeeded != 0 || tot.Ignored != 1 {
				t.Fatalf("the primary's breaker: %+v; want the attempt ignored", tot)
			}
			if s.calls() != 0 {
				t.Fatal("a client that left was failed over")
			}
			if n := metricSum(t, gw.URL, `fusebox_failovers_total{target="primary/gpt-4.1",`); n != 0 {
				t.Fatalf("fusebox_failovers_total for the primary is %v; want 0", n)
			}
		})
	}
}

// An Anthropic client streaming /v1/messages, an OpenAI-compatible
// primary that hangs before its headers: the client gets the secondary's
// answer as one whole Messages stream.
func TestMessagesStreamFailsOverFromAHang(t *testing.T) {
	p := hangingUpstream(t, hangBeforeHeaders)
	s := newUpstream(t, streamOf([]string{"hello ", "from ", "secondary"}, nil))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 300ms, idle: 300ms}", ""), p, s)
	client := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	st := client.Messages.NewStreaming(t.Context(), anthropicsdk.MessageNewParams{
		Model: "smart", MaxTokens: 100,
		Messages: []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("hi"))},
	})
	var b strings.Builder
	var types []string
	for st.Next() {
		ev := st.Current()
		types = append(types, string(ev.Type))
		if ev.Type == "content_block_delta" {
			b.WriteString(ev.Delta.Text)
		}
	}
	if st.Err() != nil || b.String() != "hello from secondary" {
		t.Fatalf("stream %q, %v", b.String(), st.Err())
	}
	if len(types) == 0 || types[0] != "message_start" || types[len(types)-1] != "message_stop" || strings.Count(strings.Join(types, " "), "message_start") != 1 {
		t.Fatalf("events %v; want one message, started and stopped", types)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 {
		t.Fatalf("the hang was not counted: %+v", tot)
	}
}

// holdFirst is a transport that, on the first call to host, holds the
// response it got until release is closed: the window between a
// stream's headers arriving and the router taking them, made wide.
type holdFirst struct {
	rt      *http.Transport
	host    string
	calls   atomic.Int32
	arrived chan struct{} // closed when the held response is in
	release chan struct{}
}

func (h *holdFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.rt.RoundTrip(r)
	if r.URL.Host == h.host && h.calls.Add(1) == 1 {
		close(h.arrived)
		<-h.release
	}
	return resp, err
}

// A TTFB cut that lands just as a stream's headers arrive must leave the
// target as it found it: no stream counted in flight forever, which would
// make the target "suspected stalled" for good and skipped while healthy.
func TestTTFBCutAsHeadersArriveLeavesNoStream(t *testing.T) {
	clk := clocktest.New(time.Time{})
	p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, n int, release <-chan struct{}) {
		if n > 1 {
			streamOf([]string{"from ", "primary"}, nil)(w, r, n)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		w.(http.Flusher).Flush()
		block(r, release)
	})
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	hold := &holdFirst{rt: http.DefaultTransport.(*http.Transport).Clone(), host: strings.TrimPrefix(p.URL, "http://"),
		arrived: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(hold.rt.CloseIdleConnections)
	_, gw := start(t, Options{Clock: clk, Transport: hold}, silentLadder("{ttfb: 2s, idle: 4s}", ""), p, s)
	c := newClient(gw.URL)
	got := make(chan string, 1)
	go func() {
		text, _, err := streamText(c.Chat.Completions.NewStreaming(context.Background(), params("smart")))
		if err != nil {
			text += " ERR " + err.Error()
		}
		got <- text
	}()
	<-hold.arrived
	clk.Advance(2 * time.Second) // the TTFB watchdog cuts the attempt
	close(hold.release)          // and then the router gets the headers
	if g := <-got; g != "from secondary" {
		t.Fatalf("first stream %q", g)
	}
	clk.Advance(5 * time.Second) // past suspect_after (idle/8); the breaker is closed
	var resp *http.Response
	text, _, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart"), option.WithResponseInto(&resp)))
	if err != nil || text != "from primary" {
		t.Fatalf("second stream %q, %v (tried: %q); want the healthy primary to serve", text, err, resp.Header.Get("X-Fusebox-Tried"))
	}
}

// The deadline may pass after an answer has begun: a plain answer whose
// body stops after its first bytes, a stream after its first content.
// The gateway ends the request (a 504 for the plain answer, which the
// client has not seen; an error event for the stream), and the target,
// cut by the gateway's own deadline rather than its watchdogs, is not
// blamed.
func TestDeadlineAfterTheAnswerBegan(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		hang   func(http.ResponseWriter, *http.Request, int, <-chan struct{})
	}{
		{"plain-mid-body", false, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion",`)
			w.(http.Flusher).Flush()
			block(r, release)
		}},
		{"stream-after-commit", true, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk(`{"role":"assistant","content":"Hel"}`))
			w.(http.Flusher).Flush()
			block(r, release)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s := hangingUpstream(t, tc.hang), newUpstream(t, chatOK("secondary"))
			srv, gw := gateway(t, nil, silentLadder("{deadline: 500ms, ttfb: 5s, idle: 5s}", ""), p, s)
			body := `{"model":"smart","stream":` + strconv.FormatBool(tc.stream) + `,"messages":[{"role":"user","content":"hi"}]}`
			resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case !tc.stream && resp.StatusCode != http.StatusGatewayTimeout:
				t.Fatalf("%d %s; want a 504", resp.StatusCode, b)
			case tc.stream && (resp.StatusCode != 200 || strings.Contains(string(b), "[DONE]") || !strings.Contains(string(b), `"error"`)):
				t.Fatalf("%d %s; want the stream ended with an error event", resp.StatusCode, b)
			}
			if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 0 || tot.Succeeded != 0 {
				t.Fatalf("the primary's breaker counted the gateway's own deadline: %+v", tot)
			}
			if s.calls() != 0 {
				t.Fatalf("secondary called %d times after the deadline", s.calls())
			}
		})
	}
}

// trickle streams a chunk every gap until it has sent n (then [DONE]), or
// forever with n 0.
func trickle(gap time.Duration, n int) func(http.ResponseWriter, *http.Request, int, <-chan struct{}) {
	return func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		for i := 0; n == 0 || i < n; i++ {
			io.WriteString(w, chunk(`{"content":"x"}`))
			w.(http.Flusher).Flush()
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				return
			case <-release:
				return
			}
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// A stream whose chunks come steadily, each well within the idle budget,
// runs past that budget many times over: the idle watchdog restarts at
// every chunk.
func TestSteadyStreamOutlivesItsIdleBudget(t *testing.T) {
	p := hangingUpstream(t, trickle(60*time.Millisecond, 15)) // ~0.9s in all
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 300ms, idle: 300ms}", ""), p, newUpstream(t, chatOK("secondary")))
	c := newClient(gw.URL)
	got, _, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart")))
	if err != nil || got != strings.Repeat("x", 15) {
		t.Fatalf("stream %q, %v", got, err)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Succeeded != 1 {
		t.Fatalf("the primary's breaker: %+v; want a success", tot)
	}
}

// A stream that never ends is cut by the attempt's total budget, however
// steadily its chunks come: an error after the chunks, a failure for its
// target.
func TestEndlessStreamIsCutByItsTotal(t *testing.T) {
	p := hangingUpstream(t, trickle(50*time.Millisecond, 0))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 300ms, idle: 300ms, total: 500ms}", ""), p, newUpstream(t, chatOK("secondary")))
	c := newClient(gw.URL)
	got, _, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart")))
	if err == nil || !strings.Contains(err.Error(), "timeout") || len(got) < 2 {
		t.Fatalf("stream %q, %v; want chunks, then an error naming the timeout", got, err)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 {
		t.Fatalf("the primary's breaker: %+v; want a failure", tot)
	}
}

// messagesStream streams /v1/messages with the Anthropic client and
// returns the text, the event types and the stream's error.
func messagesStream(t *testing.T, base string) (string, []string, error) {
	t.Helper()
	client := anthropicsdk.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	st := client.Messages.NewStreaming(t.Context(), anthropicsdk.MessageNewParams{
		Model: "smart", MaxTokens: 100,
		Messages: []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("hi"))},
	})
	var b strings.Builder
	var types []string
	for st.Next() {
		ev := st.Current()
		types = append(types, string(ev.Type))
		if ev.Type == "content_block_delta" {
			b.WriteString(ev.Delta.Text)
		}
	}
	return b.String(), types, st.Err()
}

// Through /v1/messages, a translated stream that finished and closed
// without [DONE] is a whole message; one that stalled after its content
// began ends in an error the Anthropic client reports.
func TestMessagesStreamEnds(t *testing.T) {
	t.Run("clean-end", func(t *testing.T) {
		p := newUpstream(t, endsWithoutDone(true))
		srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 2s}", ""), p, newUpstream(t, chatOK("secondary")))
		got, types, err := messagesStream(t, gw.URL)
		if err != nil || got != "Hello!" || len(types) == 0 || types[len(types)-1] != "message_stop" {
			t.Fatalf("stream %q %v, %v; want the whole message", got, types, err)
		}
		if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Succeeded != 1 {
			t.Fatalf("the primary's breaker: %+v; want a success", tot)
		}
	})
	t.Run("stall-after-commit", func(t *testing.T) {
		p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk(`{"role":"assistant","content":"Hel"}`))
			w.(http.Flusher).Flush()
			block(r, release)
		})
		s := newUpstream(t, streamOf([]string{"secondary"}, nil))
		srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 300ms}", ""), p, s)
		got, types, err := messagesStream(t, gw.URL)
		if err == nil || got != "Hel" || (len(types) > 0 && types[len(types)-1] == "message_stop") {
			t.Fatalf("stream %q %v, %v; want the text sent and then an error", got, types, err)
		}
		if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 {
			t.Fatalf("the primary's breaker: %+v; want a failure", tot)
		}
		if s.calls() != 0 {
			t.Fatal("a broken stream was failed over")
		}
	})
}

// When the deadline ends a stream that has begun, the error event says
// so: the target did not break off, the gateway's deadline passed.
func TestDeadlineMidStreamSaysSo(t *testing.T) {
	p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":"Hel"}`))
		w.(http.Flusher).Flush()
		block(r, release)
	})
	_, gw := gateway(t, nil, silentLadder("{deadline: 500ms, ttfb: 5s, idle: 5s}", ""), p, newUpstream(t, chatOK("secondary")))
	_, body := rawStream(t, gw.URL)
	if !strings.Contains(body, `"error"`) || !strings.Contains(body, "deadline") || strings.Contains(body, "broke off") {
		t.Fatalf("body:\n%s\nwant an error event naming the model's deadline, not a target that broke off", body)
	}
}
