package sim

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// Faults that answer at once: status, exact body, headers, and what the
// project's classifier makes of them.
func TestFaultAnswers(t *testing.T) {
	const (
		serverError = `{"error":{"message":"%s","type":"server_error","param":null,"code":null}}`
		throttled   = `{"error":{"message":"Rate limit reached for requests. Please try again in 5s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
		badKey      = `{"error":{"message":"Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
		queueFull   = `{"error":{"message":"The request queue is full; try again later.","type":"server_error","param":null,"code":"queue_full"}}`
	)
	for _, tc := range []struct {
		name    string
		fault   Fault
		status  int
		body    string
		headers map[string]string
		kind    aierr.Kind
		outcome Outcome
	}{
		{"storm default", Fault{Kind: ErrorStorm}, 503, strings.Replace(serverError, "%s", "The server is overloaded or not ready yet.", 1), nil, aierr.Outage, OutcomeError},
		{"storm 500", Fault{Kind: ErrorStorm, Status: 500}, 500, strings.Replace(serverError, "%s", "The server had an error while processing your request. Sorry about that!", 1), nil, aierr.Outage, OutcomeError},
		{"storm 502", Fault{Kind: ErrorStorm, Status: 502}, 502, strings.Replace(serverError, "%s", "Bad gateway.", 1), nil, aierr.Outage, OutcomeError},
		{"storm 504 retry", Fault{Kind: ErrorStorm, Status: 504, RetryAfter: 1500 * time.Millisecond}, 504, strings.Replace(serverError, "%s", "Gateway timeout.", 1), map[string]string{"Retry-After": "2"}, aierr.Outage, OutcomeError},
		{"storm 529", Fault{Kind: ErrorStorm, Status: 529}, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, nil, aierr.Outage, OutcomeError},
		{"storm message", Fault{Kind: ErrorStorm, Message: "down"}, 503, strings.Replace(serverError, "%s", "down", 1), nil, aierr.Outage, OutcomeError},
		{"throttle", Fault{Kind: Throttle, RetryAfter: 5 * time.Second}, 429, throttled,
			map[string]string{"Retry-After": "5", "Retry-After-Ms": "5000", "X-Ratelimit-Remaining-Requests": "0", "X-Ratelimit-Reset-Requests": "5s"}, aierr.Throttle, OutcomeThrottled},
		{"auth", Fault{Kind: Auth}, 401, badKey, nil, aierr.Auth, OutcomeAuth},
		{"queue full", Fault{Kind: QueueFull}, 429, queueFull, map[string]string{"Retry-After": ""}, aierr.Capacity, OutcomeQueueFull},
		{"queue full 503", Fault{Kind: QueueFull, Status: 503, RetryAfter: 2 * time.Second}, 503, queueFull, map[string]string{"Retry-After": "2"}, aierr.Capacity, OutcomeQueueFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Faults: []Fault{tc.fault}})
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"/v1/chat/completions", "/v1/embeddings"} {
				body := chatBody(false)
				if path == "/v1/embeddings" {
					body = `{"model":"e","input":"x"}`
				}
				rec := serve(s, "POST", path, body)
				if rec.Code != tc.status || rec.Body.String() != tc.body {
					t.Errorf("%s: %d %s\nwant %d %s", path, rec.Code, rec.Body, tc.status, tc.body)
				}
				for k, v := range tc.headers {
					if got := rec.Header().Get(k); got != v {
						t.Errorf("%s: header %s = %q, want %q", path, k, got, v)
					}
				}
				if v := aierr.Classify(rec.Code, rec.Header(), rec.Body.Bytes()); v.Kind != tc.kind {
					t.Errorf("%s: classified as %v, want %v", path, v.Kind, tc.kind)
				}
			}
			if st := s.Stats(); st.Outcomes[tc.outcome] != 2 || st.BilledInputTokens != 0 {
				t.Errorf("stats = %+v, want 2 %s and nothing billed", st, tc.outcome)
			}
		})
	}
}

