package responses

import "github.com/fuseboxhq/fusebox/aireq"

// formatFields are the raw members of text.format.
type formatFields struct {
	typ, name, description, schema, strict []byte
}

// readText translates text.format to response_format and keeps
// text.verbosity.
func (c *chatRequest) readText(raw []byte, e *echo) error {
	if absent(raw) {
		return nil
	}
	var format, verbosity []byte
	if raw[0] != '{' || !members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "format":
			format = v
		case "verbosity":
			verbosity = v
		}
	}) {
		return wrongType("", "an object", raw)
	}
	var err error
	if c.verbosity, err = readString("verbosity", verbosity); err != nil {
		return err
	}
	e.verbosity = e.keep(verbosity)
	if err := c.readFormat(format); err != nil {
		return errorUnder(err, "format")
	}
	e.format = e.keep(format)
	return nil
}

func (c *chatRequest) readFormat(raw []byte) error {
	if absent(raw) {
		return nil
	}
	var f formatFields
	if raw[0] != '{' || !members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "type":
			f.typ = v
		case "name":
			f.name = v
		case "description":
			f.description = v
		case "schema":
			f.schema = v
		case "strict":
			f.strict = v
		}
	}) {
		return wrongType("", "an object", raw)
	}
	typ, err := needString("type", f.typ)
	if err != nil {
		return err
	}
	switch typ {
	case "text":
		return nil
	case "json_object":
		c.format = []byte(`{"type":"json_object"}`)
		return nil
	case "json_schema":
	default:
		return invalid("type", "want text, json_object or json_schema, got "+quote(typ))
	}
	name, err := needString("name", f.name)
	if err != nil {
		return err
	}
	desc, err := readString("description", f.description)
	if err != nil {
		return err
	}
	switch {
	case absent(f.schema):
		return missing("schema")
	case f.schema[0] != '{':
		return wrongType("schema", "an object", f.schema)
	}
	strict, err := readBool("strict", f.strict, false)
	if err != nil {
		return err
	}
	b := append(make([]byte, 0, len(f.schema)+64), `{"type":"json_schema","json_schema":{`...)
	b = appendStringMember(b, "name", name)
	if desc != "" {
		b = appendStringMember(b, "description", desc)
	}
	b = compact(appendKey(b, "schema"), f.schema)
	if !absent(f.strict) {
		b = appendBool(b, "strict", strict)
	}
	c.format = append(b, '}', '}')
	return nil
}

// readReasoning keeps reasoning.effort for reasoning_effort, and the
// summary setting for the echo (no reasoning summaries are produced).
func (c *chatRequest) readReasoning(raw []byte, e *echo) error {
	if absent(raw) {
		return nil
	}
	var effort, summary []byte
	if raw[0] != '{' || !members(raw, func(name []byte, _ aireq.Text, v []byte) {
		switch string(name) {
		case "effort":
			effort = v
		case "summary":
			summary = v
		}
	}) {
		return wrongType("", "an object", raw)
	}
	var err error
	if c.effort, err = readString("effort", effort); err != nil {
		return err
	}
	if _, err = readString("summary", summary); err != nil {
		return err
	}
	e.effort, e.summary = e.keep(effort), e.keep(summary)
	return nil
}

// readSampling reads max_output_tokens, temperature and top_p.
func (c *chatRequest) readSampling(v *[numFields][]byte, e *echo) error {
	n, ok, err := readInt("max_output_tokens", v[fMaxOutputTokens])
	switch {
	case err != nil:
		return err
	case ok && n < 1:
		return invalid("max_output_tokens", "must be at least 1")
	}
	c.maxTokens = n
	e.maxOutputTokens = e.keep(v[fMaxOutputTokens])
	if _, _, err := readNumber("temperature", v[fTemperature]); err != nil {
		return err
	}
	if _, _, err := readNumber("top_p", v[fTopP]); err != nil {
		return err
	}
	c.temperature, c.topP = e.keep(v[fTemperature]), e.keep(v[fTopP])
	e.temperature, e.topP = c.temperature, c.topP
	return nil
}

