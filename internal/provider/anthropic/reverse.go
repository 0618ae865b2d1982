package anthropic

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FromMessagesRequest translates an Anthropic Messages request body into
// an OpenAI chat completion body, for Anthropic clients whose requests go
// to OpenAI-compatible targets. A request that cannot be translated
// faithfully gives a *RequestError naming the field.
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
func FromMessagesRequest(body []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, &RequestError{Code: CodeInvalidValue, Message: "the request body is not a JSON object: " + jsonProblem(err)}
	}
	out := map[string]any{}
	var msgs []map[string]any
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		if isNull(raw) {
			continue
		}
		var err error
		switch name {
		case "model", "max_tokens", "temperature", "top_p":
			out[name] = raw
		case "stop_sequences":
			out["stop"] = raw
		case "stream":
			var s bool
			if err = decode(name, raw, &s); err == nil && s {
				out["stream"] = true
				out["stream_options"] = map[string]bool{"include_usage": true}
			}
		case "metadata":
			var m struct {
				UserID string `json:"user_id"`
			}
			if err = decode(name, raw, &m); err == nil && m.UserID != "" {
				out["user"] = m.UserID
			}
		case "system":
			var text string
			if text, err = reverseText(name, raw); err == nil && text != "" {
				msgs = append([]map[string]any{{"role": "system", "content": text}}, msgs...)
			}
		case "messages":
			var turns []map[string]any
			if turns, err = reverseMessages(raw); err == nil {
				msgs = append(msgs, turns...)
			}
		case "tools":
			err = reverseTools(raw, out)
		case "tool_choice":
			err = reverseToolChoice(raw, out)
		case "thinking", "service_tier":
			// The answer means the same without them.
		case "top_k":
			err = unsupported(name, "OpenAI-compatible targets have no top_k")
		default:
			err = unsupported(name, "")
		}
		if err != nil {
			return nil, err
		}
	}
	if msgs == nil {
		return nil, badValue("messages", CodeInvalidValue, "is required")
	}
	out["messages"] = msgs
	return json.Marshal(out)
}

// messagesBlock is any content block of an Anthropic request.
type messagesBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// reverseBlocks reads content: a string is one text block.
func reverseBlocks(at string, raw json.RawMessage) ([]messagesBlock, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := decode(at, raw, &s); err != nil {
			return nil, err
		}
		return []messagesBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []messagesBlock
	err := decode(at, raw, &blocks)
	return blocks, err
}

// reverseText joins the text blocks of system or tool_result content.
func reverseText(at string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	blocks, err := reverseBlocks(at, raw)
	if err != nil {
		return "", err
	}
	var parts []string
	for i, b := range blocks {
		if b.Type != "text" {
			return "", badValue(path(at, i, "type"), CodeUnsupportedValue, "only text is translated here, got "+strconv.Quote(b.Type))
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n\n"), nil
}

func reverseMessages(raw json.RawMessage) ([]map[string]any, error) {
	var turns []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := decode("messages", raw, &turns); err != nil {
		return nil, err
	}
	var out []map[string]any
	for i, t := range turns {
		at := path("messages", i, "content")
		blocks, err := reverseBlocks(at, t.Content)
		if err != nil {
			return nil, err
		}
		var msgs []map[string]any
		switch t.Role {
		case "user":
			msgs, err = reverseUser(at, blocks)
		case "assistant":
			msgs, err = reverseAssistant(at, blocks)
		default:
			err = badValue(path("messages", i, "role"), CodeInvalidValue, "unknown role "+strconv.Quote(t.Role))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
	}
	return out, nil
}

func reverseUser(at string, blocks []messagesBlock) ([]map[string]any, error) {
	var msgs []map[string]any
	var parts []map[string]any
	for i, b := range blocks {
		bt := path(at, i, "")
		switch b.Type {
		case "text":
			parts = append(parts, map[string]any{"type": "text", "text": b.Text})
		case "image":
			u, err := sourceURL(bt+".source", b, "image")
			if err != nil {
				return nil, err
			}
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}})
		case "document":
			if b.Source.Type != "base64" || b.Source.MediaType != "application/pdf" {
				return nil, badValue(bt+".source", CodeUnsupportedValue, "only base64 PDF documents are translated")
			}
			parts = append(parts, map[string]any{"type": "file", "file": map[string]string{
				"filename": "document.pdf", "file_data": "data:application/pdf;base64," + b.Source.Data}})
		case "tool_result":
			content, err := toolResultContent(bt+".content", b.Content)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": b.ToolUseID, "content": content})
		default:
			return nil, badValue(bt+".type", CodeUnsupportedValue, "content block "+strconv.Quote(b.Type)+" is not translated")
		}
	}
	if len(parts) > 0 {
		msgs = append(msgs, map[string]any{"role": "user", "content": parts})
	}
	return msgs, nil
}

