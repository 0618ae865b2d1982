package bedrock

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// The Converse request, in the order its fields are written; the field
// names are the API's (and bedrockruntime's serializer's).
type converseRequest struct {
	Messages                     []cvMessage      `json:"messages"`
	System                       []cvText         `json:"system,omitempty"`
	InferenceConfig              *inferenceConfig `json:"inferenceConfig,omitempty"`
	ToolConfig                   *toolConfig      `json:"toolConfig,omitempty"`
	AdditionalModelRequestFields json.RawMessage  `json:"additionalModelRequestFields,omitempty"`
}

type cvText struct {
	Text string `json:"text"`
}

type cvMessage struct {
	Role    string    `json:"role"`
	Content []cvBlock `json:"content"`
}

// cvBlock is a ContentBlock union: exactly one member is set.
type cvBlock struct {
	Text       string        `json:"text,omitempty"`
	Image      *cvMedia      `json:"image,omitempty"`
	Document   *cvMedia      `json:"document,omitempty"`
	ToolUse    *cvToolUse    `json:"toolUse,omitempty"`
	ToolResult *cvToolResult `json:"toolResult,omitempty"`
}

// cvMedia is an ImageBlock or a DocumentBlock (Name is a document's).
type cvMedia struct {
	Format string   `json:"format"`
	Name   string   `json:"name,omitempty"`
	Source cvSource `json:"source"`
}

type cvSource struct {
	Bytes string `json:"bytes"` // base64, as the wire format carries a blob
}

type cvToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type cvToolResult struct {
	ToolUseID string   `json:"toolUseId"`
	Content   []cvText `json:"content"`
}

type inferenceConfig struct {
	MaxTokens     *int     `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

type toolConfig struct {
	Tools      []cvTool        `json:"tools"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
}

type cvTool struct {
	ToolSpec struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		InputSchema struct {
			JSON json.RawMessage `json:"json"`
		} `json:"inputSchema"`
	} `json:"toolSpec"`
}

// converseCall is a translated chat request.
type converseCall struct {
	body         []byte
	stream       bool
	includeUsage bool
}

// converseTranslator holds a request being translated.
type converseTranslator struct {
	model         string
	out           converseRequest
	cfg           inferenceConfig
	maxTokens     *int
	maxCompletion *int
	stream        bool
	includeUsage  bool
	toolChoice    json.RawMessage
	parallel      *bool
	effort        string
	toolBlocks    bool // the conversation has toolUse or toolResult blocks
	sawMessages   bool
}

// translateConverse turns an OpenAI chat body into a Converse body for
// model. The error is a *router.Unservable naming the field.
func translateConverse(body []byte, model string) (converseCall, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return converseCall{}, refuse("messages", CodeInvalidValue, "the request body is not a JSON object")
	}
	t := converseTranslator{model: model}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		if string(raw) == "null" {
			continue
		}
		if err := t.field(name, raw); err != nil {
			return converseCall{}, err
		}
	}
	if err := t.finish(); err != nil {
		return converseCall{}, err
	}
	out, err := json.Marshal(&t.out)
	if err != nil {
		return converseCall{}, refuse("messages", CodeInvalidValue, "cannot be written as JSON")
	}
	return converseCall{body: out, stream: t.stream, includeUsage: t.includeUsage}, nil
}

// field translates, checks or ignores one top-level field with a non-null
// value. doc.go lists them.
func (t *converseTranslator) field(name string, raw json.RawMessage) error {
	switch name {
	case "model":
	case "messages":
		t.sawMessages = true
		return t.messages(raw)
	case "max_tokens":
		return decode(name, raw, &t.maxTokens)
	case "max_completion_tokens":
		return decode(name, raw, &t.maxCompletion)
	case "temperature":
		return unitInterval(name, raw, &t.cfg.Temperature)
	case "top_p":
		return unitInterval(name, raw, &t.cfg.TopP)
	case "stop":
		return t.stop(raw)
	case "stream":
		return decode(name, raw, &t.stream)
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
		return decode(name, raw, &t.parallel)
	case "reasoning_effort":
		return decode(name, raw, &t.effort)
	case "seed", "store", "metadata", "service_tier", "prompt_cache_key",
		"prompt_cache_retention", "prediction", "verbosity", "user", "safety_identifier":
		// No equivalent, and the answer means the same without them.
	default:
		return neutralOnly(name, raw)
	}
	return nil
}