// The official client sees a throttle as a 429 with Retry-After.
func TestThrottleWithOpenAIClient(t *testing.T) {
	_, ts := start(t, Config{Faults: []Fault{{Kind: Throttle, RetryAfter: 3 * time.Second}}})
	_, err := sdk(ts).Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" ||
		apiErr.Response.Header.Get("Retry-After") != "3" {
		t.Fatalf("err = %v, want 429 rate_limit_exceeded with Retry-After: 3", err)
	}
}

func TestResetBeforeAnything(t *testing.T) {
	s, ts := start(t, Config{Faults: []Fault{{Kind: Reset}}})
	for _, body := range []string{chatBody(false), chatBody(true)} {
		resp, err := post(context.Background(), ts, "/v1/chat/completions", body)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("got %s, want a reset connection", resp.Status)
		}
		if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
			t.Errorf("err = %v, want a connection reset", err)
		}
	}
	waitFor(t, "2 resets", func() bool { return s.Stats().Outcomes[OutcomeReset] == 2 })
}

func TestResetMidStream(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 30}, Faults: []Fault{{Kind: Reset, AfterChunks: 2}}})
	resp, err := post(context.Background(), ts, "/v1/chat/completions", chatBody(true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := events(t, resp.Body)
	if err == nil {
		t.Fatalf("stream ended cleanly with %q; want a cut connection", data)
	}
	content := 0
	for _, d := range data {
		if _, ok := contentOf(t, d); ok {
			content++
		}
		if d == "[DONE]" {
			t.Error("got [DONE] on a reset stream")
		}
	}
	if content != 2 {
		t.Errorf("%d content chunks before the reset, want 2", content)
	}
	waitFor(t, "the reset counted", func() bool { return s.Stats().Outcomes[OutcomeReset] == 1 })
	if st := s.Stats(); st.BilledOutputTokens != 6 {
		t.Errorf("billed output %d, want 6 (2 chunks of 3)", st.BilledOutputTokens)
	}
}

func TestHangUntilTheClientGivesUp(t *testing.T) {
	s, ts := start(t, Config{Faults: []Fault{{Kind: Hang}}})
	for i, body := range []string{chatBody(false), chatBody(true)} {
		// The client gives up only once the call has arrived: a deadline
		// that ran out on the way would test the loaded machine, not the
		// hang.
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() {
			resp, err := post(ctx, ts, "/v1/chat/completions", body)
			if err == nil {
				resp.Body.Close()
				err = errors.New("got " + resp.Status + ", want nothing until the client gives up")
			}
			errc <- err
		}()
		waitFor(t, "the call to arrive", func() bool { return s.Stats().Calls == int64(i+1) })
		cancel(context.DeadlineExceeded)
		if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the client's deadline", err)
		}
	}
	waitFor(t, "2 hangs counted", func() bool { return s.Stats().Outcomes[OutcomeHang] == 2 })
}

func TestCloseReleasesHangs(t *testing.T) {
	s, ts := start(t, Config{Faults: []Fault{{Kind: Hang}}})
	errc := make(chan error, 1)
	go func() {
		resp, err := post(context.Background(), ts, "/v1/chat/completions", chatBody(false))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, "the call to arrive", func() bool { return s.Stats().Calls == 1 })
	s.Close()
	if err := <-errc; err == nil {
		t.Error("a hung call released by Close got an answer; want a cut connection")
	}
	waitFor(t, "the hang counted", func() bool { return s.Stats().Outcomes[OutcomeHang] == 1 })
}

