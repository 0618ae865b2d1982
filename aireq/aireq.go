// Package aireq reads the few fields of an AI API request body that routing
// needs — the model, whether it streams, how many tokens it may produce —
// without decoding the rest, and rewrites the model for another target.
// It works on OpenAI chat completion and embedding bodies and Anthropic
// Messages bodies alike.
//
// Keys are matched the way the upstream's decoder reads them: escapes
// decoded ("mod\u0065l" is model), nested objects skipped (a "model" inside
// metadata does not count). Where decoders disagree — a routing field given
// twice, a key that differs from one only in case ("Model", which
// encoding/json matches), an invalid key, a stream flag that is not a
// boolean — Scan reports a [Conflict] instead of guessing.
//
// A gateway should refuse a body with a Conflict (400, naming
// Conflict.Field), not rewrite it into a canonical form. A client that
// sends one is broken or hostile, and no rewrite is safe: the gateway
// would have to pick one reading (encoding/json's last duplicate, say)
// while an upstream might hold another (Python's json keeps the last,
// other decoders the first, Go's matches "Model" too, json/v2 refuses
// duplicates), and routing, allow lists and prices would follow the
// gateway's reading while the upstream ran its own — the smuggling this
// exists to stop. Refusing costs well-formed clients nothing.
//
// Scan skips what it does not read without validating it; ScanValid
// validates it in the same pass, exactly as json.Valid would (a fuzz test
// holds it to that), so a body is read once to route and to refuse.
//
// Reader and Text are the JSON reader underneath, exported for the other
// readers of JSON in the gateway (provider error bodies, stream chunks):
// one pass, no allocation, keys compared decoded, every member reported so
// that duplicates are seen, and either lenient or exactly as strict as
// encoding/json.
//
// The package uses only the standard library and allocates nothing to
// scan.
package aireq

import "bytes"

// Fields are the top-level fields of a JSON request body that routing
// needs. Byte slices point into the scanned body. Where a field appears
// more than once the last counts, as in encoding/json, but Conflict is
// then set: refuse such a body rather than read its fields.
type Fields struct {
	// Model is the "model" value, still JSON-escaped; nil if absent or not
	// a string. ModelAt is its span in the body, quotes included. Compare
	// models with ModelName, never with these bytes: "ch\u0065ap" is
	// cheap.
	Model   []byte
	ModelAt [2]int
	// Stream is "stream": true.
	Stream bool
	// IncludeUsage is "stream_options": {"include_usage": true};
	// StreamOptions reports that the body has a "stream_options" member.
	IncludeUsage  bool
	StreamOptions bool
	// MaxTokens is the larger of "max_tokens" and "max_completion_tokens":
	// 0 if absent, null or not positive; a number that is not an integer
	// (1e3, 1.5) is rounded up, and the most is MaxTokensCap.
	MaxTokens int
	// User is the "user" string (OpenAI's end-user id), still escaped;
	// nil if absent. UserID decodes it.
	User []byte
	// Messages is the first byte of the "messages" value ('[' for an
	// array, 'n' for null, '"' for a string, …); 0 if absent.
	Messages byte
	// Object reports that the body is a JSON object (its top level could
	// be read to the end).
	Object bool
	// Valid, set by ScanValid only, reports that the body is a JSON
	// object that json.Valid accepts, nothing but white space after it.
	Valid bool
	// Conflict is the first routing field that decoders may read
	// differently; its zero value (Reason "") means none. A gateway
	// should refuse a body that has one, before using any other field.
	Conflict Conflict
}

// Scan reads body's fields. A body that is not a JSON object, or is cut
// short, leaves the fields found before the problem and Object false.
//
// Keys are compared decoded, so an escaped key counts as its plain
// spelling; a key without escapes (the common case) is compared in place.
// Among the routing and policy fields (model, stream, stream_options, n,
// max_tokens, max_completion_tokens, tools, tool_choice, response_format,
// user, messages, input and prompt, and include_usage inside
// stream_options) Scan reports a duplicate, a case variant, or a wrong
// type of stream, include_usage or the max tokens as a Conflict; and any
// top-level key, or model or user value, that is not a valid string
// (ReasonInvalid). Values are skipped, not validated: pair Scan with
// json.Valid, or use ScanValid.
func Scan(body []byte) Fields {
	r := NewReader(body)
	return scan(&r)
}

