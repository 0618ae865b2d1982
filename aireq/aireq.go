// Package aireq reads the few fields of an AI API request body that routing
// needs — the model, whether it streams, how many tokens it may produce —
// without decoding the rest, and rewrites the model for another target.
// It works on OpenAI chat completion and embedding bodies and Anthropic
// Messages bodies alike.
//
// The package uses only the standard library and allocates nothing to scan.
package aireq

import (
	"strconv"
	"strings"
)

// Fields are the top-level fields of a JSON request body that routing
// needs. Byte slices point into the scanned body.
type Fields struct {
	// Model is the "model" value, still JSON-escaped; nil if absent or not
	// a string. ModelAt is its span in the body, quotes included.
	Model   []byte
	ModelAt [2]int
	// Stream is "stream": true.
	Stream bool
	// IncludeUsage is "stream_options": {"include_usage": true};
	// StreamOptions reports that the body has a "stream_options" member.
	IncludeUsage  bool
	StreamOptions bool
	// MaxTokens is "max_tokens" or "max_completion_tokens"; 0 if absent.
	MaxTokens int
	// User is the "user" string (OpenAI's end-user id), still escaped;
	// nil if absent.
	User []byte
	// Messages is the first byte of the "messages" value ('[' for an
	// array, 'n' for null, '"' for a string, …); 0 if absent.
	Messages byte
	// Object reports that the body is a JSON object (its top level could
	// be read to the end).
	Object bool
}

// Scan reads body's fields. A body that is not a JSON object, or is cut
// short, leaves the fields found before the problem and Object false.
func Scan(body []byte) Fields {
	var f Fields
	s := scanner{b: body}
	s.object(func(key []byte, vStart, vEnd int) bool {
		val := body[vStart:vEnd]
		switch string(key) {
		case "model":
			if len(val) >= 2 && val[0] == '"' {
				f.Model, f.ModelAt = val[1:len(val)-1], [2]int{vStart, vEnd}
			}
		case "stream":
			f.Stream = string(val) == "true"
		case "messages":
			f.Messages = val[0]
		case "user":
			if len(val) >= 2 && val[0] == '"' {
				f.User = val[1 : len(val)-1]
			}
		case "stream_options":
			f.StreamOptions = true
			in := scanner{b: val}
			var done bool
			in.object(func(k []byte, s, e int) bool {
				if string(k) == "include_usage" {
					f.IncludeUsage = string(val[s:e]) == "true"
				}
				return true
			}, &done)
		case "max_tokens", "max_completion_tokens":
			if n, err := strconv.Atoi(string(val)); err == nil && n > 0 {
				f.MaxTokens = n
			}
		}
		return true
	}, &f.Object)
	return f
}

// Members calls fn with the key (unquoted, still escaped) and the raw
// value of each member of the JSON object at the start of obj (white space
// around it allowed), in order, until fn returns false. It reports whether
// it read the whole object and fn never stopped it. Values are skipped,
// not validated: pair it with encoding/json where that matters.
func Members(obj []byte, fn func(key, value []byte) bool) bool {
	s := scanner{b: obj}
	stopped, complete := false, false
	s.object(func(key []byte, vStart, vEnd int) bool {
		if !fn(key, obj[vStart:vEnd]) {
			stopped = true
			return false
		}
		return true
	}, &complete)
	return complete && !stopped
}

// WithModel returns body with its "model" value (at f.ModelAt) replaced by
// model, or body itself when the model is absent or already that.
func (f Fields) WithModel(body []byte, model string) []byte {
	if f.Model == nil || string(f.Model) == model {
		return body
	}
	q := strconv.Quote(model)
	out := make([]byte, 0, len(body)-(f.ModelAt[1]-f.ModelAt[0])+len(q))
	out = append(out, body[:f.ModelAt[0]]...)
	out = append(out, q...)
	return append(out, body[f.ModelAt[1]:]...)
}

// WithIncludeUsage returns body asking for a streamed answer's usage
// ("stream_options": {"include_usage": true} added as its first member), or
// body itself when it already has stream_options or is not an object. A
// gateway uses it to price streamed answers whose clients did not ask.
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

// Tokens estimates the tokens a request of bodyLen bytes will use: about
// four bytes a token of input, plus the output it asks for.
func (f Fields) Tokens(bodyLen int) int { return bodyLen/4 + f.MaxTokens }

// scanner walks JSON just well enough to skip values; it never allocates.
type scanner struct {
	b []byte
	i int
}

// object calls fn for each member of the object at the scanner's position,
// with the key (unquoted, still escaped) and the value's span, until fn
// returns false, and sets *complete when the object ends properly.
func (s *scanner) object(fn func(key []byte, vStart, vEnd int) bool, complete *bool) {
	if !s.expect('{') {
		return
	}
	s.space()
	if s.peek() == '}' {
		*complete = true
		return
	}
	for {
		kStart, kEnd, ok := s.str()
		if !ok || !s.expect(':') {
			return
		}
		s.space()
		vStart := s.i
		if !s.value() {
			return
		}
		if !fn(s.b[kStart+1:kEnd-1], vStart, s.i) {
			return
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			*complete = true
			return
		default:
			return
		}
	}
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\r' || s.b[s.i] == '\t') {
		s.i++
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) bool {
	s.space()
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// str consumes a string and returns its span, quotes included.
func (s *scanner) str() (start, end int, ok bool) {
	s.space()
	if s.peek() != '"' {
		return 0, 0, false
	}
	start = s.i
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return start, s.i, true
		}
	}
	return 0, 0, false
}

// value consumes one JSON value of any kind.
func (s *scanner) value() bool {
	switch s.peek() {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	start := s.i
	for s.i < len(s.b) && strings.IndexByte(",}] \n\r\t", s.b[s.i]) < 0 {
		s.i++
	}
	return s.i > start
}
