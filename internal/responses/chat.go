package responses

// chatRequest is a request being translated: the chat request's values,
// checked, and pieces of it already written.
type chatRequest struct {
	model        string
	instructions string
	tools        []byte   // the chat "tools" array
	toolNames    []string // of the function tools
	toolChoice   []byte   // the chat "tool_choice" value
	parallel     bool
	hasParallel  bool
	format       []byte // the chat "response_format" value
	verbosity    string
	effort       string
	maxTokens    int64 // 0: not given
	temperature  []byte
	topP         []byte
	user         string
	safetyID     string
	cacheKey     string
}

// read checks the request's fields, in a fixed order (the first error
// found is the same whatever the body's order), and fills req.
func (c *chatRequest) read(t *topFields, req *Request, history []Item) error {
	v := &t.v
	e := &req.echo
	var err error
	if c.model, err = needString("model", v[fModel]); err != nil {
		return err
	}
	req.Model = c.model
	if err := c.readInput(v, req, history); err != nil {
		return err
	}
	if c.instructions, err = readString("instructions", v[fInstructions]); err != nil {
		return err
	}
	e.instructions = e.keep(v[fInstructions])
	if len(req.Input) == 0 && c.instructions == "" {
		return missing("input")
	}
	if err := c.readTools(v[fTools]); err != nil {
		return errorUnder(err, "tools")
	}
	e.tools = e.keep(v[fTools])
	if err := c.readToolChoice(v[fToolChoice]); err != nil {
		return errorUnder(err, "tool_choice")
	}
	e.toolChoice = e.keep(v[fToolChoice])
	if c.parallel, err = readBool("parallel_tool_calls", v[fParallelToolCalls], true); err != nil {
		return err
	}
	c.hasParallel = !absent(v[fParallelToolCalls])
	e.parallelToolCalls = e.keep(v[fParallelToolCalls])
	if err := c.readText(v[fText], e); err != nil {
		return errorUnder(err, "text")
	}
	if err := c.readReasoning(v[fReasoning], e); err != nil {
		return errorUnder(err, "reasoning")
	}
	if err := c.readSampling(v, e); err != nil {
		return err
	}
	if err := c.readIdentity(v, e); err != nil {
		return err
	}
	if err := readMode(v, req, e); err != nil {
		return err
	}
	return readRefused(v, e)
}

// readInput reads the input and the previous response it continues.
func (c *chatRequest) readInput(v *[numFields][]byte, req *Request, history []Item) error {
	var own []Item
	if raw := v[fInput]; !absent(raw) {
		var err error
		if own, err = parseInput(raw); err != nil {
			return errorUnder(err, "input")
		}
	}
	prev, err := readString("previous_response_id", v[fPreviousResponseID])
	if err != nil {
		return err
	}
	if prev != "" && len(history) == 0 {
		return newError("previous_response_id", codePreviousNotFound, "previous response with id "+quote(prev)+" not found")
	}
	req.PreviousResponseID = prev
	req.own = len(history)
	if len(history) == 0 {
		req.Input = own
		return nil
	}
	req.Input = make([]Item, 0, len(history)+len(own))
	req.Input = append(append(req.Input, history...), own...)
	return nil
}

// write writes the chat completions request.
func (c *chatRequest) write(req *Request, size int) ([]byte, error) {
	b := make([]byte, 0, size+256)
	b = appendStringMember(append(b, '{'), "model", c.model)
	b = append(appendKey(b, "messages"), '[')
	b, err := c.appendMessages(b, req)
	if err != nil {
		return nil, err
	}
	b = append(b, ']')
	if c.tools != nil {
		b = appendRaw(b, "tools", c.tools, "")
		if c.toolChoice != nil {
			b = appendRaw(b, "tool_choice", c.toolChoice, "")
		}
		if c.hasParallel {
			b = appendBool(b, "parallel_tool_calls", c.parallel)
		}
	}
	if c.format != nil {
		b = appendRaw(b, "response_format", c.format, "")
	}
	b = appendOptional(b, "verbosity", c.verbosity)
	b = appendOptional(b, "reasoning_effort", c.effort)
	if c.maxTokens > 0 {
		b = appendInt(b, "max_completion_tokens", c.maxTokens)
	}
	if c.temperature != nil {
		b = appendRaw(b, "temperature", c.temperature, "")
	}
	if c.topP != nil {
		b = appendRaw(b, "top_p", c.topP, "")
	}
	b = appendOptional(b, "user", c.user)
	b = appendOptional(b, "safety_identifier", c.safetyID)
	b = appendOptional(b, "prompt_cache_key", c.cacheKey)
	if req.Stream {
		b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(b, '}'), nil
}

// appendOptional appends "name":"value" unless value is empty.
func appendOptional(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	return appendStringMember(b, name, value)
}