// readIdentity reads user, safety_identifier, prompt_cache_key and
// metadata.
func (c *chatRequest) readIdentity(v *[numFields][]byte, e *echo) error {
	var err error
	if c.user, err = readString("user", v[fUser]); err != nil {
		return err
	}
	if c.safetyID, err = readString("safety_identifier", v[fSafetyIdentifier]); err != nil {
		return err
	}
	if c.cacheKey, err = readString("prompt_cache_key", v[fPromptCacheKey]); err != nil {
		return err
	}
	if raw := v[fMetadata]; !absent(raw) && raw[0] != '{' {
		return wrongType("metadata", "an object", raw)
	}
	e.user, e.safetyID = e.keep(v[fUser]), e.keep(v[fSafetyIdentifier])
	e.promptCacheKey, e.metadata = e.keep(v[fPromptCacheKey]), e.keep(v[fMetadata])
	return nil
}

// readMode reads stream, store and the settings that change nothing for a
// chat target but are echoed.
func readMode(v *[numFields][]byte, req *Request, e *echo) error {
	var err error
	if req.Stream, err = readBool("stream", v[fStream], false); err != nil {
		return err
	}
	if req.Store, err = readBool("store", v[fStore], true); err != nil {
		return err
	}
	if _, _, err := readInt("max_tool_calls", v[fMaxToolCalls]); err != nil {
		return err
	}
	if _, err := readString("service_tier", v[fServiceTier]); err != nil {
		return err
	}
	if _, err := readString("prompt_cache_retention", v[fPromptCacheRetention]); err != nil {
		return err
	}
	if raw := v[fStreamOptions]; !absent(raw) && raw[0] != '{' {
		return wrongType("stream_options", "an object", raw)
	}
	e.maxToolCalls, e.serviceTier = e.keep(v[fMaxToolCalls]), e.keep(v[fServiceTier])
	return nil
}

// harmlessIncludes are include values that ask for parts of items a chat
// target never produces (built-in tool calls, reasoning), so there is
// nothing to add.
var harmlessIncludes = []string{
	"reasoning.encrypted_content", "message.input_image.image_url", "file_search_call.results",
	"web_search_call.results", "web_search_call.action.sources", "code_interpreter_call.outputs",
	"computer_call_output.output.image_url",
}

// readRefused checks the settings that cannot be honoured through a chat
// target unless they have their neutral value.
func readRefused(v *[numFields][]byte, e *echo) error {
	trunc, err := readString("truncation", v[fTruncation])
	switch {
	case err != nil:
		return err
	case trunc == "auto":
		return unsupported("truncation", `"auto" cannot be honoured: chat completions targets do not drop conversation items to fit their context; send "disabled"`)
	case trunc != "" && trunc != "disabled":
		return invalid("truncation", `want "auto" or "disabled", got `+quote(trunc))
	}
	e.truncation = e.keep(v[fTruncation])
	if background, err := readBool("background", v[fBackground], false); err != nil || background {
		if err != nil {
			return err
		}
		return refused("background", codeUnsupportedValue, "background responses are not run through the gateway; send the request without background and keep the connection, or stream it")
	}
	if !absent(v[fConversation]) {
		return refused("conversation", codeUnsupportedParam, "conversations are not supported; use previous_response_id")
	}
	if !absent(v[fPrompt]) {
		return refused("prompt", codeUnsupportedParam, "prompt templates are stored at the provider under the gateway's key and are not used through the gateway; send the instructions and input themselves")
	}
	n, _, err := readInt("top_logprobs", v[fTopLogprobs])
	switch {
	case err != nil:
		return err
	case n != 0:
		return unsupported("top_logprobs", "log probabilities are not translated; omit top_logprobs or send 0")
	}
	e.topLogprobs = e.keep(v[fTopLogprobs])
	if err := readInclude(v[fInclude]); err != nil {
		return errorUnder(err, "include")
	}
	return nil
}

func readInclude(raw []byte) error {
	if absent(raw) {
		return nil
	}
	if raw[0] != '[' {
		return wrongType("", "an array of strings", raw)
	}
	return elements(raw, func(_ int, el []byte) error {
		s, err := readString("", el)
		switch {
		case err != nil:
			return err
		case s == "message.output_text.logprobs":
			return unsupported("", "log probabilities are not translated")
		}
		for _, ok := range harmlessIncludes {
			if s == ok {
				return nil
			}
		}
		return unsupported("", "cannot include "+quote(s)+" through chat completions targets")
	})
}
