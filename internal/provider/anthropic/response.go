package anthropic

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

// MaxResponseSize bounds a non-stream Anthropic answer read for
// translation: 32 MiB. A larger answer is a 502.
const MaxResponseSize = 32 << 20

// anthropicMessage is an Anthropic Messages answer, as far as it is read.
type anthropicMessage struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Model      string           `json:"model"`
	Content    []anthropicBlock `json:"content"`
	StopReason string           `json:"stop_reason"`
	Usage      anthropicUsage   `json:"usage"`
}

type anthropicBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

var jsonNull = json.RawMessage("null")

// messageResponse replaces a successful Anthropic answer's body with its
// OpenAI translation. An answer that cannot be read as a message becomes a
// 502; a read error is returned.
func messageResponse(resp *http.Response, created int64) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseSize+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("anthropic: reading the answer: %w", err)
	}
	out, err := translateResponse(body, created)
	if err == nil && len(body) > MaxResponseSize {
		err = errors.New("the answer is over " + strconv.Itoa(MaxResponseSize) + " bytes")
	}
	if err != nil {
		bad := errorResponse(resp.Request, http.StatusBadGateway, "server_error", CodeBadUpstreamResponse, "",
			"anthropic: unreadable answer from Anthropic: "+err.Error())
		copyHeaders(bad.Header, resp.Header)
		return bad, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	resp.Header.Del("Content-Encoding")
	return resp, nil
}

// copyHeaders copies the headers of an upstream answer that say who
// answered and what limits apply, leaving framing headers alone.
func copyHeaders(dst, src http.Header) {
	for k, v := range src {
		switch k {
		case "Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding":
			continue
		}
		dst[k] = v
	}
}

// translateResponse turns an Anthropic Messages answer into an OpenAI
// chat.completion.
func translateResponse(body []byte, created int64) ([]byte, error) {
	var m anthropicMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	if m.Type != "message" {
		return nil, errors.New("type is " + strconv.Quote(m.Type) + ", want \"message\"")
	}
	msg := chatwire.OutMessage{Role: "assistant"}
	var text []byte
	hasText := false
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text...)
			hasText = true
		case "thinking":
			msg.ReasoningContent += b.Thinking
		case "tool_use":
			msg.ToolCalls = append(msg.ToolCalls, toolCall(b))
		}
	}
	msg.SetText(text, hasText)
	c := chatwire.Completion[chatwire.Usage]{
		ID: m.ID, Object: "chat.completion", Created: created, Model: m.Model,
		Choices: []chatwire.Choice{{Message: msg, Logprobs: jsonNull, FinishReason: finishReason(m.StopReason)}},
		Usage:   usage(m.Usage),
	}
	return json.Marshal(&c)
}

func toolCall(b anthropicBlock) chatwire.OutToolCall {
	tc := chatwire.OutToolCall{ID: b.ID, Type: "function"}
	tc.Function.Name = b.Name
	tc.Function.Arguments = "{}"
	if len(b.Input) > 0 && !isNull(b.Input) {
		var buf bytes.Buffer
		if json.Compact(&buf, b.Input) == nil {
			tc.Function.Arguments = buf.String()
		}
	}
	return tc
}

// finishReason maps a stop_reason to a finish_reason.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, pause_turn, and any new reason
}

// usage maps Anthropic usage to OpenAI's: prompt tokens count cache reads
// and writes, which Anthropic counts apart from input_tokens.
func usage(u anthropicUsage) chatwire.Usage {
	var c chatwire.Usage
	c.PromptTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	c.CompletionTokens = u.OutputTokens
	c.TotalTokens = c.PromptTokens + c.CompletionTokens
	c.PromptTokensDetails.CachedTokens = u.CacheReadInputTokens
	return c
}
