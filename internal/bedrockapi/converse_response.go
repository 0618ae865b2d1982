package bedrockapi

import (
	"encoding/json"
	"time"
)

// chatCompletion is the part of an OpenAI chat.completion that a Converse
// response carries.
type chatCompletion struct {
	Choices []struct {
		Message struct {
			Content          *string `json:"content"`
			Refusal          *string `json:"refusal"`
			ReasoningContent string  `json:"reasoning_content"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
}

// chatUsage is OpenAI's usage object.
type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// converseResponse is Bedrock's Converse answer.
type converseResponse struct {
	Output struct {
		Message struct {
			Role    string         `json:"role"`
			Content []contentBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string     `json:"stopReason"`
	Usage      tokenUsage `json:"usage"`
	Metrics    metrics    `json:"metrics"`
}

// contentBlock is one block of a Converse answer: one member is set.
type contentBlock struct {
	Text             *string        `json:"text,omitempty"`
	ToolUse          *toolUseBlock  `json:"toolUse,omitempty"`
	ReasoningContent *reasoningText `json:"reasoningContent,omitempty"`
}

type toolUseBlock struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type reasoningText struct {
	ReasoningText struct {
		Text string `json:"text"`
	} `json:"reasoningText"`
}

// tokenUsage is Bedrock's usage: inputTokens are the prompt tokens not
// read from the cache, totalTokens all of them plus the output.
type tokenUsage struct {
	InputTokens          int64 `json:"inputTokens"`
	OutputTokens         int64 `json:"outputTokens"`
	TotalTokens          int64 `json:"totalTokens"`
	CacheReadInputTokens int64 `json:"cacheReadInputTokens,omitempty"`
}

type metrics struct {
	LatencyMs int64 `json:"latencyMs"`
}

// usage translates OpenAI's usage; nil gives zeros.
func (u *chatUsage) usage() tokenUsage {
	if u == nil {
		return tokenUsage{}
	}
	var cached int64
	if u.PromptTokensDetails != nil {
		cached = min(max(u.PromptTokensDetails.CachedTokens, 0), u.PromptTokens)
	}
	return tokenUsage{
		InputTokens:          u.PromptTokens - cached,
		OutputTokens:         u.CompletionTokens,
		TotalTokens:          u.PromptTokens + u.CompletionTokens,
		CacheReadInputTokens: cached,
	}
}

// ChatToConverse turns an OpenAI chat.completion into a Converse response:
// output.message, stopReason, usage and metrics.latencyMs (0; see
// ChatToConverseLatency). An answer that cannot be read is refused with an
// *Error, an InternalServerException.
func ChatToConverse(chat []byte) ([]byte, error) {
	return ChatToConverseLatency(chat, 0)
}

// ChatToConverseLatency is ChatToConverse with metrics.latencyMs set to
// latency, in whole milliseconds.
func ChatToConverseLatency(chat []byte, latency time.Duration) ([]byte, error) {
	var c chatCompletion
	if err := json.Unmarshal(chat, &c); err != nil {
		return nil, internal("the model's answer is not a chat completion")
	}
	if len(c.Choices) == 0 {
		return nil, internal("the model's answer has no choices")
	}
	ch := &c.Choices[0]
	var out converseResponse
	out.Output.Message.Role = "assistant"
	content := make([]contentBlock, 0, 2+len(ch.Message.ToolCalls))
	if r := ch.Message.ReasoningContent; r != "" {
		b := &reasoningText{}
		b.ReasoningText.Text = r
		content = append(content, contentBlock{ReasoningContent: b})
	}
	text := ch.Message.Content
	if text == nil || *text == "" {
		text = ch.Message.Refusal
	}
	if text != nil && *text != "" || len(ch.Message.ToolCalls) == 0 && len(content) == 0 {
		content = append(content, contentBlock{Text: new(deref(text))})
	}
	for _, call := range ch.Message.ToolCalls {
		input, err := toolInput(call.Function.Arguments)
		if err != nil {
			return nil, err
		}
		content = append(content, contentBlock{ToolUse: &toolUseBlock{
			ToolUseID: toolUseID(call.ID), Name: call.Function.Name, Input: input,
		}})
	}
	out.Output.Message.Content = content
	out.StopReason = stopReason(ch.FinishReason, len(ch.Message.ToolCalls) > 0)
	out.Usage = c.Usage.usage()
	out.Metrics.LatencyMs = latency.Milliseconds()
	return marshal(&out)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// toolInput reads a tool call's arguments as its input: "" is {}.
func toolInput(args string) (json.RawMessage, error) {
	if args == "" {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid([]byte(args)) {
		return nil, internal("the model's tool call arguments are not JSON")
	}
	return json.RawMessage(args), nil
}

// toolUseID returns a chat tool call id as a Bedrock toolUseId: bytes
// outside [a-zA-Z0-9_-] become "_", and a missing id a fixed one.
func toolUseID(id string) string {
	if validName(id) {
		return id
	}
	if id == "" {
		return "tooluse_0"
	}
	b := []byte(id[:min(len(id), 64)])
	for i, c := range b {
		if !validName(string(c)) {
			b[i] = '_'
		}
	}
	return string(b)
}

// stopReason maps a chat finish_reason to Converse's stopReason.
func stopReason(finish string, calls bool) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "content_filtered"
	case "stop_sequence":
		return "stop_sequence"
	}
	if calls {
		return "tool_use"
	}
	return "end_turn"
}
