package sse

import (
	"bytes"
	"encoding/json"
)

// decodeContent applies the rules of HasContent to data decoded with
// encoding/json: the reference HasContent is tested against.
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
