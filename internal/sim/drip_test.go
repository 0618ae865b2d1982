package sim

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dripCalls are a streamed call on every API the sim streams: its own
// three and each cloud's translated paths.
func dripCalls(t *testing.T, ts string) map[string]*http.Request {
	t.Helper()
	calls := cloudCalls(t, ts)
	for name, body := range map[string]string{
		"chat":      chatBody(true),
		"responses": `{"model":"m","input":"Say something, please.","stream":true}`,
	} {
		req, err := http.NewRequest(http.MethodPost, ts+map[string]string{"chat": "/v1/chat/completions", "responses": "/v1/responses"}[name], strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		calls[name] = req
	}
	return calls
}

// A drip sends the first content chunk at the usual time to first byte,
// then one chunk every Extra on the Server's clock whatever the token
// rate, then holds the stream open without an end until the client
// leaves: on every streamed API. Stats count a drip and bill what was
// sent.
func TestDripPacesEveryStream(t *testing.T) {
	const extra = 2 * time.Second
	for name, req := range dripCalls(t, "") {
		t.Run(name, func(t *testing.T) {
			fake := newFake()
			s, ts := start(t, Config{Clock: fake, Latency: Latency{Median: 100 * time.Millisecond, TokensPerSecond: 1000},
				Output: Output{Tokens: 9, ChunkTokens: 3}, Faults: []Fault{{Kind: Drip, Extra: extra}}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := req.Clone(ctx)
			r.URL.Scheme, r.URL.Host = "http", strings.TrimPrefix(ts.URL, "http://")
			r.Body, _ = req.GetBody()
			type result struct {
				body []byte
				err  error
			}
			done := make(chan result, 1)
			got := make(chan int, 64) // bytes read so far, after each read
			go func() {
				resp, err := noKeepAlive.Do(r)
				if err != nil {
					done <- result{err: err}
					return
				}
				defer resp.Body.Close()
				var all []byte
				buf := make([]byte, 4096)
				for {
					n, err := resp.Body.Read(buf)
					all = append(all, buf[:n]...)
					if n > 0 {
						got <- len(all)
					}
					if err != nil {
						done <- result{all, err}
						return
					}
				}
			}()
			fake.WaitForTimers(1) // the time to first byte
			fake.AdvanceToNext()
			<-got // the headers' and first step's events
			for step := 1; step < 3; step++ {
				fake.WaitForTimers(1)
				before := fake.Now()
				fake.AdvanceToNext()
				if gap := fake.Now().Sub(before); gap != extra {
					t.Fatalf("step %d came %v after the one before, want %v", step, gap, extra)
				}
				select {
				case <-got:
				case res := <-done:
					t.Fatalf("step %d: the stream ended (%v) instead of sending it", step, res.err)
				case <-time.After(10 * time.Second):
					t.Fatalf("step %d was not sent when due", step)
				}
			}
			// Every step is sent; the stream stays open, with no timer.
			select {
			case res := <-done:
				t.Fatalf("after its content the stream ended (%v): %q", res.err, res.body)
			case <-time.After(5 * time.Millisecond):
			}
			cancel()
			res := <-done
			if res.err == nil || res.err == io.EOF {
				t.Errorf("a dripping stream ended cleanly (%v); want the client's cut", res.err)
			}
			for _, end := range []string{"[DONE]", `"finish_reason":"stop"`, "message_stop", "response.completed", `"finishReason"`} {
				if strings.Contains(string(res.body), end) {
					t.Errorf("the stream carried its end %s: %q", end, res.body)
				}
			}
			waitFor(t, "the drip counted", func() bool { return s.Stats().Outcomes[OutcomeDrip] == 1 })
			if st := s.Stats(); st.BilledOutputTokens != 9 || fake.Pending() != 0 {
				t.Errorf("billed %d output tokens, %d timers pending; want the 9 sent, none", st.BilledOutputTokens, fake.Pending())
			}
		})
	}
}

// A drip hits streams only: a call that is not streamed is answered as
// usual.
func TestDripSparesPlainCalls(t *testing.T) {
	s, _ := start(t, Config{Faults: []Fault{{Kind: Drip, Extra: time.Hour}}})
	if rec := serve(s, "POST", "/v1/chat/completions", chatBody(false)); rec.Code != 200 {
		t.Errorf("a plain call under a drip: %d %s, want 200", rec.Code, rec.Body)
	}
	if st := s.Stats(); st.Outcomes[OutcomeOK] != 1 || st.Outcomes[OutcomeDrip] != 0 {
		t.Errorf("outcomes %v; want one ok", st.Outcomes)
	}
}
