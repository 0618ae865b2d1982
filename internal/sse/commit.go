package sse

import (
	"bytes"
	"encoding/json"
)

// IsDone reports whether ev is OpenAI's end-of-stream marker, data: [DONE].
func IsDone(ev Event) bool {
	return string(ev.Data) == "[DONE]"
}

// HasContent reports whether ev is the stream's commit point: the first
// event that carries part of the answer. Events before it (preamble,
// role-only deltas, pings) may be held back while the gateway can still
// fail over invisibly; once an event with content has been sent, it cannot.
//
// The event's data must be one JSON object; anything else has no content.
// An error is never content: an event named "error", or data with a
// non-null top-level "error" member (OpenAI, vLLM, OpenRouter mid-stream
// errors) has no content; classify those with aierr.ClassifyEvent.
//
// OpenAI-style chunks (data with a "choices" member): the event has content
// if any element of choices, as an object,
//   - has a "finish_reason" that is a non-empty string other than "error"
//     (OpenRouter marks its error chunks so), since a finished answer, even
//     an empty one, is final; or a non-empty string "text" (completions);
//   - or has a "delta" object with any of: "content" a non-empty string or
//     a non-empty array (content parts); "refusal", "reasoning_content"
//     (DeepSeek, vLLM) or "reasoning" (OpenRouter) a non-empty string;
//     "tool_calls" or "reasoning_details" a non-empty array; "function_call"
//     (legacy) or "audio" an object.
//
// So {"role":"assistant","content":""}, "content":null, "refusal":null,
// "reasoning_content":"", an empty "tool_calls", Azure's prompt_filter_results
// chunk with empty choices and a usage-only chunk have no content.
//
// Anthropic-style events (no "choices" member), by event name, or by the
// data's "type" member when the event has no name:
//   - content_block_delta has content (text, thinking, input_json,
//     signature and citations deltas alike);
//   - content_block_start has content unless its "content_block" is a
//     "text" block with an empty "text" or a "thinking" block with an
//     empty "thinking" (so a tool_use block start commits);
//   - message_delta has content when its "delta" has a non-empty
//     "stop_reason" string (an empty answer that has ended is final);
//   - message_start, content_block_stop, message_stop, ping and any other
//     name have none.
//
// Keys match exactly. The data is scanned without decoding; where that
// cannot match encoding/json (escaped keys, very deep nesting), HasContent
// decodes it with encoding/json instead, with the same rules.
func HasContent(ev Event) bool {
	if c, st := scanContent(ev.Name, ev.Data); st != scanBail {
		return c
	}
	return decodeContent(ev.Name, ev.Data)
}

// The members read by the rules, in the order of the out slices.
var (
	topKeys    = []string{"error", "choices", "type", "content_block", "delta"}
	choiceKeys = []string{"finish_reason", "text", "delta"}
	deltaKeys  = []string{"content", "refusal", "reasoning_content", "reasoning",
		"tool_calls", "reasoning_details", "function_call", "audio"}
	blockKeys   = []string{"type", "text", "thinking"}
	messageKeys = []string{"stop_reason"}
)

// scanContent applies the rules to the raw JSON. Its status is scanBail
// when encoding/json must decide.
func scanContent(name string, data []byte) (bool, status) {
	if name == "error" {
		return false, scanOK
	}
	var top [5][]byte
	if st := fields(data, topKeys, top[:]); st != scanOK {
		return false, st
	}
	if top[0] != nil && string(top[0]) != "null" {
		return false, scanOK
	}
	if top[1] != nil {
		return scanChoices(top[1])
	}
	kind := name
	if kind == "" {
		t, st := rawString(top[2])
		if st != scanOK {
			return false, st
		}
		kind = t
	}
	switch kind {
	case "content_block_delta":
		return true, scanOK
	case "content_block_start":
		return scanBlockStart(top[3])
	case "message_delta":
		var d [1][]byte
		if st := fields(top[4], messageKeys, d[:]); st == scanBail {
			return false, st
		}
		return nonEmptyString(d[0]), scanOK
	}
	return false, scanOK
}

