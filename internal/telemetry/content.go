package telemetry

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The conventions' message shape (gen-ai-input-messages.json and
// gen-ai-output-messages.json): a role and a list of typed parts.
type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"` // text
	ID        string          `json:"id,omitempty"`      // tool_call, tool_call_response
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
	Modality  string          `json:"modality,omitempty"` // uri
	URI       string          `json:"uri,omitempty"`
}

// chatMessage is the part of an OpenAI chat message the capture reads.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatPart is one element of an array content.
type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// inputMessages renders a chat-completions body's messages in the
// conventions' shape, within max bytes: the oldest messages go first,
// then long texts are cut. truncated says whether anything was left out.
// A body it cannot read gives "".
func inputMessages(body []byte, max int) (out string, truncated bool) {
	var req struct {
		Messages []chatMessage `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return "", false
	}
	msgs := make([]message, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, fromChat(m))
	}
	return bounded(msgs, max)
}

// outputMessages renders an answer as the conventions' output messages.
func outputMessages(text, finishReason string, max int) (string, bool) {
	if finishReason == "" {
		finishReason = "error" // the conventions' value for one never received
	}
	return bounded([]message{{Role: "assistant", Parts: []part{{Type: "text", Content: text}}, FinishReason: finishReason}}, max)
}

func fromChat(m chatMessage) message {
	out := message{Role: m.Role}
	if m.Role == "tool" {
		out.Parts = []part{{Type: "tool_call_response", ID: m.ToolCallID, Response: contentText(m.Content)}}
		return out
	}
	var s string
	var parts []chatPart
	switch {
	case json.Unmarshal(m.Content, &s) == nil:
		if s != "" {
			out.Parts = append(out.Parts, part{Type: "text", Content: s})
		}
	case json.Unmarshal(m.Content, &parts) == nil:
		for _, p := range parts {
			out.Parts = append(out.Parts, fromChatPart(p))
		}
	}
	for _, tc := range m.ToolCalls {
		p := part{Type: "tool_call", ID: tc.ID, Name: tc.Function.Name}
		if json.Valid([]byte(tc.Function.Arguments)) {
			p.Arguments = json.RawMessage(tc.Function.Arguments)
		}
		out.Parts = append(out.Parts, p)
	}
	if out.Parts == nil {
		out.Parts = []part{}
	}
	return out
}

func fromChatPart(p chatPart) part {
	switch p.Type {
	case "text":
		return part{Type: "text", Content: p.Text}
	case "image_url":
		uri := p.ImageURL.URL
		if strings.HasPrefix(uri, "data:") {
			// An inline image: its media type, not its bytes.
			uri, _, _ = strings.Cut(uri, ",")
			uri += ","
		}
		return part{Type: "uri", Modality: "image", URI: uri}
	}
	return part{Type: p.Type} // audio, files: named, not recorded
}

// contentText is a tool message's content as text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []chatPart
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}

// bounded encodes msgs within max bytes, dropping the oldest messages
// and then cutting texts until it fits.
func bounded(msgs []message, max int) (string, bool) {
	truncated := false
	for {
		b, _ := json.Marshal(msgs)
		if len(b) <= max {
			return string(b), truncated
		}
		truncated = true
		if len(msgs) > 1 {
			msgs = msgs[1:]
			continue
		}
		if !cutTexts(msgs[0].Parts, len(b)-max) {
			return "[]", true
		}
	}
}

// cutTexts shortens the longest text fields of parts by at least over
// bytes in total; false when nothing is left to cut.
func cutTexts(parts []part, over int) bool {
	for over > 0 {
		longest := -1
		for i := range parts {
			if longest < 0 || textLen(parts[i]) > textLen(parts[longest]) {
				longest = i
			}
		}
		if longest < 0 || textLen(parts[longest]) == 0 {
			return false
		}
		p := &parts[longest]
		field := &p.Content
		if p.Type == "tool_call_response" {
			field = &p.Response
		}
		keep := max(0, len(*field)-over-16) // JSON escaping may have made it longer
		for keep > 0 && !utf8.RuneStart((*field)[keep]) {
			keep--
		}
		over -= len(*field) - keep
		*field = (*field)[:keep]
	}
	return true
}

func textLen(p part) int { return len(p.Content) + len(p.Response) }
