package gateway

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// How a stream's end is read: an answer that had finished when its
// connection closed is whole, even without [DONE] (or a native Messages
// stream's message_stop); one that had not is broken.

// endsWithoutDone streams "Hel", "lo", "!" and, with finished, a chunk
// with finish_reason stop and the usage chunk (5 + 7 tokens); then the
// handler returns, so the body ends cleanly with no data: [DONE].
func endsWithoutDone(finished bool) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		for _, word := range []string{"Hel", "lo", "!"} {
			io.WriteString(w, chunk(fmt.Sprintf(`{"content":%q}`, word)))
			w.(http.Flusher).Flush()
		}
		if finished {
			io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
			io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`+"\n\n")
		}
	}
}

// rawStream posts a streamed chat request and reads the whole answer.
func rawStream(t *testing.T, base string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return resp, string(b)
}

// An answer that finished and whose connection then closed without [DONE]
// is complete: the client's stream ends well, with [DONE] added; it is
// priced, and it is a success for its target.
func TestCleanEndWithoutDoneIsComplete(t *testing.T) {
	p, s := newUpstream(t, endsWithoutDone(true)), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 2s}", ""), p, s)
	c := newClient(gw.URL)
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if st.Err() != nil || len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "Hello!" || acc.Choices[0].FinishReason != "stop" {
		t.Fatalf("stream %+v, %v; want the whole answer", acc.Choices, st.Err())
	}

	resp, body := rawStream(t, gw.URL)
	if resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") || strings.Contains(body, `"error"`) {
		t.Fatalf("%d, body:\n%s\nwant it to end with data: [DONE]", resp.StatusCode, body)
	}
	// 5 in at $2/M + 7 out at $8/M
	if got := resp.Trailer.Get("X-Fusebox-Cost"); got != "0.000066" {
		t.Fatalf("cost trailer %q, want 0.000066", got)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 2); tot.Succeeded != 2 || tot.Failed != 0 {
		t.Fatalf("the primary's breaker: %+v; want two successes", tot)
	}
	eventually(t, "both streams' cost in the metrics", func() bool {
		return math.Abs(metricSum(t, gw.URL, `fusebox_cost_usd_total{target="primary/gpt-4.1"}`)-0.000132) < 1e-12
	})
	if s.calls() != 0 {
		t.Fatal("a complete stream failed over")
	}
}

// An answer that had not finished when its connection closed is broken:
// the client gets an error event and no [DONE], and the target a failure.
func TestEndWithoutFinishIsBroken(t *testing.T) {
	p, s := newUpstream(t, endsWithoutDone(false)), newUpstream(t, chatOK("secondary"))
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 2s}", ""), p, s)
	c := newClient(gw.URL)
	got, _, err := streamText(c.Chat.Completions.NewStreaming(t.Context(), params("smart")))
	if err == nil || !strings.Contains(err.Error(), "incomplete") || got != "Hello!" {
		t.Fatalf("stream %q, %v; want the chunks and then an error", got, err)
	}
	resp, body := rawStream(t, gw.URL)
	if resp.StatusCode != 200 || strings.Contains(body, "[DONE]") || !strings.Contains(body, `"code":"stream_interrupted"`) {
		t.Fatalf("%d, body:\n%s\nwant an error event and no [DONE]", resp.StatusCode, body)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 2); tot.Failed != 2 || tot.Succeeded != 0 {
		t.Fatalf("the primary's breaker: %+v; want two failures", tot)
	}
	if s.calls() != 0 {
		t.Fatal("a stream broken after it began was failed over")
	}
}

// A native Anthropic stream whose message_delta carried its stop_reason
// and whose connection then closed gets the message_stop it lacked.
func TestNativeCleanEndGetsMessageStop(t *testing.T) {
	claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
			`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello from claude"}}`,
			`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
			`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
		} {
			io.WriteString(w, ev+"\n\n")
			w.(http.Flusher).Flush()
		}
	})
	oai := newUpstream(t, chatOK("openai"))
	srv, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/v1/messages",
		strings.NewReader(`{"model":"smart","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasSuffix(string(b), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") ||
		strings.Contains(string(b), "event: error") || !strings.Contains(string(b), "hello from claude") {
		t.Fatalf("%d, body:\n%s\nwant it to end with message_stop", resp.StatusCode, b)
	}
	if tot := settled(t, srv, "claude/claude-opus-4-7", 1); tot.Succeeded != 1 || tot.Failed != 0 {
		t.Fatalf("the Claude target's breaker: %+v; want a success", tot)
	}
	if oai.calls() != 0 {
		t.Fatal("a complete stream failed over")
	}
}

// The same answer with a body delimited by the connection's close (no
// chunked encoding, Connection: close), as some proxies send it: whole.
func TestCloseDelimitedStreamIsComplete(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
		buf.WriteString(chunk(`{"role":"assistant","content":""}`) + chunk(`{"content":"Hello!"}`))
		buf.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
		buf.Flush()
	})
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 2s}", ""), p, newUpstream(t, chatOK("secondary")))
	resp, body := rawStream(t, gw.URL)
	if resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") || !strings.Contains(body, "Hello!") {
		t.Fatalf("%d, body:\n%s\nwant it to end with data: [DONE]", resp.StatusCode, body)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Succeeded != 1 {
		t.Fatalf("the primary's breaker: %+v; want a success", tot)
	}
}

// The same answer, finished and with its usage, whose connection then
// drops without the chunked body's last chunk (a proxy that closes, a
// server that exits): the answer is whole all the same.
func TestAbruptCloseAfterFinishIsComplete(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		endsWithoutDone(true)(w, r, n)
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	})
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 2s}", ""), p, newUpstream(t, chatOK("secondary")))
	resp, body := rawStream(t, gw.URL)
	if resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") || strings.Contains(body, `"error"`) {
		t.Fatalf("%d, body:\n%s\nwant it to end with data: [DONE]", resp.StatusCode, body)
	}
	if got := resp.Trailer.Get("X-Fusebox-Cost"); got != "0.000066" {
		t.Fatalf("cost trailer %q, want 0.000066", got)
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Succeeded != 1 || tot.Failed != 0 {
		t.Fatalf("the primary's breaker: %+v; want a success", tot)
	}
}