// neutralOnly checks a field Converse has no equivalent for: its neutral
// value passes, any other is refused.
func neutralOnly(name string, raw json.RawMessage) error {
	v := string(raw)
	switch name {
	case "n":
		if v == "1" {
			return nil
		}
		return refuse(name, CodeUnsupportedValue, "Bedrock returns one choice per request; n must be 1")
	case "logprobs", "top_logprobs":
		if v == "false" || v == "0" {
			return nil
		}
		return refuse(name, CodeUnsupportedParameter, "Converse does not return log probabilities")
	case "frequency_penalty", "presence_penalty":
		if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
			return nil
		}
		return refuse(name, CodeUnsupportedParameter, "Converse has no repetition penalties; omit it or send 0")
	case "logit_bias":
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil && len(m) == 0 {
			return nil
		}
		return refuse(name, CodeUnsupportedParameter, "Converse has no token biases")
	case "response_format":
		var f struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &f) == nil && f.Type == "text" {
			return nil
		}
		return refuse(name, CodeUnsupportedValue, "Converse targets answer in text only; json_object and json_schema are not translated")
	case "modalities":
		var m []string
		if json.Unmarshal(raw, &m) == nil && len(m) == 1 && m[0] == "text" {
			return nil
		}
		return refuse(name, CodeUnsupportedValue, `Converse targets support only ["text"]`)
	}
	return refuse(name, CodeUnsupportedParameter, "not supported by Bedrock Converse targets")
}

// unitInterval decodes a number that Converse takes from 0 to 1.
func unitInterval(name string, raw json.RawMessage, dst **float64) error {
	if err := decode(name, raw, dst); err != nil {
		return err
	}
	if v := **dst; v < 0 || v > 1 {
		return refuse(name, CodeUnsupportedValue, "Converse takes 0 to 1, got "+clip(string(raw)))
	}
	return nil
}

func (t *converseTranslator) stop(raw json.RawMessage) error {
	var many []string
	if raw[0] == '"' {
		var one string
		if err := decode("stop", raw, &one); err != nil {
			return err
		}
		many = []string{one}
	} else if err := decode("stop", raw, &many); err != nil {
		return err
	}
	for _, s := range many {
		if s != "" {
			t.cfg.StopSequences = append(t.cfg.StopSequences, s)
		}
	}
	return nil
}

func (t *converseTranslator) tools(raw json.RawMessage) error {
	var tools []chatwire.Tool
	if err := decode("tools", raw, &tools); err != nil {
		return err
	}
	if len(tools) == 0 {
		return nil
	}
	t.out.ToolConfig = &toolConfig{Tools: make([]cvTool, len(tools))}
	for i, tl := range tools {
		if tl.Type != "function" {
			return refuse(index("tools", i, "type"), CodeUnsupportedValue, "only function tools are translated")
		}
		if tl.Function.Name == "" {
			return refuse(index("tools", i, "function.name"), CodeInvalidValue, "is required")
		}
		spec := &t.out.ToolConfig.Tools[i].ToolSpec
		spec.Name, spec.Description = tl.Function.Name, tl.Function.Description
		spec.InputSchema.JSON = tl.Function.Parameters
		if len(spec.InputSchema.JSON) == 0 || string(spec.InputSchema.JSON) == "null" {
			spec.InputSchema.JSON = json.RawMessage(`{"type":"object","properties":{}}`)
		}
	}
	return nil
}

// finish applies what depends on several fields.
func (t *converseTranslator) finish() error {
	if !t.sawMessages || len(t.out.Messages) == 0 {
		return refuse("messages", CodeInvalidValue, "at least one user or assistant message is required")
	}
	switch {
	case t.maxCompletion != nil:
		t.cfg.MaxTokens = t.maxCompletion
		if *t.maxCompletion < 1 {
			return refuse("max_completion_tokens", CodeInvalidValue, "must be at least 1")
		}
	case t.maxTokens != nil:
		t.cfg.MaxTokens = t.maxTokens
		if *t.maxTokens < 1 {
			return refuse("max_tokens", CodeInvalidValue, "must be at least 1")
		}
	}
	if t.cfg.MaxTokens != nil || t.cfg.Temperature != nil || t.cfg.TopP != nil || t.cfg.StopSequences != nil {
		t.out.InferenceConfig = &t.cfg
	}
	if err := t.choice(); err != nil {
		return err
	}
	return t.reasoning()
}

