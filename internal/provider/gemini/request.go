package gemini

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// maxStops is the most stop sequences Gemini takes.
const maxStops = 5

// MaxCandidates is the largest n (candidateCount) Gemini takes.
const MaxCandidates = 8

// The GenerateContentRequest, in the order its fields are written.
type generateRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []toolSet         `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is any part of a request: text, inline data, a file reference, a
// function call or a function response.
type part struct {
	Text             string            `json:"text,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"` // base64, as the data: URL had it
}

type fileData struct {
	MimeType string `json:"mimeType"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	Name     string         `json:"name"`
	Response toolOutputWrap `json:"response"`
}

// toolOutputWrap is a tool result's text under the "output" key, as Gemini
// asks function output to be given.
type toolOutputWrap struct {
	Output string `json:"output"`
}

type toolSet struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	CandidateCount     int             `json:"candidateCount,omitempty"`
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int            `json:"topK,omitempty"`
	Seed               *int32          `json:"seed,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// translator holds a request being translated.
type translator struct {
	out          generateRequest
	gen          generationConfig
	model        string
	stream       bool
	includeUsage bool
	maxTokens    *int
	maxCompl     *int
	toolChoice   []byte
	parallel     *bool
	effort       string
	sawMessages  bool
}

// translate turns an OpenAI chat completion body into a Gemini
// GenerateContentRequest. The body's keys are read as encoding/json reads
// them: escapes decoded, exact names, the last of duplicates. The error,
// if any, is a *router.Unservable.
func translate(body []byte) (Translated, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return Translated{}, refusal("", CodeInvalidValue, "the request body is not a JSON object: "+jsonProblem(err))
	}
	var t translator
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		if isNull(raw) {
			continue
		}
		if err := t.field(name, raw); err != nil {
			return Translated{}, err
		}
	}
	if err := t.finish(); err != nil {
		return Translated{}, err
	}
	out, err := json.Marshal(&t.out)
	if err != nil {
		return Translated{}, refusal("", CodeInvalidValue, err.Error())
	}
	return Translated{Body: out, Model: t.model, Stream: t.stream, IncludeUsage: t.includeUsage}, nil
}

// field translates, checks or ignores one top-level field with a non-null
// value. The table in doc.go lists them.
func (t *translator) field(name string, raw json.RawMessage) error {
	g := &t.gen
	switch name {
	case "model":
		return decode(name, raw, &t.model)
	case "messages":
		t.sawMessages = true
		return t.messages(raw)
	case "max_tokens":
		return decode(name, raw, &t.maxTokens)
	case "max_completion_tokens":
		return decode(name, raw, &t.maxCompl)
	case "temperature":
		return number(name, raw, &g.Temperature, 0, 2)
	case "top_p":
		return number(name, raw, &g.TopP, 0, 1)
	case "presence_penalty":
		return number(name, raw, &g.PresencePenalty, -2, 2)
	case "frequency_penalty":
		return number(name, raw, &g.FrequencyPenalty, -2, 2)
	case "top_k":
		return decode(name, raw, &g.TopK)
	case "seed":
		return t.seed(raw)
	case "n":
		return t.candidates(raw)
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
	case "response_format":
		return t.responseFormat(raw)
	case "reasoning_effort":
		return decode(name, raw, &t.effort)
	case "user", "safety_identifier", "store", "metadata", "service_tier",
		"prompt_cache_key", "prompt_cache_retention", "prediction":
		// No equivalent, and the answer means the same without them.
	default:
		return refuseField(name, raw)
	}
	return nil
}

// refuseField checks a field with no Gemini equivalent: its neutral values
// pass, anything else is refused.
func refuseField(name string, raw json.RawMessage) error {
	switch name {
	case "logprobs":
		if string(raw) == "false" {
			return nil
		}
		return unsupported(name, "log probabilities are not translated")
	case "top_logprobs":
		if string(raw) == "0" {
			return nil
		}
		return unsupported(name, "log probabilities are not translated")
	case "logit_bias":
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil && len(m) == 0 {
			return nil
		}
		return unsupported(name, "Gemini has no token biases")
	case "modalities":
		var m []string
		if json.Unmarshal(raw, &m) == nil && len(m) == 1 && m[0] == "text" {
			return nil
		}
		return badValue(name, CodeUnsupportedValue, `Gemini targets support only ["text"]`)
	case "verbosity":
		if string(raw) == `"medium"` {
			return nil
		}
		return unsupported(name, "Gemini has no verbosity setting")
	case "audio":
		return unsupported(name, "Gemini targets do not produce audio here")
	case "functions", "function_call":
		return unsupported(name, "the legacy functions API is not translated; use tools and tool_choice")
	case "web_search_options":
		return unsupported(name, "web search is not translated")
	}
	return unsupported(name, "")
}

// number reads a float field within [lo, hi].
func number(name string, raw json.RawMessage, dst **float64, lo, hi float64) error {
	if err := decode(name, raw, dst); err != nil {
		return err
	}
	if v := **dst; v < lo || v > hi || math.IsNaN(v) {
		return badValue(name, CodeInvalidValue, "want a number from "+strconv.FormatFloat(lo, 'g', -1, 64)+
			" to "+strconv.FormatFloat(hi, 'g', -1, 64)+", got "+string(raw))
	}
	return nil
}

func (t *translator) seed(raw json.RawMessage) error {
	var s int64
	if err := decode("seed", raw, &s); err != nil {
		return err
	}
	if s < math.MinInt32 || s > math.MaxInt32 {
		return badValue("seed", CodeUnsupportedValue, "Gemini takes a 32-bit seed, got "+string(raw))
	}
	v := int32(s)
	t.gen.Seed = &v
	return nil
}

func (t *translator) candidates(raw json.RawMessage) error {
	var n int
	if err := decode("n", raw, &n); err != nil {
		return err
	}
	switch {
	case n < 1:
		return badValue("n", CodeInvalidValue, "must be at least 1")
	case n > MaxCandidates:
		return badValue("n", CodeUnsupportedValue, "Gemini returns at most "+strconv.Itoa(MaxCandidates)+" candidates")
	case n > 1:
		t.gen.CandidateCount = n
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
			t.gen.StopSequences = []string{one}
		}
		return nil
	}
	var many []string
	if err := decode("stop", raw, &many); err != nil {
		return err
	}
	for _, s := range many {
		if s != "" {
			t.gen.StopSequences = append(t.gen.StopSequences, s)
		}
	}
	return nil
}

func (t *translator) responseFormat(raw json.RawMessage) error {
	var f struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := decode("response_format", raw, &f); err != nil {
		return err
	}
	switch f.Type {
	case "text":
	case "json_object":
		t.gen.ResponseMimeType = "application/json"
	case "json_schema":
		if f.JSONSchema == nil || len(f.JSONSchema.Schema) == 0 || isNull(f.JSONSchema.Schema) {
			return badValue("response_format.json_schema.schema", CodeInvalidValue, "is required")
		}
		if f.JSONSchema.Schema[0] != '{' {
			return badValue("response_format.json_schema.schema", CodeInvalidValue, "want a JSON schema object")
		}
		t.gen.ResponseMimeType = "application/json"
		t.gen.ResponseJSONSchema = f.JSONSchema.Schema
	default:
		return badValue("response_format.type", CodeUnsupportedValue, "unknown type "+shown(f.Type))
	}
	return nil
}

// finish applies the fields that depend on others.
func (t *translator) finish() error {
	switch {
	case t.maxCompl != nil:
		if *t.maxCompl < 1 {
			return badValue("max_completion_tokens", CodeInvalidValue, "must be at least 1")
		}
		t.gen.MaxOutputTokens = *t.maxCompl
	case t.maxTokens != nil:
		if *t.maxTokens < 1 {
			return badValue("max_tokens", CodeInvalidValue, "must be at least 1")
		}
		t.gen.MaxOutputTokens = *t.maxTokens
	}
	if len(t.gen.StopSequences) > maxStops {
		return badValue("stop", CodeUnsupportedValue, "Gemini takes at most "+strconv.Itoa(maxStops)+" stop sequences")
	}
	if !t.sawMessages {
		return badValue("messages", CodeInvalidValue, "is required")
	}
	if len(t.out.Contents) == 0 {
		return badValue("messages", CodeUnsupportedValue, "Gemini needs at least one user or assistant message")
	}
	if err := t.choice(); err != nil {
		return err
	}
	if err := t.think(); err != nil {
		return err
	}
	if strings.HasPrefix(t.model, "gemini-3") {
		t.signCalls()
	}
	if !t.gen.empty() {
		t.out.GenerationConfig = &t.gen
	}
	return nil
}

func (g *generationConfig) empty() bool {
	return len(g.StopSequences) == 0 && g.ResponseMimeType == "" && g.CandidateCount == 0 &&
		g.MaxOutputTokens == 0 && g.Temperature == nil && g.TopP == nil && g.TopK == nil &&
		g.Seed == nil && g.PresencePenalty == nil && g.FrequencyPenalty == nil && g.ThinkingConfig == nil
}

// SkipSignature is the thought signature Google documents for function
// calls that did not come from the model with one (a conversation begun on
// another model, a client that drops extra_content): Gemini 3 refuses a
// model turn whose function calls carry no signature.
const SkipSignature = "skip_thought_signature_validator"

// signCalls gives the first function call of each model turn that has no
// thought signature the documented stand-in.
func (t *translator) signCalls() {
	for i := range t.out.Contents {
		c := &t.out.Contents[i]
		if c.Role != "model" {
			continue
		}
		first := -1
		for j := range c.Parts {
			if c.Parts[j].ThoughtSignature != "" {
				first = -2
				break
			}
			if first == -1 && c.Parts[j].FunctionCall != nil {
				first = j
			}
		}
		if first >= 0 {
			c.Parts[first].ThoughtSignature = SkipSignature
		}
	}
}

// Thinking budgets by reasoning_effort, for models that take a budget
// (Gemini 2.5); Gemini 3 takes the level by name.
var thinkingBudgets = map[string]int{
	"none":    0,
	"minimal": 512,
	"low":     1024,
	"medium":  8192,
	"high":    24576,
}

// think translates reasoning_effort into thinkingConfig.
func (t *translator) think() error {
	if t.effort == "" {
		return nil
	}
	budget, ok := thinkingBudgets[t.effort]
	if !ok {
		return badValue("reasoning_effort", CodeUnsupportedValue, "unknown effort "+shown(t.effort)+
			"; Gemini targets take none, minimal, low, medium or high")
	}
	level := strings.HasPrefix(t.model, "gemini-3")
	switch {
	case t.effort == "none" && (level || strings.HasPrefix(t.model, "gemini-2.5-pro")):
		return badValue("reasoning_effort", CodeUnsupportedValue, "this Gemini model always thinks; send at least minimal")
	case t.effort == "none":
		t.gen.ThinkingConfig = &thinkingConfig{ThinkingBudget: &budget}
	case level && strings.HasPrefix(t.model, "gemini-3-pro") && (t.effort == "minimal" || t.effort == "medium"):
		return badValue("reasoning_effort", CodeUnsupportedValue, "Gemini 3 Pro thinks at level low or high only")
	case level:
		t.gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingLevel: t.effort}
	default:
		t.gen.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}
	}
	return nil
}

// choice translates tool_choice and parallel_tool_calls.
func (t *translator) choice() error {
	var c *functionCallingConfig
	if raw := t.toolChoice; raw != nil {
		var err error
		if c, err = readChoice(raw); err != nil {
			return err
		}
	}
	if len(t.out.Tools) == 0 {
		if c != nil && c.Mode == "ANY" {
			return badValue("tool_choice", CodeInvalidValue, "needs tools")
		}
		return nil
	}
	if t.parallel != nil && !*t.parallel && (c == nil || c.Mode != "NONE") {
		return unsupported("parallel_tool_calls", "Gemini may call several functions at once; omit it or send true")
	}
	if c != nil {
		t.out.ToolConfig = &toolConfig{FunctionCallingConfig: *c}
	}
	return nil
}

func readChoice(raw []byte) (*functionCallingConfig, error) {
	if raw[0] == '"' {
		var mode string
		if err := decode("tool_choice", raw, &mode); err != nil {
			return nil, err
		}
		switch mode {
		case "auto":
			return &functionCallingConfig{Mode: "AUTO"}, nil
		case "none":
			return &functionCallingConfig{Mode: "NONE"}, nil
		case "required":
			return &functionCallingConfig{Mode: "ANY"}, nil
		}
		return nil, badValue("tool_choice", CodeInvalidValue, "unknown mode "+shown(mode))
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		AllowedTools struct {
			Mode  string `json:"mode"`
			Tools []struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		} `json:"allowed_tools"`
	}
	if err := decode("tool_choice", raw, &named); err != nil {
		return nil, err
	}
	switch {
	case named.Type == "function" && named.Function.Name != "":
		return &functionCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{named.Function.Name}}, nil
	case named.Type == "allowed_tools" && named.AllowedTools.Mode == "required":
		c := &functionCallingConfig{Mode: "ANY"}
		for i, tl := range named.AllowedTools.Tools {
			if tl.Type != "function" || tl.Function.Name == "" {
				return nil, badValue(path("tool_choice.allowed_tools.tools", i, "type"), CodeUnsupportedValue, "only named function tools are translated")
			}
			c.AllowedFunctionNames = append(c.AllowedFunctionNames, tl.Function.Name)
		}
		return c, nil
	case named.Type == "allowed_tools":
		return nil, badValue("tool_choice.allowed_tools.mode", CodeUnsupportedValue, "Gemini restricts functions only when one must be called (mode required)")
	}
	return nil, badValue("tool_choice", CodeUnsupportedValue, "only auto, none, required, a named function and allowed_tools are translated")
}

func (t *translator) tools(raw json.RawMessage) error {
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := decode("tools", raw, &tools); err != nil {
		return err
	}
	if len(tools) == 0 {
		return nil
	}
	decls := make([]functionDeclaration, 0, len(tools))
	for i, tl := range tools {
		if tl.Type != "function" {
			return badValue(path("tools", i, "type"), CodeUnsupportedValue, "only function tools are translated, got "+shown(tl.Type))
		}
		if tl.Function.Name == "" {
			return badValue(path("tools", i, "function.name"), CodeInvalidValue, "is required")
		}
		schema := tl.Function.Parameters
		if isNull(schema) {
			schema = nil
		}
		if len(schema) > 0 && schema[0] != '{' {
			return badValue(path("tools", i, "function.parameters"), CodeInvalidValue, "want a JSON schema object")
		}
		decls = append(decls, functionDeclaration{Name: tl.Function.Name, Description: tl.Function.Description, ParametersJSONSchema: schema})
	}
	t.out.Tools = []toolSet{{FunctionDeclarations: decls}}
	return nil
}

// TranslateChat turns an OpenAI chat completion body into a Gemini
// GenerateContentRequest body, which names no model (Gemini takes it in
// the URL); stream forces a streamed answer. A request that cannot be
// translated faithfully is refused with a *router.Unservable naming the
// field by its JSON path.
func TranslateChat(body []byte, stream bool) (Translated, error) {
	tr, err := translate(body)
	if err != nil {
		return Translated{}, err
	}
	tr.Stream = tr.Stream || stream
	return tr, nil
}

var _ error = (*router.Unservable)(nil)
