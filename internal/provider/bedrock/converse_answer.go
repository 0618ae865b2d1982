package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// converseOutput is a Converse answer, as far as it is read.
type converseOutput struct {
	Output struct {
		Message *struct {
			Role    string        `json:"role"`
			Content []outputBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string        `json:"stopReason"`
	Usage      converseUsage `json:"usage"`
}

type outputBlock struct {
	Text    *string `json:"text"`
	ToolUse *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text string `json:"text"`
		} `json:"reasoningText"`
	} `json:"reasoningContent"`
}

type converseUsage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens"`
}

// chatCompletion and chatUsage are the OpenAI answer this package writes.
type (
	chatCompletion = chatwire.Completion[chatwire.Usage]
	chatUsage      = chatwire.Usage
)

// converseAnswer replaces a successful Converse answer's body with its
// chat.completion translation. An answer that cannot be read becomes a
// 502 in OpenAI's error shape; the error is a read error of the body.
func converseAnswer(resp *http.Response, model string, created int64) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseSize+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("bedrock: reading the answer: %w", err)
	}
	var out []byte
	if len(body) > MaxResponseSize {
		err = errors.New("the answer is over " + strconv.Itoa(MaxResponseSize) + " bytes")
	} else {
		out, err = translateAnswer(body, completionID(resp.Header), model, created)
	}
	if err != nil {
		return errorResponse(resp, http.StatusBadGateway, CodeBadUpstreamResponse,
			"bedrock: unreadable answer from Bedrock: "+err.Error()), nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	resp.Header.Del("Content-Encoding")
	return resp, nil
}

// completionID names an answer after Bedrock's request ID.
func completionID(h http.Header) string {
	id := h.Get("X-Amzn-Requestid")
	if id == "" || len(id) > 64 {
		return "chatcmpl-bedrock"
	}
	return "chatcmpl-" + id
}

// translateAnswer turns a Converse answer into a chat.completion.
func translateAnswer(body []byte, id, model string, created int64) ([]byte, error) {
	var a converseOutput
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, errors.New("not a Converse answer")
	}
	if a.Output.Message == nil {
		return nil, errors.New("a Converse answer without output.message")
	}
	msg := chatwire.OutMessage{Role: "assistant"}
	var text []byte
	hasText := false
	for _, b := range a.Output.Message.Content {
		switch {
		case b.Text != nil:
			text, hasText = append(text, *b.Text...), true
		case b.ToolUse != nil:
			c := chatwire.OutToolCall{ID: b.ToolUse.ToolUseID, Type: "function"}
			c.Function.Name = b.ToolUse.Name
			c.Function.Arguments = string(compactOr(b.ToolUse.Input, "{}"))
			msg.ToolCalls = append(msg.ToolCalls, c)
		case b.ReasoningContent != nil && b.ReasoningContent.ReasoningText != nil:
			msg.ReasoningContent += b.ReasoningContent.ReasoningText.Text
		}
	}
	msg.SetText(text, hasText)
	out := chatCompletion{
		ID: id, Object: "chat.completion", Created: created, Model: model,
		Choices: []chatwire.Choice{{Message: msg, Logprobs: json.RawMessage("null"), FinishReason: finishReason(a.StopReason)}},
		Usage:   usage(a.Usage),
	}
	return json.Marshal(&out)
}

// compactOr is raw compacted, or def when raw is empty or null.
func compactOr(raw json.RawMessage, def string) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte(def)
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// finishReason maps Converse's stopReason to OpenAI's finish_reason.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, and any added later
}

// usage maps Converse's usage: prompt tokens count the cached ones read
// and written, as OpenAI's do.
func usage(u converseUsage) chatUsage {
	var c chatUsage
	c.PromptTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens
	c.CompletionTokens = u.OutputTokens
	c.TotalTokens = max(u.TotalTokens, c.PromptTokens+c.CompletionTokens)
	c.PromptTokensDetails.CachedTokens = u.CacheReadInputTokens
	return c
}
