package gemini

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

// MaxResponseSize bounds a non-stream Gemini answer read for translation:
// 32 MiB. A larger answer is a 502.
const MaxResponseSize = 32 << 20

// maxAnswer is MaxResponseSize; tests lower it.
var maxAnswer = MaxResponseSize

// geminiResponse is a GenerateContentResponse (or one streamed chunk of
// one), as far as it is read.
type geminiResponse struct {
	Candidates     []candidate     `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	ModelVersion   string          `json:"modelVersion"`
	ResponseID     string          `json:"responseId"`
	Error          *googleError    `json:"error"`
}

type candidate struct {
	Content struct {
		Parts []answerPart `json:"parts"`
	} `json:"content"`
	FinishReason  string `json:"finishReason"`
	FinishMessage string `json:"finishMessage"`
	Index         int    `json:"index"`
}

type answerPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

type promptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
}

// googleError is Google's error object: {"code","message","status"}.
type googleError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// chatCompletion is the OpenAI answer this package writes, whose usage
// also counts reasoning tokens.
type chatCompletion = chatwire.Completion[chatUsage]

// chatUsage is OpenAI's usage with the reasoning tokens Gemini reports.
type chatUsage struct {
	chatwire.Usage
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

var jsonNull = json.RawMessage("null")

// ChatAnswer replaces a successful (2xx) GenerateContentResponse's body
// with its OpenAI chat.completion translation; model names the answer when
// Gemini's does not (modelVersion), created is its "created" time (Unix
// seconds). An answer that cannot be read becomes a 502 in OpenAI's error
// shape, code bad_upstream_response; the error is a read error of the
// body.
func ChatAnswer(resp *http.Response, model string, created int64) (*http.Response, error) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxAnswer)+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("gemini: reading the answer: %w", err)
	}
	var out []byte
	if len(body) > maxAnswer {
		err = errors.New("the answer is over " + strconv.Itoa(maxAnswer) + " bytes")
	} else {
		out, err = translateResponse(body, model, created)
	}
	if err != nil {
		bad := errorResponse(resp.Request, http.StatusBadGateway, "server_error", CodeBadUpstreamResponse,
			"gemini: unreadable answer from Gemini: "+err.Error())
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

// translateResponse turns a GenerateContentResponse into a chat.completion.
func translateResponse(body []byte, model string, created int64) ([]byte, error) {
	var r geminiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errors.New("not a GenerateContentResponse: " + jsonProblem(err))
	}
	if r.Error != nil {
		return nil, errors.New("an error object in a successful answer: " + clip(r.Error.Status))
	}
	c := chatCompletion{
		ID: completionID(r.ResponseID), Object: "chat.completion", Created: created,
		Model: answerModel(r.ModelVersion, model), Usage: usage(r.UsageMetadata),
	}
	if len(r.Candidates) == 0 {
		if r.PromptFeedback == nil || r.PromptFeedback.BlockReason == "" {
			return nil, errors.New("no candidates and no block reason")
		}
		why := blockedMessage(r.PromptFeedback)
		c.Choices = []chatwire.Choice{{Message: chatwire.OutMessage{Role: "assistant", Content: &why, Refusal: &why},
			Logprobs: jsonNull, FinishReason: "content_filter"}}
		return json.Marshal(&c)
	}
	seen := 0
	for i := range r.Candidates {
		cand := &r.Candidates[i]
		if cand.Index < 0 || cand.Index >= MaxCandidates || seen&(1<<cand.Index) != 0 {
			return nil, errors.New("candidate index " + strconv.Itoa(cand.Index) + " is out of range or repeated")
		}
		seen |= 1 << cand.Index
		c.Choices = append(c.Choices, choice(cand, r.ResponseID))
	}
	return json.Marshal(&c)
}

func choice(cand *candidate, responseID string) chatwire.Choice {
	msg := chatwire.OutMessage{Role: "assistant"}
	var text []byte
	hasText := false
	for _, p := range cand.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			tc := chatwire.OutToolCall{ID: callID(responseID, cand.Index, len(msg.ToolCalls)), Type: "function"}
			tc.Function.Name = p.FunctionCall.Name
			tc.Function.Arguments = arguments(p.FunctionCall.Args)
			if p.ThoughtSignature != "" {
				tc.ExtraContent = &chatwire.ExtraContent{}
				tc.ExtraContent.Google.ThoughtSignature = p.ThoughtSignature
			}
			msg.ToolCalls = append(msg.ToolCalls, tc)
		case p.Thought:
			msg.ReasoningContent += p.Text
		default:
			text = append(text, p.Text...)
			hasText = hasText || p.Text != ""
		}
	}
	msg.SetText(text, hasText)
	return chatwire.Choice{Index: cand.Index, Message: msg, Logprobs: jsonNull,
		FinishReason: finishReason(cand.FinishReason, len(msg.ToolCalls) > 0)}
}

// arguments is a function call's args as OpenAI's arguments string: the
// compact JSON object, "{}" when there are none.
func arguments(args json.RawMessage) string {
	if len(args) == 0 || isNull(args) {
		return "{}"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, args) != nil {
		return "{}"
	}
	return buf.String()
}

// finishReason maps a Gemini finishReason to a finish_reason; calls says
// the candidate called functions.
func finishReason(reason string, calls bool) string {
	switch reason {
	case "STOP", "":
		if calls {
			return "tool_calls"
		}
		return "stop"
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
		"IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "LANGUAGE":
		return "content_filter"
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS":
		return "stop"
	}
	if calls {
		return "tool_calls"
	}
	return "stop" // OTHER, FINISH_REASON_UNSPECIFIED and any new reason
}

// blockedMessage says why Gemini refused the prompt.
func blockedMessage(f *promptFeedback) string {
	msg := "Gemini blocked the prompt (" + clip(f.BlockReason) + ")"
	if f.BlockReasonMessage != "" {
		msg += ": " + clipText(f.BlockReasonMessage)
	}
	return msg
}

// usage maps usageMetadata to OpenAI's usage: thoughts count as completion
// tokens and as reasoning tokens; tool-use prompt tokens count as prompt
// tokens, as Gemini bills them.
func usage(u *usageMetadata) chatUsage {
	var c chatUsage
	if u == nil {
		return c
	}
	c.PromptTokens = u.PromptTokenCount + u.ToolUsePromptTokenCount
	c.CompletionTokens = u.CandidatesTokenCount + u.ThoughtsTokenCount
	c.TotalTokens = c.PromptTokens + c.CompletionTokens
	c.PromptTokensDetails.CachedTokens = u.CachedContentTokenCount
	c.CompletionTokensDetails.ReasoningTokens = u.ThoughtsTokenCount
	return c
}

// maxIDLen bounds the response ID and model name repeated in every chunk
// and tool call ID.
const maxIDLen = 64

func clip(s string) string {
	if len(s) > maxIDLen {
		return s[:maxIDLen]
	}
	return s
}

// clipText bounds a message of the upstream's quoted in an answer.
func clipText(s string) string {
	if len(s) > 1024 {
		return s[:1024]
	}
	return s
}

func completionID(responseID string) string {
	if responseID == "" {
		return "chatcmpl-gemini"
	}
	return "chatcmpl-" + clip(responseID)
}

func answerModel(version, model string) string {
	if version != "" {
		return clip(version)
	}
	return clip(model)
}

// callID is the ID of a function call: call_<index>, or for a candidate
// other than the first call_<candidate>_<index>, after the answer's ID when
// it has one, so the calls of one conversation's turns differ.
func callID(responseID string, cand, n int) string {
	b := make([]byte, 0, 16+len(responseID))
	b = append(b, "call_"...)
	if responseID != "" {
		b = append(b, clip(responseID)...)
		b = append(b, '_')
	}
	if cand > 0 {
		b = strconv.AppendInt(b, int64(cand), 10)
		b = append(b, '_')
	}
	b = strconv.AppendInt(b, int64(n), 10)
	return string(b)
}
