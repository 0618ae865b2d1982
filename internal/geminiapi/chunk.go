package geminiapi

import (
	"encoding/json"
	"strconv"

	"github.com/fuseboxhq/fusebox/aireq"
)

// A stream reads each chat chunk in one pass with aireq's Reader instead
// of decoding it into structs: text deltas stay the JSON strings they
// arrived as, and are copied into the Gemini response as they are (a
// valid JSON string decodes the same wherever it is), so a text chunk
// costs no allocation. Tool call fragments, usage and errors, which come
// a few times a stream, are decoded with encoding/json. Keys match
// exactly, and of a key given twice the last counts, as encoding/json
// reads them.

// chunkView is what a stream reads of a chat chunk. Its slices point into
// the event's data.
type chunkView struct {
	id, model []byte // raw JSON strings, nil when absent
	usage     []byte // raw, nil when absent or null
	err       []byte // raw, nil when absent or null
	choices   []choiceView
}

// choiceView is what a stream reads of a chunk's choice.
type choiceView struct {
	index                       int
	content, refusal, reasoning []byte // raw JSON strings, nil when absent, null or ""
	calls                       []byte // raw tool_calls array, nil when absent or null
	finish                      []byte // raw JSON string, nil when absent or null
}

// readChunk reads data into v, reusing v's choices. It reports false when
// data is not a JSON object encoding/json would accept, or a member read
// has the wrong type.
func readChunk(data []byte, v *chunkView) bool {
	*v = chunkView{choices: v.choices[:0]}
	r := aireq.NewStrictReader(data)
	if r.Kind() != aireq.Object {
		return false
	}
	ok := true
	whole := r.Object(func(k aireq.Text) bool {
		raw, read := r.Value()
		if !read {
			return false
		}
		switch {
		case k.Is("id"):
			v.id, ok = stringOrNull(raw)
		case k.Is("model"):
			v.model, ok = stringOrNull(raw)
		case k.Is("usage"):
			v.usage = nonNull(raw)
		case k.Is("error"):
			v.err = nonNull(raw)
		case k.Is("choices"):
			v.choices, ok = readChoices(raw, v.choices[:0])
		}
		return ok
	})
	return whole && r.End()
}

// readChoices appends the choices of the valid JSON value raw to list.
func readChoices(raw []byte, list []choiceView) ([]choiceView, bool) {
	if isNull(raw) {
		return list, true
	}
	if raw[0] != '[' {
		return list, false
	}
	ok := true
	r := aireq.NewReader(raw)
	r.Array(func() bool {
		el, read := r.Value()
		if !read {
			return false
		}
		var c choiceView
		if c, ok = readChoice(el); ok {
			list = append(list, c)
		}
		return ok
	})
	return list, ok
}

// readChoice reads one choice of a chunk.
func readChoice(raw []byte) (choiceView, bool) {
	var c choiceView
	if raw[0] != '{' {
		return c, false
	}
	ok := true
	r := aireq.NewReader(raw)
	r.Object(func(k aireq.Text) bool {
		v, read := r.Value()
		if !read {
			return false
		}
		switch {
		case k.Is("index"):
			c.index, ok = readIndex(v)
		case k.Is("finish_reason"):
			c.finish, ok = stringOrNull(v)
		case k.Is("delta"):
			ok = readDelta(v, &c)
		}
		return ok
	})
	return c, ok
}

// readDelta reads a choice's delta into c.
func readDelta(raw []byte, c *choiceView) bool {
	if isNull(raw) {
		return true
	}
	if raw[0] != '{' {
		return false
	}
	ok := true
	var reasoning, other []byte
	r := aireq.NewReader(raw)
	r.Object(func(k aireq.Text) bool {
		v, read := r.Value()
		if !read {
			return false
		}
		switch {
		case k.Is("content"):
			c.content, ok = stringOrNull(v)
		case k.Is("refusal"):
			c.refusal, ok = stringOrNull(v)
		case k.Is("reasoning_content"):
			reasoning, ok = stringOrNull(v)
		case k.Is("reasoning"):
			other, ok = stringOrNull(v)
		case k.Is("tool_calls"):
			c.calls = nonNull(v)
			ok = c.calls == nil || c.calls[0] == '['
		}
		return ok
	})
	c.content, c.refusal = nonEmpty(c.content), nonEmpty(c.refusal)
	if c.reasoning = nonEmpty(reasoning); c.reasoning == nil {
		c.reasoning = nonEmpty(other)
	}
	return ok
}

// stringOrNull returns the raw JSON string v, nil for null; ok is false
// for any other value.
func stringOrNull(v []byte) ([]byte, bool) {
	switch v[0] {
	case '"':
		return v, true
	case 'n':
		return nil, true
	}
	return nil, false
}

// nonNull returns v, nil when it is null.
func nonNull(v []byte) []byte {
	if isNull(v) {
		return nil
	}
	return v
}

// nonEmpty returns the raw JSON string s, nil when it is "".
func nonEmpty(s []byte) []byte {
	if len(s) <= 2 {
		return nil
	}
	return s
}

// readIndex reads a choice's index, a whole number as encoding/json reads
// one into an int.
func readIndex(v []byte) (int, bool) {
	if isNull(v) {
		return 0, true
	}
	n, err := strconv.Atoi(string(v))
	return n, err == nil
}

// decodeRaw decodes the raw JSON string s.
func decodeRaw(s []byte) string {
	if s == nil {
		return ""
	}
	r := aireq.NewReader(s)
	t, _ := r.ReadString()
	return t.String()
}

// toolCalls decodes a choice's raw tool_calls array.
func toolCalls(raw []byte) ([]chatToolCall, bool) {
	var calls []chatToolCall
	return calls, json.Unmarshal(raw, &calls) == nil
}
