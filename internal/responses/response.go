package responses

import (
	"strconv"
	"time"
)

// The statuses of a response and its items.
const (
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusIncomplete = "incomplete"
	statusFailed     = "failed"
)

// result is a response's state: what FromChat read from an answer, or
// what a Stream has gathered so far.
type result struct {
	status              string // "" until known: in_progress
	reason              string // incomplete_details.reason
	model               string
	items               []output
	usage               usage
	errCode, errMessage string // a failed response's error
}

// output is one output item: a message or a function call.
type output struct {
	call   bool
	id     string
	status string
	parts  []outPart // a message's

	callID, name string // a function call's
	args         []byte
	chatID       string // the upstream's id of the call, "" if none came
	chatIndex    int    // the upstream's index of the call
	announced    bool   // its output_item.added event is out
}

// outPart is one content part of an output message.
type outPart struct {
	refusal bool
	text    []byte
}

// usage is a chat answer's token counts, in Responses terms.
type usage struct {
	set                                     bool
	input, cached, output, reasoning, total int64
}

// FromChat translates a chat completion (the JSON of a chat.completion)
// into the Responses API's response object for the request req (as ToChat
// read it), with the given id ("resp_…", from NewID) and creation time.
//
// Choice 0 is the answer (a Responses request has one). Its content
// becomes a message item with one output_text part, a refusal a refusal
// part, and each tool call a function_call item, in that order; an answer
// with neither text nor calls still has a message, with empty text.
// finish_reason "length" makes the response incomplete with reason
// max_output_tokens, "content_filter" incomplete with reason
// content_filter; any other is completed. Reasoning content is left out.
// An answer that is not a chat completion gives an error matching
// ErrBadChat.
func FromChat(chat []byte, req Request, id string, created time.Time) ([]byte, error) {
	var r result
	if err := readCompletion(chat, &r, id); err != nil {
		return nil, err
	}
	if r.model == "" {
		r.model = req.Model
	}
	b := make([]byte, 0, len(chat)+len(req.echo.buf)+512)
	return appendResponse(b, &req, id, created.Unix(), &r), nil
}

// finish sets the status of a response whose answer finished with
// reason.
func (r *result) finish(reason string) {
	switch reason {
	case "length":
		r.status, r.reason = statusIncomplete, "max_output_tokens"
	case "content_filter":
		r.status, r.reason = statusIncomplete, "content_filter"
	default:
		r.status, r.reason = statusCompleted, ""
	}
}

// itemStatus is the status of an item closed in a response of r's status.
func (r *result) itemStatus() string {
	if r.status == statusIncomplete || r.status == statusFailed {
		return statusIncomplete
	}
	return statusCompleted
}

// itemID derives the id of an item of the response id: prefix, the
// response id's own part, and the item's number, so a response's item ids
// are unique, stable, and need no randomness.
func itemID(prefix, respID string, n int) string {
	rest := respID
	if len(rest) > len(idPrefix) && rest[:len(idPrefix)] == idPrefix {
		rest = rest[len(idPrefix):]
	}
	b := make([]byte, 0, len(prefix)+len(rest)+4)
	b = append(append(b, prefix...), rest...)
	h := strconv.FormatInt(int64(n), 16)
	for i := len(h); i < 4; i++ {
		b = append(b, '0')
	}
	return string(append(b, h...))
}

