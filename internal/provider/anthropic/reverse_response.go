package anthropic

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// chatAnswer is an OpenAI chat.completion, as far as it is read.
type chatAnswer struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []*struct {
		Message struct {
			Content   *string `json:"content"`
			Refusal   *string `json:"refusal"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openAIUsage `json:"usage"`
}

type openAIUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// The Anthropic message answer, in the order its fields are written.
type messagesAnswer struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []answerBlock   `json:"content"`
	StopReason   string          `json:"stop_reason"`
	StopSequence json.RawMessage `json:"stop_sequence"`
	Usage        anthropicUsage  `json:"usage"`
}

type answerBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ToMessagesResponse translates an OpenAI chat.completion body into an
// Anthropic Messages answer. model, if not empty, is the model named in the
// answer (the one the client asked for); otherwise the body's.
//
// Mapping: choices[0].message.content (or refusal) → a text block;
// tool_calls → tool_use blocks (arguments parsed into input; arguments
// that are not a JSON object are an error); finish_reason stop →
// end_turn, length → max_tokens, tool_calls and function_call → tool_use,
// content_filter → refusal; usage prompt_tokens less cached_tokens →
// input_tokens, cached_tokens → cache_read_input_tokens,
// completion_tokens → output_tokens (negative counts as 0, cached_tokens
// at most prompt_tokens).
//
// An answer that cannot be read is an error saying where, in JSON's words
// (`the chat completion field "usage.prompt_tokens": want an integer, got
// 1.5`); so is a tool call that is not a function call.
func ToMessagesResponse(openAIBody []byte, model string) ([]byte, error) {
	var a chatAnswer
	if err := json.Unmarshal(openAIBody, &a); err != nil {
		return nil, answerError(err)
	}
	if len(a.Choices) == 0 || a.Choices[0] == nil {
		return nil, errors.New("anthropic: the chat completion has no choices")
	}
	if model == "" {
		model = a.Model
	}
	ch := a.Choices[0]
	m := messagesAnswer{
		ID: messageID(a.ID), Type: "message", Role: "assistant", Model: model, Content: []answerBlock{},
		StopReason: stopReason(ch.FinishReason), StopSequence: jsonNull, Usage: reverseUsage(a.Usage),
	}
	text := ch.Message.Content
	if (text == nil || *text == "") && ch.Message.Refusal != nil {
		text = ch.Message.Refusal
	}
	if text != nil && *text != "" {
		m.Content = append(m.Content, answerBlock{Type: "text", Text: text})
	}
	for i, tc := range ch.Message.ToolCalls {
		at := "anthropic: the chat completion's " + path("choices[0].message.tool_calls", i, "")
		if tc.Type != "" && tc.Type != "function" {
			return nil, errors.New(at + ".type: " + quoted(tc.Type) + " is not translated")
		}
		input, err := toolInput(tc.Function.Arguments)
		if err != nil {
			return nil, errors.New(at + ".function.arguments " + err.Error())
		}
		m.Content = append(m.Content, answerBlock{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	return json.Marshal(&m)
}

// stopReason maps a finish_reason to a stop_reason.
func stopReason(finish string) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return "end_turn"
}

func reverseUsage(u *openAIUsage) anthropicUsage {
	if u == nil {
		return anthropicUsage{}
	}
	prompt, cached := max(u.PromptTokens, 0), 0
	if u.PromptTokensDetails != nil {
		cached = min(max(u.PromptTokensDetails.CachedTokens, 0), prompt)
	}
	return anthropicUsage{
		InputTokens: prompt - cached, CacheReadInputTokens: cached,
		OutputTokens: max(u.CompletionTokens, 0),
	}
}

// answerError says why an upstream's chat.completion cannot be read, in
// JSON's words: never Go's ("[]struct { … }"), which encoding/json's
// errors hold.
func answerError(err error) error {
	msg := "anthropic: the chat completion "
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		msg += "field " + strconv.Quote(ute.Field) + ": " + jsonProblem(err)
	} else {
		msg += "is not a JSON object: " + jsonProblem(err)
	}
	return errors.New(msg)
}

// messageID makes an Anthropic-looking message ID from an OpenAI one.
func messageID(id string) string {
	if id == "" || strings.HasPrefix(id, "msg_") {
		return id
	}
	return "msg_" + id
}
