package gateway

import (
	"encoding/json"
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
	x.w.Header().Set("X-Fusebox-Continued", broken.Target.Name+" broke after "+strconv.Itoa(x.cont.text.Len())+
		" bytes; continued by "+next.Target.Name)
}
