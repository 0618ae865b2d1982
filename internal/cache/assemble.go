package cache

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Errors from an Assembler.
var (
	// ErrNotChunk is returned by Add for data that is not a
	// chat.completion.chunk (not JSON, an error event, another object).
	ErrNotChunk = errors.New("cache: the event is not a chat.completion.chunk")
	// ErrTooLarge is returned by Add once the stream has passed the
	// Assembler's limit; the answer is then not worth keeping.
	ErrTooLarge = errors.New("cache: the streamed answer is larger than the limit")
	// ErrIncomplete is returned by Result when no choice was seen or a
	// choice has no finish_reason: the stream did not end properly.
	ErrIncomplete = errors.New("cache: the streamed answer is incomplete")
)

// Assembler rebuilds the chat.completion that a stream of
// chat.completion.chunk events amounts to, so a streamed answer can be
// stored and later served to a non-streaming request (or replayed).
//
// Feed it the data payload of every event with Add, in order; then call
// Result. Deltas are joined per choice index: content, refusal and any
// other string field (such as reasoning_content) are concatenated; tool
// calls are assembled by their index, with id, type and name taken from
// the first delta that has them and arguments concatenated; the legacy
// function_call likewise; logprobs token lists are concatenated; other
// non-string delta fields keep their last value. id, created, model,
// system_fingerprint and service_tier come from the first chunk that has
// them, usage from the last.
//
// An Assembler is not safe for concurrent use.
type Assembler struct {
	limit int64
	n     int64
	err   error
	added bool
	c     completion
}

// NewAssembler returns an Assembler that gives up with ErrTooLarge once
// the payloads added exceed limit bytes; 0 means no limit. Pass
// Cache.MaxEntryBytes so as not to accumulate what the cache would refuse.
func NewAssembler(limit int64) *Assembler { return &Assembler{limit: limit} }

// envelope is what a chat.completion and its chunks share, besides their
// choices.
type envelope struct {
	ID                json.RawMessage `json:"id"`
	Object            *string         `json:"object"`
	Created           json.RawMessage `json:"created"`
	Model             json.RawMessage `json:"model"`
	SystemFingerprint json.RawMessage `json:"system_fingerprint"`
	ServiceTier       json.RawMessage `json:"service_tier"`
	Usage             json.RawMessage `json:"usage"`
}

// chunk is the part of a chat.completion.chunk the Assembler reads.
type chunk struct {
	envelope
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Index        int             `json:"index"`
		Delta        json.RawMessage `json:"delta"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason json.RawMessage `json:"finish_reason"`
	} `json:"choices"`
}

// Add takes the data of one event; it keeps no reference to data, so the
// caller may reuse it. The [DONE] sentinel is ignored. After an error,
// every later Add and Result return the same error.
func (a *Assembler) Add(data []byte) error {
	if a.err != nil {
		return a.err
	}
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return nil
	}
	a.n += int64(len(data))
	if a.limit > 0 && a.n > a.limit {
		a.err = ErrTooLarge
		return a.err
	}
	var ck chunk
	if json.Unmarshal(data, &ck) != nil || !isNull(ck.Error) ||
		(ck.Object != nil && *ck.Object != "chat.completion.chunk") ||
		bytes.TrimSpace(data)[0] != '{' {
		a.err = ErrNotChunk
		return a.err
	}
	a.added = true
	c := &a.c
	first(&c.id, ck.ID)
	first(&c.created, ck.Created)
	first(&c.model, ck.Model)
	first(&c.fingerprint, ck.SystemFingerprint)
	first(&c.tier, ck.ServiceTier)
	if u := compact(ck.Usage); u != nil {
		c.usage = u
	}
	for _, cc := range ck.Choices {
		ch := c.choice(cc.Index)
		ch.addDelta(cc.Delta)
		ch.addLogprobs(cc.Logprobs)
		if !isNull(cc.FinishReason) {
			ch.finish = compact(cc.FinishReason)
		}
	}
	return nil
}

// first sets *dst to the compacted src if *dst is still unset.
func first(dst *json.RawMessage, src json.RawMessage) {
	if *dst == nil {
		*dst = compact(src)
	}
}

func (ch *choice) addDelta(delta []byte) {
	members(delta, func(key string, val []byte) {
		switch key {
		case "role":
			if s, ok := stringValue(val); ok && len(s) > 0 {
				ch.role = string(s)
			}
		case "tool_calls":
			ch.addToolCalls(val)
		case "function_call":
			if ch.fn == nil {
				ch.fn = &toolCall{}
			}
			ch.fn.addFunction(val)
		default:
			if s, ok := stringValue(val); ok {
				t := ch.text(key)
				t.val, t.set = append(t.val, s...), true
			} else if !isNull(val) {
				ch.setRaw(key, compact(val))
			}
		}
	})
}

// addToolCalls adds a delta's tool_calls; a call without an index takes
// its position in the list.
func (ch *choice) addToolCalls(list []byte) {
	var calls []json.RawMessage
	if json.Unmarshal(list, &calls) != nil {
		return
	}
	for pos, raw := range calls {
		var tc struct {
			Index *int    `json:"index"`
			ID    *string `json:"id"`
			Type  *string `json:"type"`
		}
		if json.Unmarshal(raw, &tc) != nil {
			continue
		}
		idx := pos
		if tc.Index != nil {
			idx = *tc.Index
		}
		t := ch.tool(idx)
		if tc.ID != nil && t.id == "" {
			t.id = *tc.ID
		}
		if tc.Type != nil && t.typ == "" {
			t.typ = *tc.Type
		}
		members(raw, func(key string, val []byte) {
			if key == "function" {
				t.addFunction(val)
			}
		})
	}
}

// addFunction adds a {"name", "arguments"} delta.
func (t *toolCall) addFunction(fn []byte) {
	members(fn, func(key string, val []byte) {
		s, ok := stringValue(val)
		if !ok {
			return
		}
		switch key {
		case "name":
			if t.name == "" {
				t.name = string(s)
			}
		case "arguments":
			t.args = append(t.args, s...)
		}
	})
}

func (ch *choice) addLogprobs(raw []byte) {
	if isNull(raw) {
		return
	}
	var lp struct {
		Content []json.RawMessage `json:"content"`
		Refusal []json.RawMessage `json:"refusal"`
	}
	if json.Unmarshal(raw, &lp) != nil {
		return
	}
	if ch.logprobs == nil {
		ch.logprobs = &logprobs{}
	}
	l := ch.logprobs
	for _, v := range lp.Content {
		l.content, l.contentSet = append(l.content, element(v)), true
	}
	for _, v := range lp.Refusal {
		l.refusal, l.refusalSet = append(l.refusal, element(v)), true
	}
	l.contentSet = l.contentSet || lp.Content != nil
	l.refusalSet = l.refusalSet || lp.Refusal != nil
}

// element returns a list element compacted, null staying null.
func element(v json.RawMessage) json.RawMessage {
	if c := compact(v); c != nil {
		return c
	}
	return json.RawMessage("null")
}

// Result returns the assembled chat.completion JSON. It returns
// ErrIncomplete when no chunk with a choice was added or a choice has no
// finish_reason, and the error of an earlier Add if there was one.
func (a *Assembler) Result() ([]byte, error) {
	if a.err != nil {
		return nil, a.err
	}
	if !a.added || len(a.c.choices) == 0 {
		return nil, ErrIncomplete
	}
	for _, ch := range a.c.choices {
		if ch.finish == nil {
			return nil, ErrIncomplete
		}
	}
	return a.c.render(), nil
}
