package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// continuing is a ladder whose broken streams are continued on the next
// target, with a short idle budget.
var continuing = silentLadder("{ttfb: 2s, idle: 300ms}", "    continue_on_failure: true\n")

// A stream that stalls after its first words is finished by the next
// target, asked to go on from the text already sent: the client reads one
// whole stream, the seam is in a trailer and the access log, and the
// failover is counted.
func TestBrokenStreamIsContinuedOnTheNextTarget(t *testing.T) {
	p := newUpstream(t, streamOf([]string{"Hello, ", "world"}, make(chan struct{})))
	s := newUpstream(t, streamOf([]string{"world", "!"}, nil))
	var logs bytes.Buffer
	_, gw := start(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, continuing, p, s)
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"greet"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text, roles := streamed(t, body)
	if text != "Hello, world!" || roles != 1 || !strings.HasSuffix(string(body), "data: [DONE]\n\n") || strings.Contains(string(body), `"error"`) {
		t.Fatalf("text %q, %d role chunks; body:\n%s\nwant one whole stream", text, roles, body)
	}
	if seam := resp.Trailer.Get("X-Fusebox-Continued"); !strings.Contains(seam, "primary/gpt-4.1 broke after 7 bytes; continued by secondary/deepseek-chat") {
		t.Errorf("X-Fusebox-Continued trailer %q", seam)
	}
	var sent struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(s.bodies[0]), &sent); err != nil {
		t.Fatal(err)
	}
	m := sent.Messages
	if len(m) != 3 || m[0].Content != "greet" || m[1].Role != "assistant" || m[1].Content != "Hello, " ||
		m[2].Role != "user" || !strings.Contains(m[2].Content, "Continue") {
		t.Errorf("the continuation asked %+v; want the question, the text sent as the assistant's, and an instruction", m)
	}
	eventually(t, "the access log line", func() bool { return strings.Contains(logs.String(), `"outcome":"continued"`) })
	if !strings.Contains(scrape(t, gw.URL), `fusebox_failovers_total{target="primary/gpt-4.1",verdict="outage"} 1`) {
		t.Error("the continuation was not counted as a failover")
	}
}

// Off by default: the same break ends the stream with an error event.
func TestBrokenStreamIsNotContinuedByDefault(t *testing.T) {
	p := newUpstream(t, streamOf([]string{"Hello, ", "world"}, make(chan struct{})))
	s := newUpstream(t, streamOf([]string{"world", "!"}, nil))
	_, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 300ms}", ""), p, s)
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"greet"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "[DONE]") || !strings.Contains(string(body), "stream_interrupted") || s.calls() != 0 {
		t.Fatalf("body:\n%s\nsecondary called %d times; want an error event and no continuation", body, s.calls())
	}
}

// A stream that broke after a tool call began is not continued: another
// model cannot finish a call's arguments.
func TestBrokenToolCallIsNotContinued(t *testing.T) {
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a"}}]}`))
		w.(http.Flusher).Flush()
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	})
	s := newUpstream(t, streamOf([]string{"x"}, nil))
	_, gw := gateway(t, nil, continuing, p, s)
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"call f"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "stream_interrupted") || s.calls() != 0 {
		t.Fatalf("body:\n%s\nsecondary called %d times; want the break passed on", body, s.calls())
	}
}

// streamed returns the text of an OpenAI stream's content deltas and how
// many chunks carried a role.
func streamed(t *testing.T, body []byte) (string, int) {
	t.Helper()
	var text strings.Builder
	roles := 0
	for line := range strings.Lines(string(body)) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Role, Content string } `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(data), &c) != nil {
			continue
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
			if ch.Delta.Role != "" {
				roles++
			}
		}
	}
	return text.String(), roles
}

// A continuing target that starts its answer again from the beginning (as
// OpenAI-type models asked to go on often do) has the repeat removed: the
// client reads the delivered words once. Its cost is the sum of both
// parts, and the access log names the target that finished and the one
// that broke.
func TestContinuationThatRestartsIsJoinedOnce(t *testing.T) {
	p := newUpstream(t, streamOf([]string{"The quick brown fox ", "jumps"}, make(chan struct{})))
	s := newUpstream(t, streamOf([]string{"The quick ", "brown fox jumps", " over the dog."}, nil))
	var logs syncBuffer
	_, gw := start(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, continuing, p, s)
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"a sentence"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if text, _ := streamed(t, body); text != "The quick brown fox jumps over the dog." || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Fatalf("text %q; body:\n%s", text, body)
	}
	// The first part: its input estimated, its 20 delivered bytes as 5
	// tokens, at the primary's price; the second has no usage to read.
	// The input is estimated from the body as the gateway read it (the
	// alias's name in "model", not the target's).
	bodyLen := len(p.bodies[0]) - len("gpt-4.1") + len("smart")
	first := (float64(bodyLen/4)*2 + 5*8) / 1e6
	if cost := resp.Trailer.Get("X-Fusebox-Cost"); cost != formatUSD(first) {
		t.Errorf("X-Fusebox-Cost trailer %q, want %s: the broken part priced", cost, formatUSD(first))
	}
	eventually(t, "the access log line", func() bool { return strings.Contains(logs.String(), `"outcome":"continued"`) })
	line := logs.String()
	for _, want := range []string{`"target":"secondary/deepseek-chat"`, `"continued_from":"primary/gpt-4.1"`, `"tried":"primary/gpt-4.1: broke after it began"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the access log has no %s:\n%s", want, line)
		}
	}
}

// A continuing target that starts again in other words cannot be joined:
// the stream ends with an error event, never with a success that would
// hold two beginnings.
func TestContinuationInOtherWordsEndsWithAnError(t *testing.T) {
	p := newUpstream(t, streamOf([]string{"The quick brown fox ", "jumps"}, make(chan struct{})))
	s := newUpstream(t, streamOf([]string{"The quick brown cat ", "sleeps."}, nil))
	_, gw := start(t, Options{}, continuing, p, s)
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"a sentence"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "[DONE]") || !strings.Contains(string(body), "cannot be joined") || strings.Contains(string(body), "cat") {
		t.Fatalf("body:\n%s\nwant the delivered words, then an error event", body)
	}
}
