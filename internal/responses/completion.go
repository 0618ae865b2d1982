package responses

import (
	"errors"
	"fmt"

	"github.com/fuseboxhq/fusebox/aireq"
)

// ErrBadChat is matched by errors.Is for a chat completions answer, or
// stream chunk, that cannot be translated: not JSON, an error object, no
// choices, finish_reason "error". For the gateway it is a bad upstream
// answer (a 502, or a failover), never the client's fault.
var ErrBadChat = errors.New("responses: bad chat completions answer")

// finishError is the finish_reason of an answer that broke off in an
// error (OpenRouter's, with the error in the chunk): no finish at all.
const finishError = "error"

func badChat(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadChat}, args...)...)
}

// completionFields are the raw members of a chat completion.
type completionFields struct {
	model, choices, usage, err []byte
}

// readCompletionFields reads the members of a chat completion or chunk
// that the answer is built from; false when data is not a JSON object.
func readCompletionFields(data []byte) (f completionFields, ok bool) {
	ok = topMembers(data, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "model":
			f.model = v
		case "choices":
			f.choices = v
		case "usage":
			f.usage = v
		case "error":
			f.err = v
		}
	})
	return f, ok
}

// readCompletion reads a chat completion into r.
func readCompletion(chat []byte, r *result, id string) error {
	f, ok := readCompletionFields(chat)
	if !ok {
		return badChat("not a JSON object")
	}
	if !absent(f.err) {
		return badChat("the answer is an error: %s", clip(string(f.err), 256))
	}
	r.model, _ = readString("", f.model)
	r.usage = readUsage(f.usage)
	choice := pickChoice(f.choices, false)
	if choice.message == nil {
		return badChat("no choice with a message")
	}
	finish, _ := readString("", choice.finish)
	if finish == finishError {
		return badChat("the answer ended with finish_reason error")
	}
	r.finish(finish)
	return readMessage(choice.message, r, id)
}

// choiceFields are the raw members of a choice.
type choiceFields struct {
	index, message, delta, finish []byte
}

// pickChoice returns the choice with index 0 (or no index), or else,
// unless only0, the first: a Responses request asks for one answer, and
// n > 1 has no equivalent. A stream's chunks must say index 0: a chunk of
// another choice is no part of the answer.
func pickChoice(raw []byte, only0 bool) choiceFields {
	var first, zero choiceFields
	found := false
	if absent(raw) || raw[0] != '[' {
		return first
	}
	elements(raw, func(i int, el []byte) error {
		var c choiceFields
		if el[0] != '{' {
			return nil
		}
		members(el, func(name []byte, _ aireq.Text, v []byte) {
			switch string(name) {
			case "index":
				c.index = v
			case "message":
				c.message = v
			case "delta":
				c.delta = v
			case "finish_reason":
				c.finish = v
			}
		})
		if i == 0 {
			first = c
		}
		if n, ok, _ := readInt("", c.index); !found && (!ok || n == 0) {
			zero, found = c, true
		}
		return nil
	})
	if found || only0 {
		return zero
	}
	return first
}

// messageFields are the raw members of a chat message or delta.
type messageFields struct {
	content, refusal, toolCalls []byte
}

func (f *messageFields) read(raw []byte) bool {
	return raw[0] == '{' && members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "content":
			f.content = v
		case "refusal":
			f.refusal = v
		case "tool_calls":
			f.toolCalls = v
		}
	})
}

// readMessage reads a chat answer's message into r's output items.
func readMessage(raw []byte, r *result, id string) error {
	var f messageFields
	if !f.read(raw) {
		return badChat("the message is not an object")
	}
	text := contentText(f.content, nil)
	refusal, _ := readString("", f.refusal)
	var calls []output
	err := elements(orEmpty(f.toolCalls), func(i int, el []byte) error {
		var d callDelta
		if !d.read(el, nil) {
			return badChat("tool_calls[%d] is not an object", i)
		}
		c := output{call: true, name: string(d.name), args: d.args, callID: string(d.id)}
		if c.callID == "" {
			c.callID = itemID("call_", id, i)
		}
		calls = append(calls, c)
		return nil
	})
	if err != nil {
		return err
	}
	if len(text) > 0 || refusal != "" || len(calls) == 0 {
		m := output{id: itemID("msg_", id, 0), status: r.itemStatus()}
		if len(text) > 0 || refusal == "" {
			m.parts = append(m.parts, outPart{text: text})
		}
		if refusal != "" {
			m.parts = append(m.parts, outPart{refusal: true, text: []byte(refusal)})
		}
		r.items = append(r.items, m)
	}
	for i := range calls {
		calls[i].id = itemID("fc_", id, len(r.items))
		calls[i].status = r.itemStatus()
		r.items = append(r.items, calls[i])
	}
	return nil
}

