package chatwire

import "encoding/json"

// Completion is OpenAI's chat.completion answer, in the order its fields
// are written. U is the usage object: Usage, or a type that embeds it and
// adds what one provider reports.
type Completion[U any] struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   U        `json:"usage"`
}

// Choice is one choice of a Completion; Logprobs is written as given
// (the translators write null).
type Choice struct {
	Index        int             `json:"index"`
	Message      OutMessage      `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

// OutMessage is the assistant message of a Choice. Content and Refusal
// are written as null when nil; ReasoningContent and ToolCalls are left
// out when empty.
type OutMessage struct {
	Role             string        `json:"role"`
	Content          *string       `json:"content"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []OutToolCall `json:"tool_calls,omitempty"`
	Refusal          *string       `json:"refusal"`
}

// OutToolCall is a function call of an OutMessage. ExtraContent, left out
// when nil, carries Gemini's thought signature.
type OutToolCall struct {
	ID           string        `json:"id"`
	Type         string        `json:"type"`
	Function     Function      `json:"function"`
	ExtraContent *ExtraContent `json:"extra_content,omitempty"`
}

// Function is a tool call's function: its name and its arguments, a JSON
// object in a string.
type Function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ExtraContent is where a tool call carries Gemini's thought signature,
// as Gemini's own OpenAI endpoint writes it; a client that sends the call
// back with it keeps the model's reasoning valid.
type ExtraContent struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature"`
	} `json:"google"`
}

// Usage is a Completion's token counts.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// SetText sets m's content to text when the answer had text (hasText) or
// no tool calls; an answer of tool calls alone has null content.
func (m *OutMessage) SetText(text []byte, hasText bool) {
	if hasText || len(m.ToolCalls) == 0 {
		s := string(text)
		m.Content = &s
	}
}
