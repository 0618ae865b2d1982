package geminiapi

import (
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// The members of a GenerationConfig and a ThinkingConfig.
var (
	generationFields = newFields("GenerationConfig", "stopSequences", "responseMimeType",
		"responseSchema", "responseJsonSchema", "responseModalities", "candidateCount",
		"maxOutputTokens", "temperature", "topP", "topK", "seed", "presencePenalty",
		"frequencyPenalty", "responseLogprobs", "logprobs", "enableEnhancedCivicAnswers",
		"speechConfig", "thinkingConfig", "mediaResolution", "imageConfig", "audioTimestamp",
		"routingConfig", "modelSelectionConfig", "enableAffectiveDialog", "audioTranscriptionConfig",
		"modelConfig")
	thinkingFields = newFields("ThinkingConfig", "includeThoughts", "thinkingBudget", "thinkingLevel")
)

const (
	gcStop = iota
	gcMime
	gcSchema
	gcJSONSchema
	gcModalities
	gcCandidates
	gcMaxTokens
	gcTemperature
	gcTopP
	gcTopK
	gcSeed
	gcPresence
	gcFrequency
	gcLogprobs
	gcLogprobCount
	gcCivic
	gcSpeech
	gcThinking
	gcResolution
	gcImage
	gcAudioTimestamp
	gcRouting
	gcModelSelection
	gcAffective
	gcTranscription
	gcModelConfig
	numGenerationFields
)

// generation writes the chat fields of the GenerationConfig raw.
func (c *converter) generation(raw []byte) error {
	var v [numGenerationFields][]byte
	if err := eachMember(raw, generationFields, func(i int, val []byte) error {
		v[i] = val
		return nil
	}); err != nil {
		return err
	}
	for i := gcCivic; i < numGenerationFields; i++ {
		switch {
		case v[i] == nil, i == gcThinking, i == gcResolution: // mediaResolution only sets how finely media is read
		case string(v[i]) == "false":
		default:
			return unsupported(generationFields.snake[i], generationFields.snake[i])
		}
	}
	if err := c.sampling(&v); err != nil {
		return err
	}
	if err := c.format(&v); err != nil {
		return err
	}
	if v[gcThinking] != nil {
		return under(c.thinking(v[gcThinking]), "thinking_config")
	}
	return nil
}

// sampling writes the numbers: max tokens, n, temperature and the rest.
// topK has no chat equivalent and is dropped: it narrows sampling, it
// asks for nothing an answer would show.
func (c *converter) sampling(v *[numGenerationFields][]byte) error {
	ints := [...]struct {
		field int
		chat  string
		min   int64
	}{{gcMaxTokens, "max_completion_tokens", 1}, {gcCandidates, "n", 1}, {gcSeed, "seed", -1 << 31}, {gcTopK, "", 0}}
	for _, f := range ints {
		raw := v[f.field]
		if raw == nil {
			continue
		}
		n, err := readInt32(raw)
		switch {
		case err != nil:
			return under(err, generationFields.snake[f.field])
		case n == 0 && f.field != gcSeed, f.chat == "": // 0 is proto3's unset
			continue
		case n < f.min:
			return rule(generationFields.snake[f.field], "must be positive")
		}
		c.b = append(c.b, ',', '"')
		c.b = append(c.b, f.chat...)
		c.b = strconv.AppendInt(append(c.b, '"', ':'), n, 10)
	}
	floats := [...]struct {
		field int
		chat  string
	}{{gcTemperature, "temperature"}, {gcTopP, "top_p"}, {gcPresence, "presence_penalty"}, {gcFrequency, "frequency_penalty"}}
	for _, f := range floats {
		raw := v[f.field]
		if raw == nil {
			continue
		}
		x, err := readFloat(raw)
		if err != nil {
			return under(err, generationFields.snake[f.field])
		}
		c.b = append(c.b, ',', '"')
		c.b = append(c.b, f.chat...)
		c.b = appendNumber(append(c.b, '"', ':'), raw, x)
	}
	if raw := v[gcStop]; raw != nil {
		err := eachElement(raw, "TYPE_STRING", func(_ int, el []byte) error {
			_, err := readString(el)
			return err
		})
		if err != nil {
			return under(err, "stop_sequences")
		}
		if !isEmptyArray(raw) {
			c.b = compact(append(c.b, `,"stop":`...), raw)
		}
	}
	return c.modalities(v)
}

// modalities checks responseModalities and the log probabilities, which
// are not translated: only text answers, without logprobs.
func (c *converter) modalities(v *[numGenerationFields][]byte) error {
	if raw := v[gcModalities]; raw != nil {
		err := eachElement(raw, (typePrefix + "Modality"), func(_ int, el []byte) error {
			m, err := readString(el)
			if err == nil && m != "TEXT" && m != "text" {
				err = unsupported("", "the response modality "+strconv.Quote(clip(m)))
			}
			return err
		})
		if err != nil {
			return under(err, "response_modalities")
		}
	}
	if raw := v[gcLogprobs]; raw != nil {
		on, err := readBool(raw)
		if err != nil {
			return under(err, "response_logprobs")
		}
		if on {
			return unsupported("response_logprobs", "response_logprobs")
		}
	}
	if raw := v[gcLogprobCount]; raw != nil {
		if n, err := readInt32(raw); err != nil || n != 0 {
			return under(unsupported("", "logprobs"), "logprobs")
		}
	}
	return nil
}

// format writes response_format from the response MIME type and schema.
func (c *converter) format(v *[numGenerationFields][]byte) error {
	mime := ""
	if raw := v[gcMime]; raw != nil {
		var err error
		if mime, err = readString(raw); err != nil {
			return under(err, "response_mime_type")
		}
	}
	schema, jsonSchema := v[gcSchema], v[gcJSONSchema]
	switch {
	case schema != nil && jsonSchema != nil:
		return rule("response_schema", "response_schema and response_json_schema are mutually exclusive")
	case mime == "" || mime == "text/plain":
		if schema != nil || jsonSchema != nil {
			return rule("response_mime_type", "a response schema needs the response MIME type application/json")
		}
		return nil
	case mime == "text/x.enum":
		return unsupported("response_mime_type", "the response MIME type text/x.enum")
	case mime != "application/json":
		return rule("response_mime_type", "Unsupported MIME type: "+clip(mime)+
			". Allowed mimetypes are text/plain, application/json, text/x.enum.")
	}
	if schema == nil && jsonSchema == nil {
		c.b = append(c.b, `,"response_format":{"type":"json_object"}`...)
		return nil
	}
	c.b = append(c.b, `,"response_format":{"type":"json_schema","json_schema":{"name":"response","schema":`...)
	if jsonSchema != nil {
		if !nestingWithin(jsonSchema, maxDepth) {
			return rule("response_json_schema", "the schema nests deeper than 64 levels")
		}
		c.b = compact(c.b, jsonSchema)
	} else {
		var err error
		if c.b, err = appendSchema(c.b, schema, 0); err != nil {
			return under(err, "response_schema")
		}
	}
	c.b = append(c.b, "}}"...)
	return nil
}

// thinking writes reasoning_effort from the ThinkingConfig raw:
// thinkingLevel by name (MINIMAL, LOW, MEDIUM, HIGH), thinkingBudget by
// size (0 none, up to 1024 minimal, 2048 low, 4096 medium, more high; -1,
// dynamic, leaves the target's default). includeThoughts is read, not
// sent: chat targets return reasoning as they do.
func (c *converter) thinking(raw []byte) error {
	var level string
	var budget int64
	hasBudget := false
	err := eachMember(raw, thinkingFields, func(i int, v []byte) error {
		var err error
		switch i {
		case 0:
			_, err = readBool(v)
		case 1:
			budget, err = readInt32(v)
			hasBudget = true
		case 2:
			level, err = readString(v)
		}
		return under(err, thinkingFields.snake[i])
	})
	if err != nil {
		return err
	}
	effort := ""
	switch {
	case hasBudget && level != "" && level != "THINKING_LEVEL_UNSPECIFIED":
		return rule("thinking_level", "thinking_budget and thinking_level cannot both be set")
	case level != "":
		switch level {
		case "MINIMAL", "LOW", "MEDIUM", "HIGH":
			effort = lower(level)
		case "THINKING_LEVEL_UNSPECIFIED":
		default:
			return badValue("thinking_level", (typePrefix + "ThinkingConfig.ThinkingLevel"), []byte(strconv.Quote(level)))
		}
	case !hasBudget || budget == -1:
	case budget < -1:
		return rule("thinking_budget", "must be -1 (dynamic), 0 (off) or positive")
	case budget == 0:
		effort = "none"
	case budget <= 1024:
		effort = "minimal"
	case budget <= 2048:
		effort = "low"
	case budget <= 4096:
		effort = "medium"
	default:
		effort = "high"
	}
	if effort != "" {
		c.b = append(c.b, `,"reasoning_effort":`...)
		c.b = jsontext.AppendString(c.b, effort)
	}
	return nil
}

// lower returns the ASCII string s in lower case.
func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
