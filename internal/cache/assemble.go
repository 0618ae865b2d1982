package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"unicode/utf8"
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
// every later Add and Result return the same error. A chunk whose deltas
// decoders could read differently (a key given twice, a field that is a
// string in one delta and not in another, content that is not a string)
// is ErrNotChunk: such a stream is not worth keeping.
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
		if ch.addDelta(cc.Delta, false) != nil {
			a.err = ErrNotChunk
			return a.err
		}
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

// errMalformed is a delta or stored message that has no one reading: a
// key given twice, a field of the wrong type, a field that is a string in
// one delta and not in another.
var errMalformed = errors.New("cache: malformed message")

// addDelta adds a delta, or a stored message (whole: its tool calls are
// placed by position, not by any "index" they carry). Null members count
// as absent; a delta that is not an object adds nothing.
func (ch *choice) addDelta(delta []byte, stored bool) error {
	if dupKey(delta) {
		return errMalformed
	}
	var err error
	members(delta, func(key string, val []byte) {
		if err == nil {
			err = ch.addMember(key, val, stored)
		}
	})
	return err
}

func (ch *choice) addMember(key string, val []byte, stored bool) error {
	s, isString := stringValue(val)
	null := isNull(val)
	switch {
	case key == "tool_calls":
		return ch.addToolCalls(val, stored)
	case key == "function_call":
		if null {
			return nil
		}
		if ch.fn == nil {
			ch.fn = &toolCall{}
		}
		return ch.fn.addFunction(val)
	case null:
	case key == "role":
		if !isString {
			return errMalformed
		}
		if len(s) > 0 {
			ch.role = string(s)
		}
	case isString:
		if ch.raw(key) {
			return errMalformed
		}
		t := ch.text(key)
		t.val, t.set = append(t.val, s...), true
	case key == "content", key == "refusal", ch.hasText(key):
		return errMalformed // content parts have no delta form
	default:
		ch.setRaw(key, compact(val))
	}
	return nil
}

// addToolCalls adds a delta's tool_calls; a call without an index (or any
// call of a stored message) takes its position in the list.
func (ch *choice) addToolCalls(list []byte, stored bool) error {
	if isNull(list) {
		return nil
	}
	var calls []json.RawMessage
	if json.Unmarshal(list, &calls) != nil {
		return errMalformed
	}
	for pos, raw := range calls {
		if firstByte(raw) != '{' || dupKey(raw) {
			return errMalformed
		}
		idx := pos
		var err error
		members(raw, func(key string, val []byte) {
			if key == "index" && !stored && !isNull(val) && json.Unmarshal(val, &idx) != nil {
				err = errMalformed
			}
		})
		if err != nil {
			return err
		}
		t := ch.tool(idx)
		members(raw, func(key string, val []byte) {
			switch {
			case err != nil:
			case key == "function":
				err = t.addFunction(val)
			case key == "id":
				err = setFirst(&t.id, val)
			case key == "type":
				err = setFirst(&t.typ, val)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// addFunction adds a {"name", "arguments"} delta.
func (t *toolCall) addFunction(fn []byte) error {
	if isNull(fn) {
		return nil
	}
	if firstByte(fn) != '{' || dupKey(fn) {
		return errMalformed
	}
	var err error
	members(fn, func(key string, val []byte) {
		switch {
		case err != nil:
		case key == "name":
			err = setFirst(&t.name, val)
		case key == "arguments":
			s, ok := stringValue(val)
			if !ok && !isNull(val) {
				err = errMalformed
			}
			t.args = append(t.args, s...)
		}
	})
	return err
}

// setFirst sets *dst to the string val if *dst is still empty; val must
// be a string or null.
func setFirst(dst *string, val []byte) error {
	s, ok := stringValue(val)
	switch {
	case !ok && !isNull(val):
		return errMalformed
	case *dst == "":
		*dst = string(s)
	}
	return nil
}

// dupKey reports whether the object obj has a key twice, keys compared as
// decoders read them (escapes decoded, each invalid UTF-8 byte as U+FFFD):
// decoders disagree on which one counts.
func dupKey(obj []byte) bool {
	var keys []string
	var seen map[string]bool // once keys has grown long
	dup := false
	members(obj, func(k string, _ []byte) {
		if !utf8.ValidString(k) {
			k = string([]rune(k))
		}
		switch {
		case dup:
		case seen != nil:
			dup = seen[k]
			seen[k] = true
		case slices.Contains(keys, k):
			dup = true
		case len(keys) == 16:
			seen = make(map[string]bool, 2*len(keys))
			for _, k := range keys {
				seen[k] = true
			}
			seen[k] = true
		default:
			keys = append(keys, k)
		}
	})
	return dup
}

// firstByte returns the first byte of the JSON value raw, 0 if none.
func firstByte(raw []byte) byte {
	if raw = bytes.TrimSpace(raw); len(raw) > 0 {
		return raw[0]
	}
	return 0
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
