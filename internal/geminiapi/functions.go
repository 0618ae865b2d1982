package geminiapi

import (
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// The members of a FunctionCall and a FunctionResponse.
var (
	callFields     = newFields("FunctionCall", "id", "name", "args")
	responseFields = newFields("FunctionResponse", "id", "name", "response", "parts", "willContinue", "scheduling")
)

// toolCall appends the FunctionCall raw, the model turn's calls-th, to
// the turn's tool_calls in c.parts, and notes it as pending.
func (c *converter) toolCall(calls int, raw []byte) error {
	var id, name string
	args := []byte(nil)
	err := eachMember(raw, callFields, func(i int, v []byte) error {
		var err error
		switch i {
		case 0:
			id, err = readString(v)
		case 1:
			name, err = readString(v)
		case 2:
			if v[0] != '{' {
				return badValue("args", "google.protobuf.Struct", v)
			}
			if !nestingWithin(v, maxDepth) {
				return rule("args", "the arguments nest deeper than 64 levels")
			}
			args = v
		}
		return under(err, callFields.snake[i])
	})
	if err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return under(err, "name")
	}
	if id == "" {
		id = "call_" + strconv.Itoa(c.calls)
	}
	c.calls++
	c.pending = append(c.pending, pendingCall{name: name, id: id})
	if calls > 0 {
		c.parts = append(c.parts, ',')
	}
	c.parts = append(c.parts, `{"id":`...)
	c.parts = jsontext.AppendString(c.parts, id)
	c.parts = append(c.parts, `,"type":"function","function":{"name":`...)
	c.parts = jsontext.AppendString(c.parts, name)
	c.parts = append(c.parts, `,"arguments":`...)
	c.parts = c.appendJSONString(c.parts, args, "{}")
	c.parts = append(c.parts, "}}"...)
	return nil
}

// appendJSONString appends the JSON value raw, compacted, as a JSON
// string (def when raw is nil).
func (c *converter) appendJSONString(b, raw []byte, def string) []byte {
	if raw == nil {
		return jsontext.AppendString(b, def)
	}
	c.scratch = compact(c.scratch[:0], raw)
	return jsontext.AppendString(b, c.scratch)
}

// toolMessage writes the FunctionResponse raw as a tool message answering
// its call: the one with its id, else the first pending call of its name.
func (c *converter) toolMessage(raw []byte) error {
	var id, name string
	var response []byte
	err := eachMember(raw, responseFields, func(i int, v []byte) error {
		var err error
		switch i {
		case 0:
			id, err = readString(v)
		case 1:
			name, err = readString(v)
		case 2:
			if v[0] != '{' {
				return badValue("response", "google.protobuf.Struct", v)
			}
			if !nestingWithin(v, maxDepth) {
				return rule("response", "the response nests deeper than 64 levels")
			}
			response = v
		case 3:
			if !isEmptyArray(v) {
				return unsupported("parts", "a function response with parts")
			}
		case 4:
			_, err = readBool(v)
		case 5:
			_, err = readString(v)
		}
		return under(err, responseFields.snake[i])
	})
	if err != nil {
		return err
	}
	if name == "" {
		return rule("name", "the function name is required")
	}
	if id, err = c.answer(id, name); err != nil {
		return err
	}
	c.message("tool")
	c.b = append(c.b, `,"tool_call_id":`...)
	c.b = jsontext.AppendString(c.b, id)
	c.b = append(c.b, `,"content":`...)
	c.b = c.appendJSONString(c.b, response, "{}")
	c.b = append(c.b, '}')
	return nil
}

// answer returns the id of the call a function response answers and
// takes that call off the pending list.
func (c *converter) answer(id, name string) (string, error) {
	for i, p := range c.pending {
		if (id != "" && p.id == id) || (id == "" && p.name == name) {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			return p.id, nil
		}
	}
	if id != "" {
		return id, nil
	}
	return "", rule("name", "the function response "+strconv.Quote(clip(name))+" answers no earlier function call of that name")
}

// checkName checks a function's name: chat targets take names of 1 to 64
// letters, digits, '_' and '-' (Gemini takes '.' and ':' too).
func checkName(name string) error {
	if name == "" {
		return rule("", "the function name is required")
	}
	if len(name) > 64 {
		return rule("", "the function name is longer than 64 characters")
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return unsupported("", "the function name "+strconv.Quote(clip(name))+" (only letters, digits, '_' and '-')")
		}
	}
	return nil
}