// choice translates tool_choice and parallel_tool_calls.
func (t *converseTranslator) choice() error {
	if t.parallel != nil && !*t.parallel && t.out.ToolConfig != nil {
		return refuse("parallel_tool_calls", CodeUnsupportedValue, "Converse cannot forbid parallel tool calls")
	}
	mode, name, err := toolChoiceMode(t.toolChoice)
	if err != nil {
		return err
	}
	tc := t.out.ToolConfig
	switch {
	case tc == nil && (mode == "" || mode == "auto" || mode == "none"):
	case tc == nil:
		return refuse("tool_choice", CodeInvalidValue, "needs tools")
	case mode == "none" && t.toolBlocks:
		return refuse("tool_choice", CodeUnsupportedValue, `Converse has no "none" choice for a conversation that holds tool calls`)
	case mode == "none":
		t.out.ToolConfig = nil // no tools offered: the model cannot call one
	case mode == "auto":
		tc.ToolChoice = json.RawMessage(`{"auto":{}}`)
	case mode == "required":
		tc.ToolChoice = json.RawMessage(`{"any":{}}`)
	case mode == "function":
		b, _ := json.Marshal(map[string]map[string]string{"tool": {"name": name}})
		tc.ToolChoice = b
	}
	if t.toolBlocks && t.out.ToolConfig == nil {
		return refuse("tools", CodeInvalidValue, "Converse needs the tools declared when the conversation holds tool calls or results")
	}
	return nil
}

// toolChoiceMode reads tool_choice: "", auto, none, required, or function
// with its name.
func toolChoiceMode(raw json.RawMessage) (mode, name string, err error) {
	if raw == nil {
		return "", "", nil
	}
	if raw[0] == '"' {
		if err := decode("tool_choice", raw, &mode); err != nil {
			return "", "", err
		}
		switch mode {
		case "auto", "none", "required":
			return mode, "", nil
		}
		return "", "", refuse("tool_choice", CodeInvalidValue, "unknown mode "+strconv.Quote(clip(mode)))
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := decode("tool_choice", raw, &named); err != nil {
		return "", "", err
	}
	if named.Type != "function" || named.Function.Name == "" {
		return "", "", refuse("tool_choice", CodeUnsupportedValue, "only auto, none, required and a named function are translated")
	}
	return "function", named.Function.Name, nil
}

// reasoning translates reasoning_effort for the models whose request has
// an equivalent (additionalModelRequestFields), and refuses it for others.
func (t *converseTranslator) reasoning() error {
	switch t.effort {
	case "", "none":
		return nil
	case "low", "medium", "high":
	default:
		return refuse("reasoning_effort", CodeUnsupportedValue, "Bedrock models take low, medium or high")
	}
	switch {
	case strings.Contains(t.model, "openai.gpt-oss"):
		t.out.AdditionalModelRequestFields = json.RawMessage(`{"reasoning_effort":"` + t.effort + `"}`)
	case strings.Contains(t.model, "amazon.nova-2"):
		t.out.AdditionalModelRequestFields = json.RawMessage(`{"reasoningConfig":{"type":"enabled","maxReasoningEffort":"` + t.effort + `"}}`)
	default:
		return refuse("reasoning_effort", CodeUnsupportedParameter, "this Bedrock model takes no reasoning effort")
	}
	return nil
}

// decode unmarshals a field's value, naming the field on failure.
func decode(field string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return refuse(field, CodeInvalidValue, "not the JSON type this field takes")
	}
	return nil
}

// index builds a field path such as messages[3].content.
func index(parent string, i int, child string) string {
	s := parent + "[" + strconv.Itoa(i) + "]"
	if child != "" {
		s += "." + child
	}
	return s
}