func scanChoices(choices []byte) (bool, status) {
	for it := newArrayIter(choices); it.next(); {
		var c [3][]byte
		switch fields(it.elem, choiceKeys, c[:]) {
		case scanBail:
			return false, scanBail
		case scanOK:
		default:
			continue
		}
		if nonEmptyString(c[0]) {
			reason, st := rawString(c[0])
			if st != scanOK {
				return false, st
			}
			if reason != "error" {
				return true, scanOK
			}
		}
		if nonEmptyString(c[1]) {
			return true, scanOK
		}
		var d [8][]byte
		switch fields(c[2], deltaKeys, d[:]) {
		case scanBail:
			return false, scanBail
		case scanOK:
			if nonEmptyString(d[0]) || nonEmptyArray(d[0]) ||
				nonEmptyString(d[1]) || nonEmptyString(d[2]) || nonEmptyString(d[3]) ||
				nonEmptyArray(d[4]) || nonEmptyArray(d[5]) ||
				isObject(d[6]) || isObject(d[7]) {
				return true, scanOK
			}
		}
	}
	return false, scanOK
}

func scanBlockStart(block []byte) (bool, status) {
	var b [3][]byte
	switch fields(block, blockKeys, b[:]) {
	case scanBail:
		return false, scanBail
	case scanOK:
	default:
		return false, scanOK
	}
	t, st := rawString(b[0])
	switch {
	case st != scanOK:
		return false, st
	case t == "":
		return false, scanOK
	case t == "text":
		return nonEmptyString(b[1]), scanOK
	case t == "thinking":
		return nonEmptyString(b[2]), scanOK
	}
	return true, scanOK
}

// rawString returns the value of a raw JSON string without escapes; ""
// for anything that is not a string, and scanBail for a string with escapes.
func rawString(raw []byte) (string, status) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", scanOK
	}
	s := raw[1 : len(raw)-1]
	if hasByte(s, '\\') {
		return "", scanBail
	}
	return string(s), scanOK // callers compare it; the conversion does not allocate
}

func nonEmptyString(raw []byte) bool { return len(raw) > 2 && raw[0] == '"' }

func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

func nonEmptyArray(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '[' {
		return false
	}
	rest := bytes.TrimLeft(raw[1:], " \t\r\n")
	return len(rest) > 0 && rest[0] != ']'
}

// decodeContent applies the rules of HasContent to data decoded with
// encoding/json. It is HasContent's fallback and its reference in tests.
func decodeContent(name string, data []byte) bool {
	if name == "error" || !json.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return false
	}
	top, _ := v.(map[string]any)
	if top == nil || top["error"] != nil {
		return false
	}
	if choices, ok := top["choices"]; ok {
		list, _ := choices.([]any)
		for _, c := range list {
			if choiceHasContent(c) {
				return true
			}
		}
		return false
	}
	kind := name
	if kind == "" {
		kind, _ = top["type"].(string)
	}
	switch kind {
	case "content_block_delta":
		return true
	case "content_block_start":
		b, _ := top["content_block"].(map[string]any)
		if b == nil {
			return false
		}
		switch t, _ := b["type"].(string); t {
		case "":
			return false
		case "text":
			s, _ := b["text"].(string)
			return s != ""
		case "thinking":
			s, _ := b["thinking"].(string)
			return s != ""
		}
		return true
	case "message_delta":
		d, _ := top["delta"].(map[string]any)
		s, _ := d["stop_reason"].(string)
		return s != ""
	}
	return false
}

func choiceHasContent(c any) bool {
	m, _ := c.(map[string]any)
	if m == nil {
		return false
	}
	if s, _ := m["finish_reason"].(string); s != "" && s != "error" {
		return true
	}
	if s, _ := m["text"].(string); s != "" {
		return true
	}
	d, _ := m["delta"].(map[string]any)
	if d == nil {
		return false
	}
	switch c := d["content"].(type) {
	case string:
		if c != "" {
			return true
		}
	case []any:
		if len(c) > 0 {
			return true
		}
	}
	for _, k := range []string{"refusal", "reasoning_content", "reasoning"} {
		if s, _ := d[k].(string); s != "" {
			return true
		}
	}
	for _, k := range []string{"tool_calls", "reasoning_details"} {
		if a, _ := d[k].([]any); len(a) > 0 {
			return true
		}
	}
	for _, k := range []string{"function_call", "audio"} {
		if _, ok := d[k].(map[string]any); ok {
			return true
		}
	}
	return false
}
