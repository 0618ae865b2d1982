package anthropic

import (
	"encoding/json"
	"maps"
	"slices"
)

// FromMessagesRequest translates an Anthropic Messages request body into
// an OpenAI chat completion body, for Anthropic clients whose requests go
// to OpenAI-compatible targets. A request that cannot be translated
// faithfully gives a *RequestError naming the field
// ("messages[1].content[0].input") and saying what is wrong in JSON's
// words.
//
// Mapping: system (string or text blocks) → a leading system message;
// user text → text parts, image blocks (base64 or url source) →
// image_url parts (base64 as a data: URL), PDF document blocks (base64) →
// file parts; tool_result blocks → role tool messages placed before the
// rest of their user turn (is_error is not carried; the content is);
// assistant text → content, tool_use → tool_calls (input as the arguments
// string), thinking and redacted_thinking blocks are left out; tools →
// function tools (input_schema as parameters); tool_choice auto / any /
// tool / none → "auto" / "required" / named / "none", and
// disable_parallel_tool_use → parallel_tool_calls false; max_tokens →
// max_tokens; temperature, top_p → the same; stop_sequences → stop;
// stream → stream with stream_options.include_usage (the usage feeds the
// Anthropic events); metadata.user_id → user. Ignored: cache_control,
// thinking, service_tier. Refused: top_k, server tools (typed tools
// other than "custom"), mcp_servers, container, and unknown fields.
//
// The request is read as Anthropic reads it: keys exactly (a "Text" key
// is not text), the last of duplicate keys, values of the documented
// types only (max_tokens a whole number of at least 1, tool_use input an
// object), content required and not empty except in a final assistant
// turn, and at least one message.
func FromMessagesRequest(body []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		msg := "the request body is not a JSON object"
		if err != nil {
			msg += ": " + jsonProblem(err)
		}
		return nil, &RequestError{Code: CodeInvalidValue, Message: msg}
	}
	r := reverser{req: reqObject{m: fields}, out: map[string]any{}}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if r.req.get(name) == nil {
			continue
		}
		if err := r.field(name); err != nil {
			return nil, err
		}
	}
	switch {
	case r.req.get("messages") == nil:
		return nil, r.req.required("messages")
	case r.turns == 0:
		return nil, badValue("messages", CodeInvalidValue, "at least one message is required")
	}
	if r.system != "" {
		r.msgs = slices.Insert(r.msgs, 0, map[string]any{"role": "system", "content": r.system})
	}
	r.out["messages"] = r.msgs
	return json.Marshal(r.out)
}

// reverser holds a translation in progress.
type reverser struct {
	req    reqObject      // the client's request
	out    map[string]any // the chat request's fields but messages
	system string
	msgs   []map[string]any
	turns  int // the request's messages
}

// field translates the top-level field name, which is not null.
func (r *reverser) field(name string) error {
	var err error
	switch name {
	case "model":
		r.out[name], err = r.req.str(name)
	case "max_tokens":
		var n int64
		if n, _, err = r.req.integer(name); err == nil && n < 1 {
			err = badValue(name, CodeInvalidValue, "must be at least 1")
		}
		r.out[name] = n
	case "temperature", "top_p":
		r.out[name], _, err = r.req.number(name)
	case "stop_sequences":
		var stop []string
		if stop, err = r.req.strings(name); len(stop) > 0 {
			r.out["stop"] = stop
		}
	case "stream":
		var s bool
		if s, err = r.req.boolean(name); s {
			r.out["stream"] = true
			r.out["stream_options"] = map[string]bool{"include_usage": true}
		}
	case "metadata":
		err = r.metadata()
	case "system":
		r.system, err = textContent(name, r.req.get(name))
	case "messages":
		err = r.messages()
	case "tools":
		err = r.tools()
	case "tool_choice":
		err = r.toolChoice()
	case "thinking", "service_tier":
		// The answer means the same without them.
	case "top_k":
		err = refuse(name, "they have no top_k")
	default:
		err = refuse(name, "")
	}
	return err
}

func (r *reverser) metadata() error {
	m, err := r.req.object("metadata")
	if err != nil {
		return err
	}
	user, err := m.str("user_id")
	if user != "" {
		r.out["user"] = user
	}
	return err
}

func (r *reverser) messages() error {
	turns, err := readArray("messages", r.req.get("messages"))
	if err != nil {
		return err
	}
	r.turns = len(turns)
	for i, raw := range turns {
		t, err := readObject(path("messages", i, ""), raw)
		if err != nil {
			return err
		}
		role, err := t.needStr("role")
		if err != nil {
			return err
		}
		content := t.get("content")
		if content == nil {
			return t.required("content")
		}
		blocks, err := readBlocks(t.path("content"), content)
		if err != nil {
			return err
		}
		if len(blocks) == 0 && (role != "assistant" || i != len(turns)-1) {
			return badValue(t.path("content"), CodeInvalidValue, "must not be empty except in a final assistant message")
		}
		var msgs []map[string]any
		switch role {
		case "user":
			msgs, err = reverseUser(blocks)
		case "assistant":
			msgs, err = reverseAssistant(blocks)
		default:
			err = badValue(t.path("role"), CodeInvalidValue, "unknown role "+quoted(role))
		}
		if err != nil {
			return err
		}
		r.msgs = append(r.msgs, msgs...)
	}
	return nil
}

func (r *reverser) tools() error {
	list, err := readArray("tools", r.req.get("tools"))
	if err != nil {
		return err
	}
	var tools []map[string]any
	for i, raw := range list {
		t, err := readObject(path("tools", i, ""), raw)
		if err != nil {
			return err
		}
		fn, err := function(t)
		if err != nil {
			return err
		}
		tools = append(tools, map[string]any{"type": "function", "function": fn})
	}
	if len(tools) > 0 {
		r.out["tools"] = tools
	}
	return nil
}

// function returns a custom tool as an OpenAI function.
func function(t reqObject) (map[string]any, error) {
	typ, err := t.str("type")
	if err != nil {
		return nil, err
	}
	if typ != "" && typ != "custom" {
		return nil, badValue(t.path("type"), CodeUnsupportedValue, "server tool "+quoted(typ)+" is not translated")
	}
	name, err := t.needStr("name")
	if err != nil {
		return nil, err
	}
	fn := map[string]any{"name": name}
	desc, err := t.str("description")
	if err != nil {
		return nil, err
	}
	if desc != "" {
		fn["description"] = desc
	}
	if schema := t.get("input_schema"); schema != nil {
		if kind(schema) != "an object" {
			return nil, wantType(t.path("input_schema"), "an object", schema)
		}
		fn["parameters"] = rawJSON(schema)
	}
	return fn, nil
}

func (r *reverser) toolChoice() error {
	c, err := r.req.object("tool_choice")
	if err != nil {
		return err
	}
	typ, err := c.needStr("type")
	if err != nil {
		return err
	}
	switch typ {
	case "auto":
		r.out["tool_choice"] = "auto"
	case "any":
		r.out["tool_choice"] = "required"
	case "none":
		r.out["tool_choice"] = "none"
	case "tool":
		name, err := c.needStr("name")
		if err != nil {
			return err
		}
		r.out["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": name}}
	default:
		return badValue(c.path("type"), CodeInvalidValue, "unknown type "+quoted(typ))
	}
	serial, err := c.boolean("disable_parallel_tool_use")
	if serial {
		r.out["parallel_tool_calls"] = false
	}
	return err
}