func TestStallAfterChunks(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 30}, Faults: []Fault{{Kind: Stall, AfterChunks: 2}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := post(ctx, ts, "/v1/chat/completions", chatBody(true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := eventChan(resp.Body)
	for i, want := range []string{"role", "content", "content"} {
		ev := <-evs
		_, isContent := contentOf(t, ev.data)
		if ev.err != nil || isContent != (want == "content") {
			t.Fatalf("event %d: %q, %v; want a %s chunk", i, ev.data, ev.err, want)
		}
	}
	select {
	case ev := <-evs:
		t.Fatalf("after 2 chunks got %q, %v; want nothing", ev.data, ev.err)
	case <-time.After(5 * time.Millisecond):
	}
	cancel()
	if ev := <-evs; ev.err == nil {
		t.Errorf("after cancel got %q, want the read to fail", ev.data)
	}
	waitFor(t, "the stall counted", func() bool { return s.Stats().Outcomes[OutcomeStall] == 1 })

	// A call that is not streamed is not stalled.
	rec := serve(s, "POST", "/v1/chat/completions", chatBody(false))
	if rec.Code != 200 {
		t.Errorf("non-stream call with a stall fault: %d, want 200", rec.Code)
	}
}

func TestStreamError(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 30}, Faults: []Fault{{Kind: StreamError, AfterChunks: 1, Message: "boom"}}})
	stream := sdk(ts).Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var content int
	for stream.Next() {
		if ch := stream.Current(); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			content++
		}
	}
	stream.Close()
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "boom") || content != 1 {
		t.Errorf("after %d content chunks err = %v; want 1 chunk, then an error saying boom", content, err)
	}

	// Raw: a 200 stream whose last event is the error, with no [DONE].
	rec := serve(s, "POST", "/v1/chat/completions", chatBody(true))
	data, err := events(t, rec.Body)
	if err != nil || rec.Code != 200 {
		t.Fatalf("status %d, %v", rec.Code, err)
	}
	last := data[len(data)-1]
	if want := `{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`; last != want {
		t.Errorf("last event %s, want %s", last, want)
	}
	if v := aierr.ClassifyEvent("", []byte(last)); v.Kind != aierr.Outage {
		t.Errorf("error event classified as %v, want outage", v.Kind)
	}
	if st := s.Stats(); st.Outcomes[OutcomeStreamError] != 2 || st.BilledOutputTokens != 6 {
		t.Errorf("stats = %+v, want 2 stream errors and 2×3 tokens billed", st)
	}
}

