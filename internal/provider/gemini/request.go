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