func sourceURL(at string, b messagesBlock, kind string) (string, error) {
	switch b.Source.Type {
	case "base64":
		return "data:" + b.Source.MediaType + ";base64," + b.Source.Data, nil
	case "url":
		return b.Source.URL, nil
	}
	return "", badValue(at+".type", CodeUnsupportedValue, kind+" source "+strconv.Quote(b.Source.Type)+" is not translated")
}

func reverseAssistant(at string, blocks []messagesBlock) ([]map[string]any, error) {
	var text []string
	var calls []map[string]any
	for i, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := "{}"
			var buf bytes.Buffer
			if len(b.Input) > 0 && !isNull(b.Input) && json.Compact(&buf, b.Input) == nil {
				args = buf.String()
			}
			calls = append(calls, map[string]any{"id": b.ID, "type": "function",
				"function": map[string]string{"name": b.Name, "arguments": args}})
		case "thinking", "redacted_thinking":
			// OpenAI-compatible targets take no reasoning back.
		default:
			return nil, badValue(path(at, i, "type"), CodeUnsupportedValue, "content block "+strconv.Quote(b.Type)+" is not translated")
		}
	}
	m := map[string]any{"role": "assistant", "content": strings.Join(text, "")}
	if len(calls) > 0 {
		m["tool_calls"] = calls
		if len(text) == 0 {
			m["content"] = nil
		}
	}
	return []map[string]any{m}, nil
}

func reverseTools(raw json.RawMessage, out map[string]any) error {
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := decode("tools", raw, &tools); err != nil {
		return err
	}
	var list []map[string]any
	for i, t := range tools {
		if t.Type != "" && t.Type != "custom" {
			return badValue(path("tools", i, "type"), CodeUnsupportedValue, "server tool "+strconv.Quote(t.Type)+" is not translated")
		}
		fn := map[string]any{"name": t.Name}
		if t.Description != "" {
			fn["description"] = t.Description
		}
		if len(t.InputSchema) > 0 {
			fn["parameters"] = t.InputSchema
		}
		list = append(list, map[string]any{"type": "function", "function": fn})
	}
	out["tools"] = list
	return nil
}

func reverseToolChoice(raw json.RawMessage, out map[string]any) error {
	var c toolChoice
	if err := decode("tool_choice", raw, &c); err != nil {
		return err
	}
	switch c.Type {
	case "auto":
		out["tool_choice"] = "auto"
	case "any":
		out["tool_choice"] = "required"
	case "none":
		out["tool_choice"] = "none"
	case "tool":
		out["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": c.Name}}
	default:
		return badValue("tool_choice.type", CodeInvalidValue, "unknown type "+strconv.Quote(c.Type))
	}
	if c.DisableParallelToolUse {
		out["parallel_tool_calls"] = false
	}
	return nil
}

// toolResultContent is a tool result's content as OpenAI tool message
// content: a string stays a string, text blocks become text parts.
func toolResultContent(at string, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || isNull(raw) || raw[0] == '"' {
		return reverseText(at, raw)
	}
	blocks, err := reverseBlocks(at, raw)
	if err != nil {
		return nil, err
	}
	parts := make([]map[string]string, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "text" {
			return nil, badValue(path(at, i, "type"), CodeUnsupportedValue, "only text is translated in tool results, got "+strconv.Quote(b.Type))
		}
		parts = append(parts, map[string]string{"type": "text", "text": b.Text})
	}
	return parts, nil
}