// ScanValid is Scan that also validates what it skips, as a strict Reader
// does: one pass over body decides both its fields and Valid, which is
// exactly json.Valid(body) && Object. On an invalid body the fields are
// those found before the error; refuse it before reading them.
func ScanValid(body []byte) Fields {
	r := NewStrictReader(body)
	f := scan(&r)
	f.Valid = f.Object && r.End()
	return f
}

// scan reads the fields of the object at r.
func scan(r *Reader) Fields {
	var f Fields
	var maxTok, maxComp int
	var seen uint32
	f.Object = r.Object(func(key Text) bool {
		vStart := r.i
		val, ok := r.Value()
		if !ok {
			return false
		}
		vEnd := r.i
		fld, exact, valid := classify(key.Raw(), false)
		switch {
		case !valid:
			f.conflict(fld, ReasonInvalid)
			return true
		case fld == noField:
			return true
		case !exact:
			f.conflict(fld, ReasonCaseVariant)
			return true
		case seen&(1<<fld) != 0:
			f.conflict(fld, ReasonDuplicate)
		}
		seen |= 1 << fld
		switch fld {
		case fieldModel:
			f.Model, f.ModelAt = nil, [2]int{}
			if str, ok := stringContent(val); ok {
				f.Model, f.ModelAt = str, [2]int{vStart, vEnd}
				f.checkString(fld, str)
			}
		case fieldUser:
			f.User = nil
			if str, ok := stringContent(val); ok {
				f.User = str
				f.checkString(fld, str)
			}
		case fieldStream:
			f.Stream = f.boolean(fld, val)
		case fieldMessages:
			f.Messages = val[0]
		case fieldStreamOptions:
			f.StreamOptions = true
			f.streamOptions(val)
		case fieldMaxTokens:
			maxTok = f.tokens(fld, val)
		case fieldMaxCompletionTokens:
			maxComp = f.tokens(fld, val)
		}
		return true
	})
	f.MaxTokens = max(maxTok, maxComp)
	return f
}

// streamOptions reads include_usage from the stream_options value val.
func (f *Fields) streamOptions(val []byte) {
	f.IncludeUsage = false
	seen := false
	in := NewReader(val)
	in.Object(func(key Text) bool {
		v, ok := in.Value()
		if !ok {
			return false
		}
		fld, exact, valid := classify(key.Raw(), true)
		switch {
		case !valid:
			if fld == noField {
				fld = fieldStreamOptions
			}
			f.conflict(fld, ReasonInvalid)
			return true
		case fld == noField:
			return true
		case !exact:
			f.conflict(fld, ReasonCaseVariant)
			return true
		case seen:
			f.conflict(fld, ReasonDuplicate)
		}
		seen = true
		f.IncludeUsage = f.boolean(fld, v)
		return true
	})
}

// conflict records the first conflict.
func (f *Fields) conflict(fld field, reason string) {
	if f.Conflict.Reason == "" {
		f.Conflict = Conflict{Field: fld.String(), Reason: reason}
	}
}

// checkString reports a string value that decoders may read differently.
func (f *Fields) checkString(fld field, s []byte) {
	if !validString(s) {
		f.conflict(fld, ReasonInvalid)
	}
}

// boolean reads true, false or null (false); anything else is a conflict.
func (f *Fields) boolean(fld field, val []byte) bool {
	switch string(val) {
	case "true":
		return true
	case "false", "null":
	default:
		f.conflict(fld, ReasonType)
	}
	return false
}

// tokens reads a max tokens value; anything but a number or null is a
// conflict.
func (f *Fields) tokens(fld field, val []byte) int {
	n, ok := tokenCount(val)
	if !ok {
		f.conflict(fld, ReasonType)
	}
	return n
}

// stringContent returns the content of the string literal val.
func stringContent(val []byte) ([]byte, bool) {
	if len(val) >= 2 && val[0] == '"' {
		return val[1 : len(val)-1], true
	}
	return nil, false
}

