package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// The Anthropic Messages request, in the order its fields are written.
type messagesRequest struct {
	Model         string           `json:"model"`
	MaxTokens     int              `json:"max_tokens"`
	System        string           `json:"system,omitempty"`
	Messages      []message        `json:"messages"`
	Tools         []tool           `json:"tools,omitempty"`
	ToolChoice    *toolChoice      `json:"tool_choice,omitempty"`
	Temperature   *float64         `json:"temperature,omitempty"`
	TopP          *float64         `json:"top_p,omitempty"`
	TopK          *int             `json:"top_k,omitempty"`
	StopSequences []string         `json:"stop_sequences,omitempty"`
	Stream        bool             `json:"stream,omitempty"`
	Metadata      *requestMetadata `json:"metadata,omitempty"`
	Thinking      *thinking        `json:"thinking,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is any content block of a request: text, image, document,
// tool_use or tool_result.
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *source         `json:"source,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []block         `json:"content,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type requestMetadata struct {
	UserID string `json:"user_id"`
}

// request is a translated chat request.
type request struct {
	body         []byte // the Anthropic Messages body
	model        string
	stream       bool
	includeUsage bool // stream_options.include_usage
}

// translateRequest turns an OpenAI chat completion body into an Anthropic
// Messages body. maxTokens gives the default max_tokens for a model when
// the request has none. The error, if any, is a *RequestError.
func translateRequest(body []byte, maxTokens func(model string) int) (request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return request{}, &RequestError{Code: CodeInvalidValue, Message: "the request body is not a JSON object: " + err.Error()}
	}
	t := translator{fields: fields}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		if isNull(raw) {
			continue
		}
		if err := t.field(name, raw); err != nil {
			return request{}, err
		}
	}
	if err := t.finish(maxTokens); err != nil {
		return request{}, err
	}
	out, err := json.Marshal(&t.out)
	if err != nil {
		return request{}, &RequestError{Code: CodeInvalidValue, Message: err.Error()}
	}
	return request{body: out, model: t.out.Model, stream: t.out.Stream, includeUsage: t.includeUsage}, nil
}

// translator holds a request being translated.
type translator struct {
	fields            map[string]json.RawMessage
	out               messagesRequest
	maxTokens         *int
	maxCompletion     *int
	includeUsage      bool
	parallelToolCalls *bool
	userID            string
	safetyID          string
	toolChoice        json.RawMessage
	effort            string // reasoning_effort
}

// field translates, checks or ignores one top-level field with a non-null
// value. The table in doc.go lists them.
func (t *translator) field(name string, raw json.RawMessage) error {
	switch name {
	case "model":
		return decode(name, raw, &t.out.Model)
	case "messages":
		return t.messages(raw)
	case "max_tokens":
		return decode(name, raw, &t.maxTokens)
	case "max_completion_tokens":
		return decode(name, raw, &t.maxCompletion)
	case "temperature":
		if err := decode(name, raw, &t.out.Temperature); err != nil {
			return err
		}
		if v := *t.out.Temperature; v < 0 || v > 1 {
			return badValue(name, CodeUnsupportedValue, "Anthropic accepts a temperature from 0 to 1, got "+string(raw))
		}
	case "top_p":
		return decode(name, raw, &t.out.TopP)
	case "top_k":
		return decode(name, raw, &t.out.TopK)
	case "stop":
		return t.stop(raw)
	case "stream":
		return decode(name, raw, &t.out.Stream)
	case "stream_options":
		var o struct {
			IncludeUsage bool `json:"include_usage"`
		}
		if err := decode(name, raw, &o); err != nil {
			return err
		}
		t.includeUsage = o.IncludeUsage
	case "tools":
		return t.tools(raw)
	case "tool_choice":
		t.toolChoice = raw
	case "parallel_tool_calls":
		return decode(name, raw, &t.parallelToolCalls)
	case "user":
		return decode(name, raw, &t.userID)
	case "safety_identifier":
		return decode(name, raw, &t.safetyID)
	case "reasoning_effort":
		return t.reasoningEffort(raw)
	case "seed", "store", "metadata", "service_tier", "prompt_cache_key",
		"prompt_cache_retention", "prediction", "verbosity":
		// No equivalent, and the answer means the same without them.
	default:
		return refuseField(name, raw)
	}
	return nil
}

// refuseField checks a field with no Anthropic equivalent: its neutral
// values pass, anything else is refused.
func refuseField(name string, raw json.RawMessage) error {
	switch name {
	case "n":
		if string(raw) == "1" {
			return nil
		}
		return badValue(name, CodeUnsupportedValue, "Anthropic returns one choice per request; n must be 1")
	case "logprobs":
		if string(raw) == "false" {
			return nil
		}
		return unsupported(name, "Anthropic does not return log probabilities")
	case "top_logprobs":
		if string(raw) == "0" {
			return nil
		}
		return unsupported(name, "Anthropic does not return log probabilities")
	case "frequency_penalty", "presence_penalty":
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == 0 {
			return nil
		}
		return unsupported(name, "Anthropic has no repetition penalties; omit it or send 0")
	case "logit_bias":
		if isEmptyObject(raw) {
			return nil
		}
		return unsupported(name, "Anthropic has no token biases")
	case "response_format":
		var f struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &f) == nil && f.Type == "text" {
			return nil
		}
		return badValue(name, CodeUnsupportedValue, "Anthropic targets answer in text only; "+
			"json_object and json_schema formats are not translated")
	case "modalities":
		var m []string
		if json.Unmarshal(raw, &m) == nil && len(m) == 1 && m[0] == "text" {
			return nil
		}
		return badValue(name, CodeUnsupportedValue, `Anthropic targets support only ["text"]`)
	case "audio":
		return unsupported(name, "Anthropic targets do not produce audio")
	case "functions", "function_call":
		return unsupported(name, "the legacy functions API is not translated; use tools and tool_choice")
	case "web_search_options":
		return unsupported(name, "web search is not translated")
	}
	return unsupported(name, "")
}

