package sim

import (
	"encoding/json"
	"strconv"
)

// responseCall is a Responses API call being answered.
type responseCall struct {
	req *responsesRequest // for the fields a response echoes
	// id is the call's number in 16 hex digits; ids are resp_<id>,
	// msg_<id> and fc_<id>_<n>, shaped as OpenAI's (resp_ and hex digits)
	// so that a gateway keeps them as it keeps OpenAI's.
	id      string
	created int64
	answers []answer // one
	prompt  int
}

func (rc *responseCall) answer() *answer { return &rc.answers[0] }

func (rc *responseCall) messageID() string   { return "msg_" + rc.id }
func (rc *responseCall) callID(i int) string { return "fc_" + rc.id + "_" + strconv.Itoa(i) }

// status is the response's status once complete: incomplete when cut at
// max_output_tokens.
func (rc *responseCall) status() string {
	if rc.answer().finish == "length" {
		return "incomplete"
	}
	return "completed"
}

// items returns the complete output: the message, or the function calls.
func (rc *responseCall) items() []any {
	a := rc.answer()
	if a.calls == nil {
		return []any{rc.message(rc.status(), a.content())}
	}
	out := make([]any, len(a.calls))
	for i := range a.calls {
		out[i] = rc.functionCall(i, "completed", a.calls[i].args)
	}
	return out
}

func (rc *responseCall) message(status, text string) messageItem {
	return messageItem{ID: rc.messageID(), Type: "message", Status: status, Role: "assistant",
		Content: []outputText{newOutputText(text)}}
}

func (rc *responseCall) functionCall(i int, status, args string) functionCallItem {
	c := &rc.answer().calls[i]
	return functionCallItem{ID: rc.callID(i), Type: "function_call", Status: status, Arguments: args, CallID: c.id, Name: c.name}
}

// object returns the response with status and output; usage only when
// withUsage (a response in progress has none).
func (rc *responseCall) object(status string, output []any, withUsage bool) responseObject {
	r := rc.req
	o := responseObject{
		ID: "resp_" + rc.id, Object: "response", CreatedAt: rc.created, Status: status,
		Instructions: r.Instructions, MaxOutputTokens: r.MaxOutputTokens, Model: r.Model, Output: output,
		ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls, Temperature: 1, TopP: 1,
		Text: orJSON(r.Text, `{"format":{"type":"text"}}`), ToolChoice: orJSON(r.ToolChoice, `"auto"`),
		Tools: orJSON(r.Tools, `[]`), Truncation: "disabled", Metadata: orJSON(r.Metadata, `{}`),
	}
	if output == nil {
		o.Output = []any{}
	}
	if status == "incomplete" {
		o.IncompleteDetails = &incompleteDetails{Reason: "max_output_tokens"}
	}
	if withUsage {
		n := completionTokens(rc.answers)
		o.Usage = &responseUsage{InputTokens: rc.prompt, OutputTokens: n, TotalTokens: rc.prompt + n}
	}
	return o
}

// orJSON returns raw, or def when raw is absent or null.
func orJSON(raw json.RawMessage, def string) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(def)
	}
	return raw
}

// responseObject is a Responses API response.
type responseObject struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	CreatedAt         int64              `json:"created_at"`
	Status            string             `json:"status"`
	Error             *responseError     `json:"error"`
	IncompleteDetails *incompleteDetails `json:"incomplete_details"`
	Instructions      *string            `json:"instructions"`
	MaxOutputTokens   *int               `json:"max_output_tokens"`
	Model             string             `json:"model"`
	Output            []any              `json:"output"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	Temperature       float64            `json:"temperature"`
	Text              json.RawMessage    `json:"text"`
	ToolChoice        json.RawMessage    `json:"tool_choice"`
	Tools             json.RawMessage    `json:"tools"`
	TopP              float64            `json:"top_p"`
	Truncation        string             `json:"truncation"`
	Usage             *responseUsage     `json:"usage"`
	Metadata          json.RawMessage    `json:"metadata"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string `json:"type"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
	Text        string `json:"text"`
}

func newOutputText(text string) outputText {
	return outputText{Type: "output_text", Annotations: []any{}, Logprobs: []any{}, Text: text}
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}
