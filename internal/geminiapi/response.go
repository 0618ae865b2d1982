package geminiapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// ErrBadChat is matched by errors.Is for a chat answer FromChat cannot
// read: not a chat.completion, or a tool call whose arguments are not a
// JSON object. The upstream is at fault: answer 502.
var ErrBadChat = errors.New("geminiapi: the chat answer cannot be translated")

// chatCompletion is an OpenAI chat.completion, as far as it is read.
type chatCompletion struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage"`
}

type chatChoice struct {
	Index   int `json:"index"`
	Message struct {
		Content          *string        `json:"content"`
		Refusal          string         `json:"refusal"`
		ReasoningContent string         `json:"reasoning_content"`
		Reasoning        string         `json:"reasoning"`
		ToolCalls        []chatToolCall `json:"tool_calls"`
	} `json:"message"`
	FinishReason string `json:"finish_reason"`
}

type chatToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatUsage is a chat answer's usage.
type chatUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	PromptDetails    *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// FromChat turns an OpenAI chat.completion into a GenerateContentResponse:
// each choice a candidate (candidates[i].content.parts, role model, its
// finishReason and index), usageMetadata, modelVersion (model, or the
// chat's own model when empty) and responseId (the chat's id). A choice's
// parts are its reasoning as thought parts, its content (and refusal) as
// text, its tool calls as functionCall parts with their ids. Errors match
// ErrBadChat.
func FromChat(chat []byte, model string) ([]byte, error) {
	return fromChat(chat, model, Options{})
}

func fromChat(chat []byte, model string, o Options) ([]byte, error) {
	var c chatCompletion
	if err := json.Unmarshal(chat, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadChat, err)
	}
	if model == "" {
		model = c.Model
	}
	b := make([]byte, 0, len(chat)+128)
	b = append(b, `{"candidates":[`...)
	for i := range c.Choices {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendCandidate(b, &c.Choices[i], o); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if c.Usage != nil {
		b = appendUsage(append(b, `,"usageMetadata":`...), c.Usage)
	}
	return appendIdentity(b, model, c.ID), nil
}

// appendCandidate appends the choice ch as a Candidate.
func appendCandidate(b []byte, ch *chatChoice, o Options) ([]byte, error) {
	m := &ch.Message
	b = append(b, `{"content":{"parts":[`...)
	n := 0
	if r := reasoning(m.ReasoningContent, m.Reasoning); r != "" && !o.OmitThoughts {
		b = appendAnswerText(b, &n, r, true)
	}
	if m.Content != nil && *m.Content != "" {
		b = appendAnswerText(b, &n, *m.Content, false)
	}
	if m.Refusal != "" {
		b = appendAnswerText(b, &n, m.Refusal, false)
	}
	for _, tc := range m.ToolCalls {
		var err error
		if b, err = appendFunctionCall(b, &n, tc.ID, tc.Function.Name, tc.Function.Arguments); err != nil {
			return nil, err
		}
	}
	b = append(b, `],"role":"model"}`...)
	if fr := finishReason(ch.FinishReason); fr != "" {
		b = append(b, `,"finishReason":"`...)
		b = append(append(b, fr...), '"')
	}
	b = strconv.AppendInt(append(b, `,"index":`...), int64(ch.Index), 10)
	return append(b, '}'), nil
}

// reasoning returns the reasoning of a message, as DeepSeek and vLLM
// (reasoning_content) or OpenRouter (reasoning) name it.
func reasoning(content, other string) string {
	if content != "" {
		return content
	}
	return other
}

// appendAnswerText appends a text part after n parts and counts it.
func appendAnswerText(b []byte, n *int, text string, thought bool) []byte {
	if *n > 0 {
		b = append(b, ',')
	}
	*n++
	b = jsontext.AppendString(append(b, `{"text":`...), text)
	if thought {
		b = append(b, `,"thought":true`...)
	}
	return append(b, '}')
}

// appendFunctionCall appends a functionCall part after n parts and
// counts it; args must be a JSON object or empty.
func appendFunctionCall(b []byte, n *int, id, name, args string) ([]byte, error) {
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) || firstByte(args) != '{' {
		return nil, fmt.Errorf("%w: the arguments of tool call %q are not a JSON object", ErrBadChat, clip(name))
	}
	if *n > 0 {
		b = append(b, ',')
	}
	*n++
	b = append(b, `{"functionCall":{`...)
	if id != "" {
		b = jsontext.AppendString(append(b, `"id":`...), id)
		b = append(b, ',')
	}
	b = jsontext.AppendString(append(b, `"name":`...), name)
	b = compact(append(b, `,"args":`...), []byte(args))
	return append(b, "}}"...), nil
}

// firstByte returns the first byte of s that is not white space.
func firstByte(s string) byte {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return s[i]
		}
	}
	return 0
}

// finishReason names a chat finish_reason as Gemini does: stop and
// tool_calls are STOP (a function call is not a reason of its own),
// length MAX_TOKENS, content_filter SAFETY; any other is OTHER, none "".
func finishReason(r string) string {
	switch r {
	case "":
		return ""
	case "stop", "tool_calls", "function_call":
		return "STOP"
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return "OTHER"
}

// appendUsage appends the usage u as usageMetadata. Gemini counts the
// thoughts apart from the candidates, where chat counts the reasoning
// among the completion tokens: candidatesTokenCount is completion_tokens
// less reasoning_tokens, and totalTokenCount the sum of all.
func appendUsage(b []byte, u *chatUsage) []byte {
	thoughts, cached := int64(0), int64(0)
	if u.CompletionDetails != nil {
		thoughts = min(max(u.CompletionDetails.ReasoningTokens, 0), u.CompletionTokens)
	}
	if u.PromptDetails != nil {
		cached = u.PromptDetails.CachedTokens
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	b = strconv.AppendInt(append(b, `{"promptTokenCount":`...), u.PromptTokens, 10)
	b = strconv.AppendInt(append(b, `,"candidatesTokenCount":`...), u.CompletionTokens-thoughts, 10)
	b = strconv.AppendInt(append(b, `,"totalTokenCount":`...), total, 10)
	if cached > 0 {
		b = strconv.AppendInt(append(b, `,"cachedContentTokenCount":`...), cached, 10)
	}
	if thoughts > 0 {
		b = strconv.AppendInt(append(b, `,"thoughtsTokenCount":`...), thoughts, 10)
	}
	return append(b, '}')
}

// appendIdentity ends a GenerateContentResponse with its modelVersion
// and responseId.
func appendIdentity(b []byte, model, id string) []byte {
	b = jsontext.AppendString(append(b, `,"modelVersion":`...), model)
	if id != "" {
		b = jsontext.AppendString(append(b, `,"responseId":`...), id)
	}
	return append(b, '}')
}
