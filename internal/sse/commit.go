package sse

import "github.com/fuseboxhq/fusebox/aireq"

// IsDone reports whether ev is OpenAI's end-of-stream marker, data: [DONE].
func IsDone(ev Event) bool {
	return string(ev.Data) == "[DONE]"
}

// HasContent reports whether ev is the stream's commit point: the first
// event that carries part of the answer. Events before it (preamble,
// role-only deltas, pings) may be held back while the gateway can still
// fail over invisibly; once an event with content has been sent, it cannot.
//
// The event's data must be one JSON object; anything else has no content.
// An error is never content: an event named "error", or data with a
// non-null top-level "error" member (OpenAI, vLLM, OpenRouter mid-stream
// errors) has no content; classify those with aierr.ClassifyEvent.
//
// OpenAI-style chunks (data with a "choices" member): the event has content
// if any element of choices, as an object,
//   - has a "finish_reason" that is a non-empty string other than "error"
//     (OpenRouter marks its error chunks so), since a finished answer, even
//     an empty one, is final; or a non-empty string "text" (completions);
//   - or has a "delta" object with any of: "content" a non-empty string or
//     a non-empty array (content parts); "refusal", "reasoning_content"
//     (DeepSeek, vLLM) or "reasoning" (OpenRouter) a non-empty string;
//     "tool_calls" or "reasoning_details" a non-empty array; "function_call"
//     (legacy) or "audio" an object.
//
// So {"role":"assistant","content":""}, "content":null, "refusal":null,
// "reasoning_content":"", an empty "tool_calls", Azure's prompt_filter_results
// chunk with empty choices and a usage-only chunk have no content.
//
// Anthropic-style events (no "choices" member), by event name, or by the
// data's "type" member when the event has no name:
//   - content_block_delta has content (text, thinking, input_json,
//     signature and citations deltas alike);
//   - content_block_start has content unless its "content_block" is a
//     "text" block with an empty "text" or a "thinking" block with an
//     empty "thinking" (so a tool_use block start commits);
//   - message_delta has content when its "delta" has a non-empty
//     "stop_reason" string (an empty answer that has ended is final);
//   - message_start, content_block_stop, message_stop, ping and any other
//     name have none.
//
// Keys match exactly once their escapes are decoded ("con\u0074ent" is
// content, "Content" is not), and where a key appears twice in an object
// the last value counts, as encoding/json reads the data into a map. The
// data is read in one pass by aireq's strict Reader, without decoding it
// and without allocating; data that encoding/json would refuse (json.Valid)
// has no content.
func HasContent(ev Event) bool {
	if ev.Name == "error" {
		return false
	}
	r := aireq.NewStrictReader(ev.Data)
	var c chunk
	if !r.Object(func(k aireq.Text) bool {
		c.member(&r, k)
		return true
	}) || !r.End() || c.errored {
		return false
	}
	if c.choices {
		return c.choiceContent
	}
	switch {
	case c.kindIs(ev.Name, "content_block_delta"):
		return true
	case c.kindIs(ev.Name, "content_block_start"):
		return c.blockContent
	case c.kindIs(ev.Name, "message_delta"):
		return c.stopped
	}
	return false
}

// chunk is what HasContent reads from the members of an event's data.
// Each is set from the last member of its name.
type chunk struct {
	errored       bool       // "error" is not null
	choices       bool       // there is a "choices" member
	choiceContent bool       // and some element of it has content
	kind          aireq.Text // "type", if a string
	blockContent  bool       // "content_block" has content
	stopped       bool       // "delta" has a non-empty "stop_reason"
}

// kindIs reports whether an Anthropic event is of the kind: by its name,
// or by the data's "type" when it has none.
func (c *chunk) kindIs(event, kind string) bool {
	if event != "" {
		return event == kind
	}
	return c.kind.Is(kind)
}

func (c *chunk) member(r *aireq.Reader, k aireq.Text) {
	switch {
	case k.Is("error"):
		c.errored = r.Kind() != aireq.Null
	case k.Is("choices"):
		c.choices, c.choiceContent = true, false
		r.Array(func() bool {
			if choiceContent(r) {
				c.choiceContent = true
			}
			return true
		})
	case k.Is("type"):
		c.kind, _ = r.ReadString()
	case k.Is("content_block"):
		c.blockContent = blockContent(r)
	case k.Is("delta"):
		c.stopped = false
		r.Object(func(k aireq.Text) bool {
			if k.Is("stop_reason") {
				c.stopped = nonEmptyString(r)
			}
			return true
		})
	}
}

// choiceContent reads an element of choices.
func choiceContent(r *aireq.Reader) bool {
	var finished, text, delta bool
	r.Object(func(k aireq.Text) bool {
		switch {
		case k.Is("finish_reason"):
			s, ok := r.ReadString()
			finished = ok && len(s.Raw()) > 0 && !s.Is("error")
		case k.Is("text"):
			text = nonEmptyString(r)
		case k.Is("delta"):
			delta = deltaContent(r)
		}
		return true
	})
	return finished || text || delta
}

// The members of a delta that carry content.
const (
	deltaContentMember = iota
	deltaRefusal
	deltaReasoningContent
	deltaReasoning
	deltaToolCalls
	deltaReasoningDetails
	deltaFunctionCall
	deltaAudio
	numDeltaMembers
)

// deltaContent reads a choice's delta.
func deltaContent(r *aireq.Reader) bool {
	var has [numDeltaMembers]bool
	r.Object(func(k aireq.Text) bool {
		switch {
		case k.Is("content"):
			has[deltaContentMember] = nonEmptyString(r) || nonEmptyArray(r)
		case k.Is("refusal"):
			has[deltaRefusal] = nonEmptyString(r)
		case k.Is("reasoning_content"):
			has[deltaReasoningContent] = nonEmptyString(r)
		case k.Is("reasoning"):
			has[deltaReasoning] = nonEmptyString(r)
		case k.Is("tool_calls"):
			has[deltaToolCalls] = nonEmptyArray(r)
		case k.Is("reasoning_details"):
			has[deltaReasoningDetails] = nonEmptyArray(r)
		case k.Is("function_call"):
			has[deltaFunctionCall] = r.Kind() == aireq.Object
		case k.Is("audio"):
			has[deltaAudio] = r.Kind() == aireq.Object
		}
		return true
	})
	return has != [numDeltaMembers]bool{}
}

// blockContent reads an Anthropic content_block.
func blockContent(r *aireq.Reader) bool {
	if r.Kind() != aireq.Object {
		return false
	}
	var typ aireq.Text
	var text, thinking bool
	r.Object(func(k aireq.Text) bool {
		switch {
		case k.Is("type"):
			typ, _ = r.ReadString()
		case k.Is("text"):
			text = nonEmptyString(r)
		case k.Is("thinking"):
			thinking = nonEmptyString(r)
		}
		return true
	})
	switch {
	case len(typ.Raw()) == 0:
		return false
	case typ.Is("text"):
		return text
	case typ.Is("thinking"):
		return thinking
	}
	return true
}

// nonEmptyString reads a string value and reports whether it is one and
// not empty.
func nonEmptyString(r *aireq.Reader) bool {
	s, ok := r.ReadString()
	return ok && len(s.Raw()) > 0
}

// nonEmptyArray reads an array value and reports whether it is one and has
// an element.
func nonEmptyArray(r *aireq.Reader) bool {
	n := 0
	r.Array(func() bool {
		n++
		return true
	})
	return n > 0
}