// orEmpty returns raw if it is an array, else an empty one.
func orEmpty(raw []byte) []byte {
	if absent(raw) || raw[0] != '[' {
		return emptyArray
	}
	return raw
}

var emptyArray = []byte("[]")

// contentText returns a message's or delta's content: a string, or the
// text of the text parts of an array (some hosts send parts), decoded
// into buf's room when it must be, else pointing into raw.
func contentText(raw, buf []byte) []byte {
	switch {
	case absent(raw):
		return nil
	case raw[0] == '"':
		r := aireq.NewReader(raw)
		t, _ := r.ReadString()
		return t.Bytes(buf)
	case raw[0] != '[':
		return nil
	}
	var out []byte
	elements(raw, func(_ int, el []byte) error {
		var typ, text []byte
		if el[0] == '{' {
			members(el, func(name []byte, _ aireq.Text, v []byte) {
				switch string(name) {
				case "type":
					typ = v
				case "text":
					text = v
				}
			})
		}
		if t, _ := readString("", typ); t == "text" {
			s, _ := readString("", text)
			out = append(out, s...)
		}
		return nil
	})
	return out
}

// callDelta is a tool call of a chat answer, or a fragment of one in a
// stream chunk. Its byte slices point into the chunk or a scratch buffer.
type callDelta struct {
	index    int
	hasIndex bool
	id, name []byte
	args     []byte
}

// read reads a tool call object; buf is room for decoded strings.
func (d *callDelta) read(raw []byte, buf []byte) bool {
	var index, id, fn []byte
	if raw[0] != '{' || !members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "index":
			index = v
		case "id":
			id = v
		case "function":
			fn = v
		}
	}) {
		return false
	}
	n, ok, _ := readInt("", index)
	d.index, d.hasIndex = int(n), ok && n >= 0 && n < 1<<31
	d.id = stringBytes(id, nil)
	var name, args []byte
	if !absent(fn) && fn[0] == '{' {
		members(fn, func(key []byte, _ aireq.Text, v []byte) {
			switch string(key) {
			case "name":
				name = v
			case "arguments":
				args = v
			}
		})
	}
	d.name = stringBytes(name, nil)
	d.args = stringBytes(args, buf)
	return true
}

// stringBytes decodes a JSON string value (nil if it is not one) into
// buf's room, or returns the bytes inside its quotes when nothing needs
// decoding.
func stringBytes(raw, buf []byte) []byte {
	if absent(raw) || raw[0] != '"' {
		return nil
	}
	r := aireq.NewReader(raw)
	t, _ := r.ReadString()
	return t.Bytes(buf)
}

// usageFields are the raw members of a chat usage object.
type usageFields struct {
	prompt, completion, total, promptDetails, completionDetails []byte
}

// readUsage reads chat usage; wrong types read as 0.
func readUsage(raw []byte) usage {
	var f usageFields
	if absent(raw) || raw[0] != '{' || !members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "prompt_tokens":
			f.prompt = v
		case "completion_tokens":
			f.completion = v
		case "total_tokens":
			f.total = v
		case "prompt_tokens_details":
			f.promptDetails = v
		case "completion_tokens_details":
			f.completionDetails = v
		}
	}) {
		return usage{}
	}
	u := usage{set: true}
	u.input, _, _ = readInt("", f.prompt)
	u.output, _, _ = readInt("", f.completion)
	u.total, _, _ = readInt("", f.total)
	u.cached = detail(f.promptDetails, "cached_tokens")
	u.reasoning = detail(f.completionDetails, "reasoning_tokens")
	if u.total == 0 {
		u.total = u.input + u.output
	}
	return u
}

// detail reads the count key of a usage details object.
func detail(raw []byte, key string) int64 {
	var v []byte
	if absent(raw) || raw[0] != '{' {
		return 0
	}
	members(raw, func(name []byte, _ aireq.Text, val []byte) {
		if string(name) == key {
			v = val
		}
	})
	n, _, _ := readInt("", v)
	return n
}