// ModelName returns the model decoded as encoding/json decodes it (escapes
// resolved; invalid UTF-8 and lone surrogates as U+FFFD, which Conflict
// reports), or "" if absent or not a string. It is what to look up, allow
// and price: "ch\u0065ap" is "cheap".
func (f Fields) ModelName() string { return unquote(f.Model) }

// UserID returns the user decoded as ModelName decodes the model, or "".
func (f Fields) UserID() string { return unquote(f.User) }

// Members calls fn with the key (unquoted, still escaped) and the raw
// value of each member of the JSON object at the start of obj (white space
// around it allowed), in order, until fn returns false. It reports whether
// it read the whole object and fn never stopped it. It reads obj as a
// lenient Reader does: values are skipped, not validated (pair it with
// encoding/json where that matters). Keys are not decoded: a caller that
// matches them must treat a key with a backslash as unusual, or use
// Reader.Object, whose keys compare decoded.
func Members(obj []byte, fn func(key, value []byte) bool) bool {
	r := NewReader(obj)
	return r.Object(func(key Text) bool {
		v, ok := r.Value()
		return ok && fn(key.Raw(), v)
	})
}

// WithModel returns body with its "model" value (at f.ModelAt) replaced by
// model, written as a JSON string, or body itself when the model is absent
// or already decodes to model. Only the last "model" member is replaced:
// refuse a body with a Conflict before rewriting it.
func (f Fields) WithModel(body []byte, model string) []byte {
	if f.Model == nil || equalUnquoted(f.Model, model) {
		return body
	}
	out := make([]byte, 0, len(body)-(f.ModelAt[1]-f.ModelAt[0])+len(model)+2)
	out = append(out, body[:f.ModelAt[0]]...)
	out = appendQuoted(out, model)
	return append(out, body[f.ModelAt[1]:]...)
}

// Detached returns f with its slices copied out of the body it was read
// from, so that keeping f does not keep the body.
func (f Fields) Detached() Fields {
	f.Model, f.User = bytes.Clone(f.Model), bytes.Clone(f.User)
	return f
}

// WithIncludeUsage returns body asking for a streamed answer's usage
// ("stream_options": {"include_usage": true} added as its first member), or
// body itself when it already has stream_options or is not an object. A
// gateway uses it to price streamed answers whose clients did not ask.
// Keys are matched decoded, so an escaped "stream_\u006fptions" counts as
// stream_options and is not doubled.
func (f Fields) WithIncludeUsage(body []byte) []byte {
	if f.StreamOptions || !f.Object {
		return body
	}
	i := 0
	for i < len(body) && body[i] != '{' {
		i++
	}
	const member = `"stream_options":{"include_usage":true}`
	rest := body[i+1:]
	j := 0
	for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t' || rest[j] == '\r' || rest[j] == '\n') {
		j++
	}
	out := make([]byte, 0, len(body)+len(member)+1)
	out = append(out, body[:i+1]...)
	out = append(out, member...)
	if j < len(rest) && rest[j] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// WithIncludeUsageFields is WithIncludeUsage returning also the fields of
// the body it returns, as Scan (or ScanValid) of it would read them,
// without reading it again: f must be what Scan or ScanValid read of body.
func (f Fields) WithIncludeUsageFields(body []byte) ([]byte, Fields) {
	out := f.WithIncludeUsage(body)
	if len(out) == len(body) {
		return out, f
	}
	// The member goes in first, so every field after it moves by d.
	d := len(out) - len(body)
	moved := func(s []byte) []byte {
		if s == nil {
			return nil
		}
		at := cap(body) - cap(s) + d // s is a part of body
		return out[at : at+len(s) : at+len(s)]
	}
	f.Model, f.User = moved(f.Model), moved(f.User)
	if f.ModelAt != [2]int{} {
		f.ModelAt = [2]int{f.ModelAt[0] + d, f.ModelAt[1] + d}
	}
	f.StreamOptions, f.IncludeUsage = true, true
	return out, f
}

// Tokens estimates the tokens a request of bodyLen bytes will use: about
// four bytes a token of input, plus the output it asks for.
func (f Fields) Tokens(bodyLen int) int { return bodyLen/4 + f.MaxTokens }
