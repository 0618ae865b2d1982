package chatwire

import (
	"encoding/json"
	"testing"
)

// An answer is written in OpenAI's field order, with null content and
// refusal where absent and empty optional fields left out; usage types
// that embed Usage add their fields after its own.
func TestCompletionWire(t *testing.T) {
	msg := OutMessage{Role: "assistant"}
	msg.SetText([]byte("hi"), true)
	c := Completion[Usage]{ID: "x", Object: "chat.completion", Created: 7, Model: "m",
		Choices: []Choice{{Message: msg, Logprobs: json.RawMessage("null"), FinishReason: "stop"}}}
	c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens = 1, 2, 3
	got, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"x","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	type reasoning struct {
		Usage
		Details struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
	tool := OutMessage{Role: "assistant", ToolCalls: []OutToolCall{{ID: "c", Type: "function", Function: Function{Name: "f", Arguments: "{}"}, ExtraContent: &ExtraContent{}}}}
	tool.SetText(nil, false)
	r := Completion[reasoning]{Choices: []Choice{{Message: tool, Logprobs: json.RawMessage("null")}}}
	r.Usage.Details.ReasoningTokens = 4
	got, err = json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"id":"","object":"","created":0,"model":"","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":""}}}],"refusal":null},"logprobs":null,"finish_reason":""}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":4}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A message of tool calls alone has null content; one with text, or with
// neither text nor calls, has its text (possibly empty).
func TestSetText(t *testing.T) {
	var empty OutMessage
	empty.SetText(nil, false)
	if empty.Content == nil || *empty.Content != "" {
		t.Errorf("no text and no calls: content %v, want \"\"", empty.Content)
	}
	calls := OutMessage{ToolCalls: make([]OutToolCall, 1)}
	calls.SetText([]byte("ignored"), false)
	if calls.Content != nil {
		t.Errorf("calls alone: content %q, want nil", *calls.Content)
	}
	calls.SetText([]byte("both"), true)
	if calls.Content == nil || *calls.Content != "both" {
		t.Errorf("calls and text: content %v, want both", calls.Content)
	}
}