// finish applies the fields that depend on others.
func (t *translator) finish(maxTokens func(string) int) error {
	switch {
	case t.maxCompletion != nil:
		t.out.MaxTokens = *t.maxCompletion
		if *t.maxCompletion < 1 {
			return badValue("max_completion_tokens", CodeInvalidValue, "must be at least 1")
		}
	case t.maxTokens != nil:
		t.out.MaxTokens = *t.maxTokens
		if *t.maxTokens < 1 {
			return badValue("max_tokens", CodeInvalidValue, "must be at least 1")
		}
	default:
		t.out.MaxTokens = maxTokens(t.out.Model)
	}
	if err := t.choice(); err != nil {
		return err
	}
	t.think(t.maxCompletion == nil && t.maxTokens == nil)
	switch {
	case t.safetyID != "":
		t.out.Metadata = &requestMetadata{UserID: t.safetyID}
	case t.userID != "":
		t.out.Metadata = &requestMetadata{UserID: t.userID}
	}
	if len(t.out.Messages) == 0 && t.fields["messages"] == nil {
		return badValue("messages", CodeInvalidValue, "is required")
	}
	return nil
}

func (t *translator) stop(raw json.RawMessage) error {
	if raw[0] == '"' {
		var one string
		if err := decode("stop", raw, &one); err != nil {
			return err
		}
		if one != "" {
			t.out.StopSequences = []string{one}
		}
		return nil
	}
	var many []string
	if err := decode("stop", raw, &many); err != nil {
		return err
	}
	for _, s := range many {
		if s != "" {
			t.out.StopSequences = append(t.out.StopSequences, s)
		}
	}
	return nil
}

func (t *translator) tools(raw json.RawMessage) error {
	var tools []chatwire.Tool
	if err := decode("tools", raw, &tools); err != nil {
		return err
	}
	for i, tl := range tools {
		if tl.Type != "function" {
			return badValue(path("tools", i, "type"), CodeUnsupportedValue, "only function tools are translated, got "+strconv.Quote(tl.Type))
		}
		schema := tl.Function.Parameters
		if len(schema) == 0 || isNull(schema) {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		t.out.Tools = append(t.out.Tools, tool{
			Name: tl.Function.Name, Description: tl.Function.Description,
			InputSchema: schema, CacheControl: tl.CacheControl,
		})
	}
	return nil
}

// choice translates tool_choice and parallel_tool_calls.
func (t *translator) choice() error {
	var c *toolChoice
	if raw := t.toolChoice; raw != nil {
		if raw[0] == '"' {
			var mode string
			if err := decode("tool_choice", raw, &mode); err != nil {
				return err
			}
			switch mode {
			case "auto":
				c = &toolChoice{Type: "auto"}
			case "none":
				c = &toolChoice{Type: "none"}
			case "required":
				c = &toolChoice{Type: "any"}
			default:
				return badValue("tool_choice", CodeInvalidValue, "unknown mode "+strconv.Quote(mode))
			}
		} else {
			var named struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := decode("tool_choice", raw, &named); err != nil {
				return err
			}
			if named.Type != "function" || named.Function.Name == "" {
				return badValue("tool_choice", CodeUnsupportedValue, "only auto, none, required and a named function are translated")
			}
			c = &toolChoice{Type: "tool", Name: named.Function.Name}
		}
	}
	if len(t.out.Tools) == 0 {
		if c != nil && c.Type != "auto" && c.Type != "none" {
			return badValue("tool_choice", CodeInvalidValue, "needs tools")
		}
		return nil // without tools, auto and none mean what no choice means
	}
	if t.parallelToolCalls != nil && !*t.parallelToolCalls {
		if c == nil {
			c = &toolChoice{Type: "auto"}
		}
		c.DisableParallelToolUse = c.Type != "none"
	}
	t.out.ToolChoice = c
	return nil
}

// decode unmarshals a field's value, naming the field on failure.
func decode(field string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return badValue(field, CodeInvalidValue, jsonProblem(err))
	}
	return nil
}

// jsonProblem says what is wrong with a JSON value in JSON's words, never
// Go's ("want an array, got a number", not "[]map[string]interface {}").
func jsonProblem(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		want := chatwire.JSONKind(ute.Type)
		if lit, ok := strings.CutPrefix(ute.Value, "number "); ok && (want == "an integer" || want == "a number") {
			return numberProblem(want, lit)
		}
		return "want " + want + ", got " + article(ute.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "not valid JSON at offset " + strconv.FormatInt(se.Offset, 10)
	}
	return "not valid JSON"
}

// numberProblem says what is wrong with the number lit where want (an
// integer or a number) was wanted: a fraction, or out of range.
func numberProblem(want, lit string) string {
	f, err := strconv.ParseFloat(lit, 64)
	if want == "an integer" && err == nil && f != math.Trunc(f) {
		return "want an integer, got " + clipText(lit)
	}
	return "the number " + clipText(lit) + " is out of range"
}

// article puts "a" or "an" before encoding/json's name of a JSON value's
// type (string, number, bool, array, object, null).
func article(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	case "null":
		return "null"
	}
	if strings.HasPrefix(v, "number") {
		return "a number"
	}
	return "a " + v
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}

// path builds a field path such as messages[3].content.
func path(parent string, i int, child string) string {
	var b strings.Builder
	b.WriteString(parent)
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(i))
	b.WriteByte(']')
	if child != "" {
		b.WriteByte('.')
		b.WriteString(child)
	}
	return b.String()
}