// A latency spike adds to the call's latency, on the fake clock.
func TestLatencySpike(t *testing.T) {
	fake := newFake()
	s, err := New(Config{Clock: fake, Latency: Latency{Median: 100 * time.Millisecond},
		Faults: []Fault{{Kind: LatencySpike, Extra: 2 * time.Second}, {Kind: LatencySpike, Extra: time.Second, From: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { done <- serve(s, "POST", "/v1/chat/completions", chatBody(false)).Code }()
	fake.WaitForTimers(1)
	fake.Advance(2 * time.Second)
	select {
	case <-done:
		t.Fatal("answered after 2s, want 2.1s")
	default:
	}
	fake.Advance(100 * time.Millisecond)
	if code := <-done; code != 200 {
		t.Errorf("status %d, want 200", code)
	}
	// A spike also delays error answers.
	s.SetFaults([]Fault{{Kind: ErrorStorm}})
	go func() { done <- serve(s, "POST", "/v1/chat/completions", chatBody(false)).Code }()
	fake.WaitForTimers(1)
	fake.Advance(2 * time.Second)
	if code := <-done; code != 503 {
		t.Errorf("status %d, want 503 after the spike", code)
	}
}

// Scheduled windows are [from, to) on the Server's clock; live ones count
// from when they were set.
func TestScheduleBoundaries(t *testing.T) {
	fake := newFake()
	s, err := New(Config{Clock: fake, Faults: []Fault{{Kind: ErrorStorm, From: 10 * time.Second, To: 20 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	status := func() int { return serve(s, "POST", "/v1/chat/completions", chatBody(false)).Code }
	for i, step := range []struct {
		at   time.Duration
		want int
	}{
		{0, 200},
		{10*time.Second - time.Nanosecond, 200},
		{10 * time.Second, 503},
		{20*time.Second - time.Nanosecond, 503},
		{20 * time.Second, 200},
		{time.Hour, 200},
	} {
		fake.Set(s.start.Add(step.at))
		if got := status(); got != step.want {
			t.Errorf("step %d: at %v status %d, want %d", i, step.at, got, step.want)
		}
	}
	// Live: set at 1h, from 5s to 6s after that.
	if err := s.SetFaults([]Fault{{Kind: Auth, From: 5 * time.Second, To: 6 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		after time.Duration
		want  int
	}{{4 * time.Second, 200}, {5 * time.Second, 401}, {6 * time.Second, 200}} {
		fake.Set(s.start.Add(time.Hour + step.after))
		if got := status(); got != step.want {
			t.Errorf("live step %d: %v after set, status %d, want %d", i, step.after, got, step.want)
		}
	}
}

// The first fault that hits decides; fractions hit about that share.
func TestFaultOrderAndFraction(t *testing.T) {
	s, err := New(Config{Seed: 11, Faults: []Fault{
		{Kind: ErrorStorm, Status: 500, Fraction: 0.25},
		{Kind: ErrorStorm, Status: 502},
	}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	counts := map[int]int{}
	for range n {
		counts[serve(s, "POST", "/v1/chat/completions", chatBody(false)).Code]++
	}
	if share := float64(counts[500]) / n; share < 0.22 || share > 0.28 || counts[500]+counts[502] != n {
		t.Errorf("statuses %v: want about 25%% 500s, the rest 502", counts)
	}
	fs := s.Faults()
	if fs[0].Hits != int64(counts[500]) || fs[1].Hits != int64(counts[502]) {
		t.Errorf("hits %d, %d; want %d, %d", fs[0].Hits, fs[1].Hits, counts[500], counts[502])
	}
}

func TestFaultValidation(t *testing.T) {
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{}, "sim: faults[0].kind: must be set"},
		{Fault{Kind: "boom"}, `sim: faults[0].kind: unknown kind "boom"`},
		{Fault{Kind: ErrorStorm, Status: 418}, "sim: faults[0].status: is 418, want one of 400, 403, 408, 500, 502, 503, 504, 529"},
		{Fault{Kind: Hang, Status: 500}, "sim: faults[0].status: does not apply to a hang fault"},
		{Fault{Kind: ErrorStorm, From: 5 * time.Second, To: 5 * time.Second}, "sim: faults[0].to: is 5s, want after from (5s)"},
		{Fault{Kind: Auth, Fraction: 1.5}, "sim: faults[0].fraction: is 1.5"},
		{Fault{Kind: LatencySpike}, "sim: faults[0].extra: must be more than 0"},
		{Fault{Kind: Auth, AfterChunks: 2}, "sim: faults[0].after_chunks: does not apply to a auth fault"},
		{Fault{Kind: Stall, Message: "x"}, "sim: faults[0].message: does not apply"},
		{Fault{Kind: Auth, RetryAfter: time.Second}, "sim: faults[0].retry_after: does not apply"},
		{Fault{Kind: ErrorStorm, Every: -time.Second}, "sim: faults[0].every: is -1s, want 0 or more"},
		{Fault{Kind: ErrorStorm, For: time.Second}, "sim: faults[0].for: is 1s without every"},
		{Fault{Kind: ErrorStorm, Every: 2 * time.Second}, "sim: faults[0].for: is 0s, want more than 0 and less than every (2s)"},
		{Fault{Kind: ErrorStorm, Every: 2 * time.Second, For: 2 * time.Second}, "sim: faults[0].for: is 2s, want more than 0 and less than every (2s)"},
		{Fault{Kind: NoDone, AfterChunks: 1}, "sim: faults[0].after_chunks: does not apply to a no_done fault"},
		{Fault{Kind: NoDone, Message: "x"}, "sim: faults[0].message: does not apply to a no_done fault"},
		{Fault{Kind: Drip}, "sim: faults[0].extra: must be more than 0 for a drip"},
		{Fault{Kind: Drip, Extra: time.Second, AfterChunks: 2}, "sim: faults[0].after_chunks: does not apply to a drip fault"},
		{Fault{Kind: Drip, Extra: time.Second, Message: "x"}, "sim: faults[0].message: does not apply to a drip fault"},
	} {
		_, err := New(Config{Faults: []Fault{tc.f}})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want prefix %q", tc.f, err, tc.want)
		}
	}
	s, _ := New(Config{})
	if err := s.SetFaults([]Fault{{Kind: Auth}, {Kind: Stall, Extra: 1}}); err == nil || !strings.Contains(err.Error(), "faults[1].extra") {
		t.Errorf("SetFaults: err = %v, want faults[1].extra", err)
	}
	if len(s.Faults()) != 0 {
		t.Error("a rejected SetFaults changed the faults")
	}
}

// eventChan reads events from body as they come; the channel gets each
// event's data, then one error (io.EOF at a clean end).
type eventResult struct {
	data string
	err  error
}

func eventChan(body io.Reader) <-chan eventResult {
	ch := make(chan eventResult, 256)
	go func() {
		r := sse.NewReader(body, sse.Options{})
		for {
			ev, err := r.Next()
			if err != nil {
				ch <- eventResult{err: err}
				return
			}
			ch <- eventResult{data: string(ev.Data)}
		}
	}()
	return ch
}

// A no_done stream carries the whole answer and ends cleanly without
// [DONE]: the official client, which stops at the end of the body, sees a
// complete answer.
func TestNoDone(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 10}, Faults: []Fault{{Kind: NoDone}}})
	stream := sdk(ts).Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	var finish string
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 && ch.Choices[0].FinishReason != "" {
			finish = ch.Choices[0].FinishReason
		}
	}
	stream.Close()
	if err := stream.Err(); err != nil || finish != "stop" || acc.Usage.CompletionTokens != 10 {
		t.Errorf("err %v, finish %q, usage %+v; want a complete answer: stop, 10 completion tokens", err, finish, acc.Usage)
	}

	// Raw: the usage chunk last, no [DONE], a clean end of the body.
	resp, err := post(context.Background(), ts, "/v1/chat/completions", chatBody(true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := events(t, resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v; want a 200 stream that ends cleanly", resp.StatusCode, err)
	}
	if last := data[len(data)-1]; !strings.Contains(last, `"usage":{`) || !strings.Contains(data[len(data)-2], `"finish_reason":"stop"`) {
		t.Errorf("last events %s, %s; want the finish chunk, then the usage chunk", data[len(data)-2], last)
	}
	for _, d := range data {
		if d == "[DONE]" {
			t.Error("got [DONE] from a no_done fault")
		}
	}
	if st := s.Stats(); st.Outcomes[OutcomeNoDone] != 2 || st.BilledOutputTokens != 20 {
		t.Errorf("stats = %+v, want 2 no_done and 2×10 tokens billed", st)
	}

	// A call that is not streamed is not affected.
	if rec := serve(s, "POST", "/v1/chat/completions", chatBody(false)); rec.Code != 200 || s.Stats().Outcomes[OutcomeOK] != 1 {
		t.Errorf("non-stream call with a no_done fault: %d, stats %+v; want 200 ok", rec.Code, s.Stats())
	}
}

// A flapping fault is active for For at the start of every Every, within
// [From, To).
func TestFlapSchedule(t *testing.T) {
	fake := newFake()
	f := Fault{Kind: ErrorStorm, From: 10 * time.Second, To: 15 * time.Second, Every: 2 * time.Second, For: time.Second}
	s, err := New(Config{Clock: fake, Faults: []Fault{f}})
	if err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		at   time.Duration
		want int
	}{
		{10*time.Second - time.Nanosecond, 200},
		{10 * time.Second, 503},
		{11*time.Second - time.Nanosecond, 503},
		{11 * time.Second, 200},
		{12 * time.Second, 503},
		{13 * time.Second, 200},
		{14*time.Second + 500*time.Millisecond, 503},
		{15 * time.Second, 200}, // To ends it mid-period
		{16 * time.Second, 200},
	} {
		fake.Set(s.start.Add(step.at))
		if got := serve(s, "POST", "/v1/chat/completions", chatBody(false)).Code; got != step.want {
			t.Errorf("step %d: at %v status %d, want %d", i, step.at, got, step.want)
		}
	}
	// The control endpoint's JSON carries every and for.
	b, err := f.MarshalJSON()
	if want := `{"kind":"error_storm","from":"10s","to":"15s","every":"2s","for":"1s"}`; err != nil || string(b) != want {
		t.Errorf("JSON %s, %v; want %s", b, err, want)
	}
	var back Fault
	if err := back.UnmarshalJSON(b); err != nil || back != f {
		t.Errorf("round trip: %+v, %v; want %+v", back, err, f)
	}
}
