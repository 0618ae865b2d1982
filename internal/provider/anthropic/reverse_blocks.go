package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The content blocks of a client's Messages request, translated to chat
// message parts, tool messages and tool calls.

// textBlock is the type of the block a string content stands for.
var textBlock = json.RawMessage(`"text"`)

// readBlocks reads content at the path at: a string is one text block.
func readBlocks(at string, raw json.RawMessage) ([]reqObject, error) {
	if kind(raw) == "a string" {
		return []reqObject{{at: at, m: map[string]json.RawMessage{"type": textBlock, "text": raw}}}, nil
	}
	list, err := readArray(at, raw)
	if err != nil {
		return nil, err
	}
	blocks := make([]reqObject, len(list))
	for i, el := range list {
		if blocks[i], err = readObject(path(at, i, ""), el); err != nil {
			return nil, err
		}
	}
	return blocks, nil
}

// blockType returns the type of a content block; it is required.
func blockType(b reqObject) (string, error) {
	return b.needStr("type")
}

// notTranslated refuses a content block of the type typ.
func notTranslated(b reqObject, typ string) error {
	return badValue(b.path("type"), CodeUnsupportedValue, "content block "+quoted(typ)+" is not translated")
}

// textContent joins the text blocks of system or tool_result content.
func textContent(at string, raw json.RawMessage) (string, error) {
	if raw == nil {
		return "", nil
	}
	blocks, err := readBlocks(at, raw)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		if parts[i], err = onlyText(b); err != nil {
			return "", err
		}
	}
	return strings.Join(parts, "\n\n"), nil
}

// onlyText returns the text of a block that may only be text.
func onlyText(b reqObject) (string, error) {
	typ, err := blockType(b)
	if err != nil {
		return "", err
	}
	if typ != "text" {
		return "", badValue(b.path("type"), CodeUnsupportedValue, "only text is translated here, got "+quoted(typ))
	}
	return b.str("text")
}

func reverseUser(blocks []reqObject) ([]map[string]any, error) {
	var msgs, parts []map[string]any
	for _, b := range blocks {
		typ, err := blockType(b)
		if err != nil {
			return nil, err
		}
		var part map[string]any
		switch typ {
		case "text":
			var text string
			text, err = b.str("text")
			part = map[string]any{"type": "text", "text": text}
		case "image":
			var u string
			u, err = imageURL(b)
			part = map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}}
		case "document":
			var data string
			data, err = pdfData(b)
			part = map[string]any{"type": "file", "file": map[string]string{
				"filename": "document.pdf", "file_data": "data:application/pdf;base64," + data}}
		case "tool_result":
			var m map[string]any
			m, err = toolResult(b)
			msgs = append(msgs, m)
		default:
			err = notTranslated(b, typ)
		}
		if err != nil {
			return nil, err
		}
		if part != nil {
			parts = append(parts, part)
		}
	}
	if len(parts) > 0 {
		msgs = append(msgs, map[string]any{"role": "user", "content": parts})
	}
	return msgs, nil
}

// imageURL returns an image block's source as a URL.
func imageURL(b reqObject) (string, error) {
	src, err := b.object("source")
	if err != nil {
		return "", err
	}
	typ, err := src.needStr("type")
	if err != nil {
		return "", err
	}
	switch typ {
	case "base64":
		media, err := src.needStr("media_type")
		if err != nil {
			return "", err
		}
		data, err := src.needStr("data")
		return "data:" + media + ";base64," + data, err
	case "url":
		return src.needStr("url")
	}
	return "", badValue(src.path("type"), CodeUnsupportedValue, "image source "+quoted(typ)+" is not translated")
}

// pdfData returns the base64 data of a document block.
func pdfData(b reqObject) (string, error) {
	src, err := b.object("source")
	if err != nil {
		return "", err
	}
	typ, err := src.str("type")
	if err != nil {
		return "", err
	}
	media, err := src.str("media_type")
	if err != nil {
		return "", err
	}
	if typ != "base64" || media != "application/pdf" {
		return "", badValue(b.path("source"), CodeUnsupportedValue, "only base64 PDF documents are translated")
	}
	return src.needStr("data")
}

// toolResult returns a tool_result block as a tool message: a string
// content stays a string, text blocks become text parts.
func toolResult(b reqObject) (map[string]any, error) {
	id, err := b.needStr("tool_use_id")
	if err != nil {
		return nil, err
	}
	var content any = ""
	if raw := b.get("content"); raw != nil && kind(raw) != "a string" {
		blocks, err := readBlocks(b.path("content"), raw)
		if err != nil {
			return nil, err
		}
		parts := make([]map[string]string, len(blocks))
		for i, c := range blocks {
			text, err := onlyText(c)
			if err != nil {
				return nil, err
			}
			parts[i] = map[string]string{"type": "text", "text": text}
		}
		if len(parts) > 0 {
			content = parts
		}
	} else if content, err = b.str("content"); err != nil {
		return nil, err
	}
	return map[string]any{"role": "tool", "tool_call_id": id, "content": content}, nil
}

func reverseAssistant(blocks []reqObject) ([]map[string]any, error) {
	var text []string
	var calls []map[string]any
	for _, b := range blocks {
		typ, err := blockType(b)
		if err != nil {
			return nil, err
		}
		switch typ {
		case "text":
			var s string
			s, err = b.str("text")
			text = append(text, s)
		case "tool_use":
			var call map[string]any
			call, err = toolUse(b)
			calls = append(calls, call)
		case "thinking", "redacted_thinking":
			// OpenAI-compatible targets take no reasoning back.
		default:
			err = notTranslated(b, typ)
		}
		if err != nil {
			return nil, err
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

// toolUse returns a tool_use block as a tool call, its input (an object;
// {} when absent) as the arguments string.
func toolUse(b reqObject) (map[string]any, error) {
	id, err := b.needStr("id")
	if err != nil {
		return nil, err
	}
	name, err := b.needStr("name")
	if err != nil {
		return nil, err
	}
	args := "{}"
	if input := b.get("input"); input != nil {
		if kind(input) != "an object" {
			return nil, wantType(b.path("input"), "an object", input)
		}
		var buf bytes.Buffer
		json.Compact(&buf, input) // valid: it was read from valid JSON
		args = buf.String()
	}
	return map[string]any{"id": id, "type": "function",
		"function": map[string]string{"name": name, "arguments": args}}, nil
}