// appendResponse appends the response object.
func appendResponse(b []byte, req *Request, id string, createdAt int64, r *result) []byte {
	e := &req.echo
	status := r.status
	if status == "" {
		status = statusInProgress
	}
	b = appendStringMember(append(b, '{'), "id", id)
	b = append(b, `,"object":"response"`...)
	b = appendInt(b, "created_at", createdAt)
	b = appendStringMember(b, "status", status)
	b = append(b, `,"background":false`...)
	b = appendKey(b, "error")
	if status == statusFailed {
		b = appendStringMember(append(b, '{'), "code", r.errCode)
		b = append(appendStringMember(b, "message", r.errMessage), '}')
	} else {
		b = append(b, "null"...)
	}
	b = appendKey(b, "incomplete_details")
	if r.reason != "" {
		b = append(appendStringMember(append(b, '{'), "reason", r.reason), '}')
	} else {
		b = append(b, "null"...)
	}
	b = appendRaw(b, "instructions", e.instructions, "null")
	b = appendRaw(b, "max_output_tokens", e.maxOutputTokens, "null")
	b = appendRaw(b, "max_tool_calls", e.maxToolCalls, "null")
	b = appendStringMember(b, "model", r.model)
	b = append(appendKey(b, "output"), '[')
	for i := range r.items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendOutput(b, &r.items[i], true)
	}
	b = append(b, ']')
	b = appendRaw(b, "parallel_tool_calls", e.parallelToolCalls, "true")
	b = appendStringOrNull(b, "previous_response_id", req.PreviousResponseID)
	b = appendRaw(b, "prompt_cache_key", e.promptCacheKey, "null")
	b = appendRaw(append(appendKey(b, "reasoning"), '{'), "effort", e.effort, "null")
	b = append(appendRaw(b, "summary", e.summary, "null"), '}')
	b = appendRaw(b, "safety_identifier", e.safetyID, "null")
	b = appendRaw(b, "service_tier", e.serviceTier, `"default"`)
	b = appendBool(b, "store", req.Store)
	b = appendRaw(b, "temperature", e.temperature, "1")
	b = appendRaw(append(appendKey(b, "text"), '{'), "format", e.format, `{"type":"text"}`)
	b = append(appendRaw(b, "verbosity", e.verbosity, `"medium"`), '}')
	b = appendRaw(b, "tool_choice", e.toolChoice, `"auto"`)
	b = appendRaw(b, "tools", e.tools, "[]")
	b = appendRaw(b, "top_logprobs", e.topLogprobs, "0")
	b = appendRaw(b, "top_p", e.topP, "1")
	b = appendRaw(b, "truncation", e.truncation, `"disabled"`)
	b = appendUsage(appendKey(b, "usage"), r)
	b = appendRaw(b, "user", e.user, "null")
	b = appendRaw(b, "metadata", e.metadata, "{}")
	return append(b, '}')
}

// appendUsage appends the usage object, or null while it is not known.
func appendUsage(b []byte, r *result) []byte {
	u := &r.usage
	if !u.set || r.status == "" || r.status == statusInProgress {
		return append(b, "null"...)
	}
	b = appendInt(append(b, '{'), "input_tokens", u.input)
	b = append(appendInt(append(appendKey(b, "input_tokens_details"), '{'), "cached_tokens", u.cached), '}')
	b = appendInt(b, "output_tokens", u.output)
	b = append(appendInt(append(appendKey(b, "output_tokens_details"), '{'), "reasoning_tokens", u.reasoning), '}')
	b = appendInt(b, "total_tokens", u.total)
	return append(b, '}')
}

// appendOutput appends an output item; without content, a message's
// content is [] (as in its output_item.added event).
func appendOutput(b []byte, o *output, content bool) []byte {
	b = appendStringMember(append(b, '{'), "id", o.id)
	if o.call {
		b = append(b, `,"type":"function_call"`...)
		b = appendStringMember(b, "status", o.status)
		b = appendString(appendKey(b, "arguments"), o.args)
		b = appendStringMember(b, "call_id", o.callID)
		b = appendStringMember(b, "name", o.name)
		return append(b, '}')
	}
	b = append(b, `,"type":"message"`...)
	b = appendStringMember(b, "status", o.status)
	b = append(appendKey(b, "content"), '[')
	if content {
		for i := range o.parts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPart(b, &o.parts[i])
		}
	}
	return append(b, `],"role":"assistant"}`...)
}

// appendPart appends an output content part.
func appendPart(b []byte, p *outPart) []byte {
	if p.refusal {
		b = append(b, `{"type":"refusal","refusal":`...)
		return append(appendString(b, p.text), '}')
	}
	b = append(b, `{"type":"output_text","annotations":[],"logprobs":[],"text":`...)
	return append(appendString(b, p.text), '}')
}
