package transport

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
)

// FirstByte bounds a plain (non-streamed) request too, from sending it to
// the first byte of its body: an upstream that hangs before its headers,
// or sends headers and then nothing, is abandoned when the budget runs out
// on the transport's clock; the next endpoint answers and the silent one's
// breaker counts a failure.
func TestFirstByteBoundsPlainRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers bool // send the headers before hanging
	}{
		{"hang before headers", false},
		{"headers then nothing", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := fakeClock()
			hang := make(chan struct{})
			defer close(hang)
			entered := make(chan struct{}, 1)
			primary := newUpstream(t, "primary", func(w http.ResponseWriter, r *http.Request, n int) {
				if tc.headers {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(200)
					w.(http.Flusher).Flush()
				}
				entered <- struct{}{}
				select {
				case <-hang:
				case <-r.Context().Done():
				}
			})
			secondary := newUpstream(t, "secondary", chatOK("secondary"))
			var ev events
			rt := mustNew(t, Config{
				Endpoints: []Endpoint{{Name: "primary", BaseURL: primary.URL + "/v1"}, {Name: "secondary", BaseURL: secondary.URL + "/v1"}},
				FirstByte: 2 * time.Second,
				Breaker:   breaker.Config{ConsecutiveFailures: 5},
				Clock:     clk,
				OnAttempt: ev.add,
			})
			client := openaiClient(primary.URL, rt)
			got := make(chan string)
			go func() {
				c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
				if err != nil {
					got <- "ERR " + err.Error()
					return
				}
				got <- content(c)
			}()
			<-entered
			clk.Advance(time.Second)
			select {
			case s := <-got:
				t.Fatalf("answered %q before the budget ran out", s)
			default:
			}
			clk.Advance(time.Second)
			if s := <-got; s != "hello from secondary" {
				t.Fatalf("answer %q; want the secondary's (events %v)", s, &ev)
			}
			if !errors.Is(ev.all[0].Err, aierr.ErrFirstByteTimeout) || ev.all[0].Next != Failover {
				t.Errorf("primary attempt: err %v, next %v; want a first-byte timeout, failover", ev.all[0].Err, ev.all[0].Next)
			}
			for _, s := range rt.Breakers() {
				if s.Name == "primary/gpt-4.1" && s.Totals.Failed != 1 {
					t.Errorf("primary's breaker %+v; want one failure", s.Totals)
				}
			}
			if n := clk.Pending(); n != 0 {
				t.Errorf("%d timers left pending", n)
			}
		})
	}
}

// Once the first byte of a plain answer is in, FirstByte no longer
// applies: a body that takes longer to finish is not cut.
func TestFirstByteStopsAtFirstByte(t *testing.T) {
	clk := fakeClock()
	more := make(chan struct{})
	up := newUpstream(t, "up", func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion",`))
		w.(http.Flusher).Flush()
		<-more
		w.Write([]byte(`"choices":[{"index":0,"message":{"role":"assistant","content":"slow"},"finish_reason":"stop"}]}`))
	})
	attempted := make(chan struct{}, 1)
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{{BaseURL: up.URL + "/v1"}},
		FirstByte: 2 * time.Second, Clock: clk,
		OnAttempt: func(Attempt) { attempted <- struct{}{} },
	})
	client := openaiClient(up.URL, rt)
	got := make(chan string)
	go func() {
		c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
		if err != nil {
			got <- "ERR " + err.Error()
			return
		}
		got <- content(c)
	}()
	<-attempted // the first byte is in; the caller is reading the rest
	clk.Advance(time.Minute)
	close(more)
	if s := <-got; s != "slow" {
		t.Fatalf("answer %q", s)
	}
	if s := rt.Breakers()[0]; s.Totals.Succeeded != 1 || s.Totals.Failed != 0 {
		t.Fatalf("breaker %+v", s.Totals)
	}
}

// With Idle and no FirstByte, a stream whose headers come but no byte after
// is cut after Idle and fails over, counted against its endpoint; the
// plain request is not paced by Idle at all.
func TestIdleBoundsAStreamsFirstRead(t *testing.T) {
	clk := fakeClock()
	hang := make(chan struct{})
	defer close(hang)
	entered := make(chan struct{}, 1)
	primary := newUpstream(t, "primary", func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		entered <- struct{}{}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	secondary := newUpstream(t, "secondary", func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, []string{"Hel", "lo"}, nil)
	})
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{{Name: "primary", BaseURL: primary.URL + "/v1"}, {Name: "secondary", BaseURL: secondary.URL + "/v1"}},
		Idle:      5 * time.Second,
		Clock:     clk,
	})
	client := openaiClient(primary.URL, rt)
	got := make(chan string)
	go func() {
		s := client.Chat.Completions.NewStreaming(t.Context(), chatParams("gpt-4.1"))
		var b strings.Builder
		for s.Next() {
			if c := s.Current(); len(c.Choices) > 0 {
				b.WriteString(c.Choices[0].Delta.Content)
			}
		}
		if err := s.Err(); err != nil {
			b.WriteString(" ERR " + err.Error())
		}
		s.Close()
		got <- b.String()
	}()
	<-entered
	clk.WaitForTimers(1)
	clk.Advance(5 * time.Second)
	if s := <-got; s != "Hello" {
		t.Fatalf("stream = %q; want Hello from the secondary", s)
	}
	for _, s := range rt.Breakers() {
		if s.Name == "primary/gpt-4.1" && s.Totals.Failed != 1 {
			t.Fatalf("primary's breaker %+v; want one failure", s.Totals)
		}
	}
}
