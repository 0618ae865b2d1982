package geminiapi

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The members of a CountTokensRequest: AI Studio's contents or
// generateContentRequest, and Vertex's contents with the request's
// systemInstruction, tools and generationConfig beside them.
var countFields = newFields("CountTokensRequest", "model", "contents", "generateContentRequest",
	"systemInstruction", "tools", "toolConfig", "generationConfig")

// CountTokensToChat turns a countTokens body ({"contents": [...]} or
// {"generateContentRequest": {...}}, or Vertex's contents with
// systemInstruction and tools) into a chat body for model whose prompt
// can be counted: the messages and tools as ToChat writes them, with
// max_completion_tokens 1 and nothing of the generation config. Send it,
// and answer with CountTokensFromChat; or estimate from it locally and
// answer with CountTokensResponse. Refusals are *Error as ToChat's.
func CountTokensToChat(model string, body []byte) ([]byte, error) {
	var c converter
	if err := c.count(model, body); err != nil {
		return nil, public(err, "CountTokensRequest")
	}
	return c.b, nil
}

func (c *converter) count(model string, body []byte) error {
	if !validDocument(body) {
		return &fieldError{kind: errSyntax, detail: "The request body must be one JSON object."}
	}
	var top [7][]byte
	if err := eachMember(body, countFields, func(i int, raw []byte) error {
		top[i] = raw
		return nil
	}); err != nil {
		return err
	}
	if gcr := top[2]; gcr != nil {
		if top[1] != nil {
			return rule("", "contents and generate_content_request are mutually exclusive")
		}
		return under(c.request(model, gcr, false, true), "generate_content_request")
	}
	var v [numRequestFields][]byte
	v[rqModel], v[rqContents], v[rqSystem], v[rqTools], v[rqToolConfig] = top[0], top[1], top[3], top[4], top[5]
	return c.fields(model, &v, false, true)
}

// CountTokensResponse returns countTokens' answer for a prompt of total
// tokens: {"totalTokens": total}.
func CountTokensResponse(total int64) []byte {
	return append(strconv.AppendInt([]byte(`{"totalTokens":`), max(total, 0), 10), '}')
}

// CountTokensFromChat returns countTokens' answer from the chat answer
// to a CountTokensToChat body: its usage's prompt_tokens as totalTokens,
// and cached_tokens as cachedContentTokenCount. Errors match ErrBadChat.
func CountTokensFromChat(chat []byte) ([]byte, error) {
	var c struct {
		Usage *chatUsage `json:"usage"`
	}
	if err := json.Unmarshal(chat, &c); err != nil || c.Usage == nil {
		return nil, fmt.Errorf("%w: no usage to count the prompt from", ErrBadChat)
	}
	b := strconv.AppendInt([]byte(`{"totalTokens":`), c.Usage.PromptTokens, 10)
	if d := c.Usage.PromptDetails; d != nil && d.CachedTokens > 0 {
		b = strconv.AppendInt(append(b, `,"cachedContentTokenCount":`...), d.CachedTokens, 10)
	}
	return append(b, '}'), nil
}
