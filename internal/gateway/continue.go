package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// Continuation after commit (an alias's continue_on_failure): a stream
// that breaks after part of its answer reached the client is finished by
// the next target, asked to go on from the text already delivered — as a
// final assistant message where the target continues one (Anthropic's
// prefill), otherwise as that message and a user instruction. The client
// sees one stream; the seam is in the X-Fusebox-Continued trailer and the
// access log. It is off by default: the rest of the answer is another
// model's words.

// continueInstruction asks a target that cannot continue a final assistant
// message to go on from it.
const continueInstruction = "Your previous message was cut off. Continue it exactly from where it stops, " +
	"without repeating any of it and without any preamble."

// delivered accumulates the text of a committed stream as it is sent, and
// says whether it can still be continued: a single choice, text only.
type delivered struct {
	text strings.Builder
	// off: the answer has more than text (tool calls, several choices)
	// or could not be read; it cannot be continued.
	off bool
}

// add reads one OpenAI chunk sent to the client.
func (d *delivered) add(data []byte) {
	if d.off || sse.IsDone(sse.Event{Data: data}) {
		return
	}
	var c struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   *string           `json:"content"`
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil {
		d.off = true
		return
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 || len(ch.Delta.ToolCalls) > 0 {
			d.off = true
			return
		}
		if ch.Delta.Content != nil {
			d.text.WriteString(*ch.Delta.Content)
		}
	}
}

// continuable reports whether a broken stream of attempt a can be
// continued: the alias allows it, the stream is in OpenAI's format (not a
// native Anthropic one passed through), and what was sent is plain text.
func (x *exchange) continuable(a *router.Attempt) bool {
	return x.cont != nil && !x.cont.off && !a.Native && !a.Responses && x.cont.text.Len() > 0
}

// continuation returns the bodies asking the next targets to go on from
// the text delivered: with a user instruction, and as a prefill.
func (x *exchange) continuation() (body, prefill []byte, ok bool) {
	var req map[string]json.RawMessage
	if json.Unmarshal(x.body, &req) != nil {
		return nil, nil, false
	}
	var msgs []json.RawMessage
	if json.Unmarshal(req["messages"], &msgs) != nil {
		return nil, nil, false
	}
	said, _ := json.Marshal(map[string]string{"role": "assistant", "content": x.cont.text.String()})
	ask, _ := json.Marshal(map[string]string{"role": "user", "content": continueInstruction})
	build := func(extra ...json.RawMessage) []byte {
		m := append(append([]json.RawMessage(nil), msgs...), extra...)
		req["messages"], _ = json.Marshal(m)
		b, _ := json.Marshal(req)
		return b
	}
	return build(said, ask), build(said), true
}

// seam records where a stream was continued, for the trailer and the log.
func (x *exchange) seam(broken, next *router.Attempt) {
	x.outcome = "continued"
	x.contBy = next.Target.Name
	x.w.Header().Set("X-Fusebox-Continued", broken.Target.Name+" broke after "+strconv.Itoa(x.cont.text.Len())+
		" bytes; continued by "+next.Target.Name)
}

// loggedTried is the access log's "tried": the header's, and the target
// whose stream broke before another continued it.
func (x *exchange) loggedTried(h http.Header) string {
	tried := h.Get("X-Fusebox-Tried")
	if x.prev == nil {
		return tried
	}
	broke := x.prev.Target.Name + ": broke after it began"
	if tried == "" || tried == "none" {
		return broke
	}
	return tried + ", " + broke
}

// spliced returns the event of a continuation to send in place of ev:
// ev itself, nil while the splice holds its text, or its text joined to
// what was delivered. It reports false when the continuation cannot be
// joined: the stream has then ended with an error event.
func (x *exchange) spliced(a *router.Attempt, out sink, ev sse.Event) ([]byte, bool) {
	text, only := chunkText(ev.Data)
	if !only {
		return ev.Raw, true // not one text delta: as it is
	}
	joined, err := x.join.feed(text)
	if err != nil {
		x.noSeam(a, out)
		return nil, false
	}
	if joined == text {
		return ev.Raw, true
	}
	if joined == "" {
		return nil, true
	}
	return withText(ev.Data, joined), true
}

// flushSplice sends what the splice still holds before the stream's end
// or its finish, ev. It reports false when the continuation cannot be
// joined.
func (x *exchange) flushSplice(a *router.Attempt, out sink, ev sse.Event) bool {
	rest, err := x.join.end()
	if err != nil {
		x.noSeam(a, out)
		return false
	}
	if rest != "" {
		if x.write(a, out, withText(ev.Data, rest)) != nil {
			return true
		}
	}
	return true
}

// noSeam ends a continued stream whose continuation could not be joined
// to what was sent: an error, not a success. The continuing target
// answered; it is not its failure.
func (x *exchange) noSeam(a *router.Attempt, out sink) {
	a.Abandon()
	x.outcome = "broken"
	out.Broken(sse.ErrorEvent{Type: "upstream_error", Code: "stream_interrupted", Message: "The stream from " + x.prev.Target.Name +
		" broke off after it began, and the answer of " + a.Target.Name + " that was to continue it starts again in other words: " +
		"the two cannot be joined. The answer is incomplete."})
}

// sentData is the data of what was sent for ev: ev's own, or that of
// the chunk the splice wrote in its place.
func sentData(ev sse.Event, sent []byte) []byte {
	if len(sent) > 0 && len(ev.Raw) > 0 && &sent[0] != &ev.Raw[0] {
		return bytes.TrimSuffix(bytes.TrimPrefix(sent, []byte("data: ")), []byte("\n\n"))
	}
	return ev.Data
}

// chunkText returns a chat.completion.chunk's text delta, and whether the
// chunk is a single choice's text and nothing else that matters to the
// seam (no tool calls, no finish).
func chunkText(data []byte) (string, bool) {
	var c struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   *string           `json:"content"`
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil || len(c.Choices) != 1 {
		return "", false
	}
	ch := c.Choices[0]
	if ch.Index != 0 || ch.Delta.Content == nil || len(ch.Delta.ToolCalls) > 0 || ch.FinishReason != nil && *ch.FinishReason != "" {
		return "", false
	}
	return *ch.Delta.Content, true
}

// withText returns the event of chunk data with its text delta, and no
// finish, replaced by text: the splice's joined text, sent as a chunk of
// the continuing stream.
func withText(data []byte, text string) []byte {
	var c map[string]json.RawMessage
	if json.Unmarshal(data, &c) != nil {
		c = map[string]json.RawMessage{"object": json.RawMessage(`"chat.completion.chunk"`)}
	}
	delta, _ := json.Marshal(map[string]string{"content": text})
	c["choices"] = json.RawMessage(`[{"index":0,"delta":` + string(delta) + `,"finish_reason":null}]`)
	delete(c, "usage")
	b, _ := json.Marshal(c)
	return append(append([]byte("data: "), b...), "\n\n"...)
}
