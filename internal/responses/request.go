package responses

import (
	"github.com/fuseboxhq/fusebox/aireq"
)

// Request is what ToChat read of a Responses create request, for the
// caller (routing, storing, logging) and for the answer, which echoes the
// request's settings. A zero Request stands for a request with every
// setting at its default, except that Store is false.
type Request struct {
	// Model is the "model" as given; it is the chat request's model too.
	Model string
	// Stream is "stream": true.
	Stream bool
	// Store is "store", true unless the client sent false: keep the
	// response for GET /v1/responses/{id} and previous_response_id.
	Store bool
	// PreviousResponseID is "previous_response_id", or "".
	PreviousResponseID string
	// Input is what the model was given: the history passed to ToChat, then
	// the request's own input items. It is what Stored.Input holds, so that
	// a chain of responses keeps the whole conversation. Instructions are
	// not in it: like OpenAI, a later turn does not inherit them.
	Input []Item
	// Unknown lists the top-level fields that were not read, for logging:
	// at most 16 names, each clipped to 64 bytes.
	Unknown []string

	own  int  // Input[own:] are the request's own items
	echo echo // the request's settings, as the response echoes them
}

// echo holds request settings as compact JSON values, nil when absent,
// for the response object to repeat.
type echo struct {
	instructions, tools, toolChoice, parallelToolCalls, format, verbosity []byte
	effort, summary, metadata, temperature, topP, maxOutputTokens         []byte
	maxToolCalls, topLogprobs, user, safetyID, promptCacheKey             []byte
	serviceTier, truncation                                               []byte
	buf                                                                   []byte // holds them all
}

// keep copies the valid JSON value raw, compacted, into e's buffer and
// returns the copy; nil when raw is absent.
func (e *echo) keep(raw []byte) []byte {
	if absent(raw) {
		return nil
	}
	start := len(e.buf)
	e.buf = compact(e.buf, raw)
	return e.buf[start:len(e.buf):len(e.buf)]
}

// maxUnknown is how many unknown top-level fields Request.Unknown lists.
const maxUnknown = 16

// The top-level fields of a create request that are read.
const (
	fModel = iota
	fInput
	fInstructions
	fTools
	fToolChoice
	fParallelToolCalls
	fText
	fReasoning
	fMaxOutputTokens
	fTemperature
	fTopP
	fUser
	fSafetyIdentifier
	fPromptCacheKey
	fMetadata
	fStream
	fStore
	fPreviousResponseID
	fTruncation
	fInclude
	fBackground
	fConversation
	fPrompt
	fTopLogprobs
	fMaxToolCalls
	fServiceTier
	fPromptCacheRetention
	fStreamOptions
	numFields
)

var fieldNames = [numFields]string{
	fModel: "model", fInput: "input", fInstructions: "instructions", fTools: "tools",
	fToolChoice: "tool_choice", fParallelToolCalls: "parallel_tool_calls", fText: "text",
	fReasoning: "reasoning", fMaxOutputTokens: "max_output_tokens", fTemperature: "temperature",
	fTopP: "top_p", fUser: "user", fSafetyIdentifier: "safety_identifier",
	fPromptCacheKey: "prompt_cache_key", fMetadata: "metadata", fStream: "stream",
	fStore: "store", fPreviousResponseID: "previous_response_id", fTruncation: "truncation",
	fInclude: "include", fBackground: "background", fConversation: "conversation",
	fPrompt: "prompt", fTopLogprobs: "top_logprobs", fMaxToolCalls: "max_tool_calls",
	fServiceTier: "service_tier", fPromptCacheRetention: "prompt_cache_retention",
	fStreamOptions: "stream_options",
}

var fieldIndex = func() map[string]int {
	m := make(map[string]int, numFields)
	for i, name := range fieldNames {
		m[name] = i
	}
	return m
}()

// topFields are the raw top-level members of a request, the last of each
// name, and the names of those not read.
type topFields struct {
	v       [numFields][]byte
	unknown []string
	// twice is a known member that came more than once, or "".
	twice string
}

// read collects the top-level members of body.
func (t *topFields) read(body []byte) error {
	r := aireq.NewStrictReader(body)
	if r.Kind() != aireq.Object {
		return newError("", codeInvalidJSON, "the request body must be a JSON object")
	}
	if !nestingWithin(body, maxDepth) {
		return newError("", codeInvalidJSON, "the request body nests deeper than 64 levels")
	}
	ok := topMembers(body, func(name []byte, key aireq.Text, v []byte) {
		if i, known := fieldIndex[string(name)]; known {
			if t.v[i] != nil && t.twice == "" {
				t.twice = fieldNames[i]
			}
			t.v[i] = v
			return
		}
		t.noteUnknown(key.String())
	})
	if !ok {
		return newError("", codeInvalidJSON, "the request body is not valid JSON")
	}
	if t.twice != "" {
		// Decoders disagree on which of the two to read (the first, the
		// last, or an error), and the body may go to a target as it is.
		return invalid(t.twice, quote(t.twice)+" appears more than once (after unescaping its name): send it once")
	}
	return nil
}

func (t *topFields) noteUnknown(name string) {
	name = clip(name, maxQuoted)
	if len(t.unknown) == maxUnknown {
		return
	}
	for _, seen := range t.unknown {
		if seen == name {
			return
		}
	}
	t.unknown = append(t.unknown, name)
}

// PreviousResponseID returns the "previous_response_id" of a create
// request body, read as ToChat reads it (the last of duplicates, escapes
// decoded), or "" when there is none or the body cannot be read: the id
// whose stored response the caller looks up for ToChat's history.
func PreviousResponseID(body []byte) string {
	var t topFields
	if t.read(body) != nil {
		return ""
	}
	id, _ := readString("", t.v[fPreviousResponseID])
	return id
}

// ToChat translates a Responses create request (POST /v1/responses) into
// a chat completions request body. history is the conversation that
// previous_response_id names (Stored.History of that response), put
// before the request's input; a request with a previous_response_id and
// no history gets a previous_response_not_found error, so a caller that
// finds no stored response (or one of another client) just passes nil.
//
// A request that cannot be translated gives an *Error naming the field;
// errors.Is(err, ErrUnsupported) tells a valid request that a chat target
// cannot serve (a built-in tool, background mode…) from a malformed one.
// docs/RESPONSES.md has the mapping, and what is refused.
func ToChat(body []byte, history []Item) (chat []byte, req Request, err error) {
	var t topFields
	if err := t.read(body); err != nil {
		return nil, Request{}, err
	}
	req.Unknown = t.unknown
	c := chatRequest{}
	if err := c.read(&t, &req, history); err != nil {
		return nil, Request{}, err
	}
	chat, err = c.write(&req, len(body))
	if err != nil {
		return nil, Request{}, err
	}
	return chat, req, nil
}
