package sim

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// chatRequest is the part of a chat completion request the sim reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	N                   *int            `json:"n"`
	Tools               json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// promptTokens counts a request's prompt as OpenAI roughly does: a token
// per 4 bytes of each message's text (rounded up), plus 3 per message and
// 3 for the reply's priming, plus a token per 4 bytes of the tools'
// definitions.
func (r *chatRequest) promptTokens() int {
	n := 3
	for _, m := range r.Messages {
		n += 3 + (textLen(m.Content)+3)/4
	}
	if len(r.Tools) > 0 && string(r.Tools) != "null" {
		n += (len(r.Tools) + 3) / 4
	}
	return n
}

// textLen returns the length of a message's text: a string, or the text
// parts of an array of content parts.
func textLen(raw json.RawMessage) int {
	if text, ok := textOf(raw); ok {
		return len(text)
	}
	return len(raw)
}

// textOf returns a message's text: a string, or the text parts of an
// array of content parts, joined; false when it is neither.
func textOf(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String(), true
	}
	return "", false
}

// ask reads what shapes the answers: the token limit, n, tools,
// tool_choice, parallel_tool_calls, response_format and the turn.
func (r *chatRequest) ask() (ask, *requestError) {
	k := ask{limit: max(0, r.MaxCompletionTokens), format: formatText}
	if k.limit == 0 {
		k.limit = max(0, r.MaxTokens)
	}
	var e *requestError
	if k.n, e = readN(r.N); e != nil {
		return k, e
	}
	if e = r.readTools(&k.tools); e != nil {
		return k, e
	}
	if f := r.ResponseFormat; f != nil {
		spec := formatSpec{at: "response_format", typ: f.Type}
		if f.JSONSchema != nil {
			spec.schemaAt, spec.name, spec.schema = "response_format.json_schema", f.JSONSchema.Name, f.JSONSchema.Schema
		}
		if e = readFormat(&k, spec); e != nil {
			return k, e
		}
	}
	k.turn = chatTurn(r.Messages)
	return k, nil
}

// readTools reads tools, tool_choice and parallel_tool_calls.
func (r *chatRequest) readTools(ts *toolSpec) *requestError {
	ts.parallel = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	if len(r.Tools) == 0 && len(r.ToolChoice) == 0 {
		return nil
	}
	var tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if len(r.Tools) > 0 && json.Unmarshal(r.Tools, &tools) != nil {
		return invalidValue("tools", "Invalid type for 'tools': expected an array of function tools.")
	}
	if len(tools) > maxTools {
		return tooMany(len(tools))
	}
	for i, t := range tools {
		at := "tools[" + strconv.Itoa(i) + "]"
		if t.Function == nil && t.Type == "function" {
			return missing(at + ".function")
		}
		var name string
		var params json.RawMessage
		if t.Function != nil {
			name, params = t.Function.Name, t.Function.Parameters
		}
		tl, e := readTool(at, at+".function", t.Type, name, params)
		if e != nil {
			return e
		}
		ts.tools = append(ts.tools, tl)
	}
	return ts.readChoice(r.ToolChoice, func(raw json.RawMessage) (string, bool) {
		var c struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		err := json.Unmarshal(raw, &c)
		return c.Function.Name, err == nil && c.Type == "function" && c.Function.Name != ""
	})
}

// chatTurn reads the end of a conversation: whether the user spoke last,
// and the results of role tool messages since the last assistant message.
func chatTurn(msgs []chatMessage) turn {
	t := turn{userLast: len(msgs) > 0 && msgs[len(msgs)-1].Role == "user"}
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != "assistant"; i-- {
		if msgs[i].Role == "tool" {
			text, _ := textOf(msgs[i].Content)
			t.results = append(t.results, text)
		}
	}
	slices.Reverse(t.results)
	return t
}
