package gateway

import (
	"io"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3/option"
)

// timeouts.commit_after end to end: a stream held until its first content
// events have come is failed over, unseen, when it stalls or breaks before
// then; one that keeps its pace commits on its own target.

// stallAfter streams a role preamble and the words, then holds the
// connection open without another byte (the stall scenario).
func stallAfter(words ...string) func(http.ResponseWriter, *http.Request, int, <-chan struct{}) {
	return func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		for _, word := range words {
			io.WriteString(w, chunk(`{"content":"`+word+`"}`))
		}
		w.(http.Flusher).Flush()
		block(r, release)
	}
}

// A stream that stalls after two content events, with commit_after 3 and
// continuation off, never reaches the client: the secondary's whole answer
// does, with one preamble and none of the primary's words, and the
// primary's breaker hears of the stall.
func TestHeldStreamStallFailsOverUnseen(t *testing.T) {
	p := hangingUpstream(t, stallAfter("Hel", "lo"))
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 10s, suspect_after: 200ms, commit_after: 3}", ""), p, s)
	var resp *http.Response
	c := newClient(gw.URL)
	got, roles, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart"), option.WithResponseInto(&resp)))
	if err != nil || got != "from secondary" || roles != 1 {
		t.Fatalf("stream %q (%d role preambles), %v; want the secondary's alone", got, roles, err)
	}
	if tg := resp.Header.Get("X-Fusebox-Target"); tg != "secondary/deepseek-chat" {
		t.Fatalf("served by %q", tg)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 1 {
		t.Fatalf("the held stall was not counted: %+v", tot)
	}
}

// A stream cut (the connection reset) inside its hold fails over too.
func TestHeldStreamCutFailsOverUnseen(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		io.WriteString(w, chunk(`{"content":"Hel"}`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection goes, mid-stream
	})
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	_, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 10s, commit_after: 4}", ""), p, s)
	c := newClient(gw.URL)
	got, _, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart")))
	if err != nil || got != "from secondary" {
		t.Fatalf("stream %q, %v; want the secondary's alone", got, err)
	}
}

// A stream whose whole answer is shorter than its hold is not held past
// its end: the primary's two words and [DONE] commit as they are.
func TestShortAnswerInsideItsHold(t *testing.T) {
	p := newUpstream(t, streamOf([]string{"just ", "two"}, nil))
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	_, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 10s, commit_after: 8}", ""), p, s)
	c := newClient(gw.URL)
	got, roles, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart")))
	if err != nil || got != "just two" || roles != 1 || s.calls() != 0 {
		t.Fatalf("stream %q (%d preambles), %v, secondary called %d times; want the primary's whole answer", got, roles, err, s.calls())
	}
}

// An upstream that floods a held stream with events that carry no content
// does not make the gateway hold them without bound: past maxHeld bytes
// the stream commits with what it holds (here, to then stall and break).
func TestHoldIsBoundedInBytes(t *testing.T) {
	empty := chunk(`{}`)
	p := hangingUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int, release <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		io.WriteString(w, chunk(`{"content":"Hel"}`))
		for n := 0; n <= 2*maxHeld; n += len(empty) {
			io.WriteString(w, empty)
		}
		w.(http.Flusher).Flush()
		block(r, release)
	})
	s := newUpstream(t, streamOf([]string{"from ", "secondary"}, nil))
	_, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 1s, suspect_after: 800ms, commit_after: 4}", ""), p, s)
	c := newClient(gw.URL)
	got, _, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart")))
	if got != "Hel" || err == nil || s.calls() != 0 {
		t.Fatalf("stream %q, %v, secondary called %d times; want the primary's committed part, then its break", got, err, s.calls())
	}
}
