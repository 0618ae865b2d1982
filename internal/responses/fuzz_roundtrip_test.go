package responses

import (
	"encoding/json"
	"strings"
	"testing"
)

// The round-trip invariants FuzzToChat checks on every body it accepts:
// a string input is the last user message's text; the function calls and outputs of the input reach chat with their call
// ids, names, arguments and outputs unchanged, in order; and each
// assistant message ToChat writes, answered back as a chat completion,
// comes out of FromChat with the same text, refusal, tool names,
// arguments and call ids.

// chatMessage is a message of a translated chat request.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Refusal    *string         `json:"refusal"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// inputCall is a function_call or function_call_output item of an input,
// as encoding/json reads it.
type inputCall struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// checkCallsKept checks that the input's function calls and their
// outputs are the chat request's tool calls and tool messages.
func checkCallsKept(t *testing.T, body, out []byte) {
	t.Helper()
	var in struct {
		Input json.RawMessage `json:"input"`
	}
	json.Unmarshal(body, &in)
	var c struct {
		Messages []chatMessage `json:"messages"`
	}
	json.Unmarshal(out, &c)
	var items []inputCall
	if json.Unmarshal(in.Input, &items) != nil {
		// A string input is one user message, the last, with that text.
		var text string
		json.Unmarshal(in.Input, &text)
		last := c.Messages[len(c.Messages)-1]
		if last.Role != "user" || partsText(last.Content) != text {
			t.Fatalf("the input %s became %s", in.Input, out)
		}
		return
	}
	var calls, outputs []inputCall
	for _, it := range items {
		switch it.Type {
		case "function_call":
			calls = append(calls, it)
		case "function_call_output":
			outputs = append(outputs, it)
		}
	}
	var sent []chatToolCall
	var results []chatMessage
	for _, m := range c.Messages {
		sent = append(sent, m.ToolCalls...)
		if m.Role == "tool" {
			results = append(results, m)
		}
	}
	if len(sent) != len(calls) || len(results) != len(outputs) {
		t.Fatalf("%d calls and %d outputs became %d tool calls and %d tool messages: %s", len(calls), len(outputs), len(sent), len(results), out)
	}
	for i, tc := range sent {
		if want := calls[i]; tc.ID != want.CallID || tc.Type != "function" || tc.Function.Name != want.Name || tc.Function.Arguments != want.Arguments {
			t.Fatalf("call %d %+v became %+v", i, want, tc)
		}
	}
	for i, m := range results {
		if m.ToolCallID != outputs[i].CallID || !sameOutput(outputs[i].Output, m.Content) {
			t.Fatalf("output %d (%s, %s) became %s, %s", i, outputs[i].CallID, outputs[i].Output, m.ToolCallID, m.Content)
		}
	}
}

// sameOutput reports whether a function_call_output's output (a string,
// or input_text parts) says what the tool message's content says.
func sameOutput(output, content json.RawMessage) bool {
	return partsText(output) == partsText(content)
}

// partsText is a JSON string, or the text of an array of parts, joined.
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// checkAssistantRoundTrip answers each assistant message of the chat
// request back as a chat completion and checks what FromChat makes of
// it.
func checkAssistantRoundTrip(t *testing.T, out []byte, req Request) {
	t.Helper()
	var c struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(out, &c)
	for _, raw := range c.Messages {
		var m chatMessage
		if json.Unmarshal(raw, &m) != nil || m.Role != "assistant" {
			continue
		}
		answer := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":` + string(raw) + `,"finish_reason":"stop"}]}`
		resp, err := FromChat([]byte(answer), req, testID, created)
		if err != nil {
			t.Fatalf("FromChat of the assistant message %s: %v", raw, err)
		}
		checkOutput(t, resp, m)
	}
}

// checkOutput checks that the response's output says what the assistant
// message m said.
func checkOutput(t *testing.T, resp []byte, m chatMessage) {
	t.Helper()
	var r struct {
		Output []struct {
			Type    string `json:"type"`
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Args    string `json:"arguments"`
			Content []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			} `json:"content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("FromChat wrote %s: %v", resp, err)
	}
	var text, refusal strings.Builder
	var calls []chatToolCall
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				text.WriteString(p.Text)
				refusal.WriteString(p.Refusal)
			}
		case "function_call":
			var tc chatToolCall
			tc.ID, tc.Function.Name, tc.Function.Arguments = it.CallID, it.Name, it.Args
			calls = append(calls, tc)
		}
	}
	wantRefusal := ""
	if m.Refusal != nil {
		wantRefusal = *m.Refusal
	}
	if text.String() != partsText(m.Content) || refusal.String() != wantRefusal || len(calls) != len(m.ToolCalls) {
		t.Fatalf("the assistant message (%s, refusal %q, %d calls) came back as %s", m.Content, wantRefusal, len(m.ToolCalls), resp)
	}
	for i, tc := range calls {
		want := m.ToolCalls[i]
		if (want.ID != "" && tc.ID != want.ID) || tc.Function.Name != want.Function.Name || tc.Function.Arguments != want.Function.Arguments {
			t.Fatalf("tool call %d %+v came back as %+v", i, want, tc)
		}
	}
}
