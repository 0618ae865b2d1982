package transport

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// request is what the transport knows of a request's JSON body, read once.
type request struct {
	body      []byte // nil: no body, or too large to keep (then replay is off)
	replay    bool   // the body can be sent more than once
	model     []byte // the top-level "model" value, unquoted; nil if none
	modelAt   [2]int // its span in body, quotes included
	stream    bool
	maxTokens int
}

// readRequest buffers req's body (up to limit bytes) and reads the fields
// the transport needs from it. A body over the limit is left unread and
// the request can be sent only once.
func readRequest(req *http.Request, limit int64) (request, error) {
	var r request
	if req.Body == nil || req.Body == http.NoBody {
		r.replay = true
		return r, nil
	}
	if req.ContentLength > limit {
		return r, nil
	}
	var buf []byte
	if n := req.ContentLength; n > 0 {
		buf = make([]byte, n)
		if _, err := io.ReadFull(req.Body, buf); err != nil {
			return r, fmt.Errorf("transport: reading request body: %w", err)
		}
	} else {
		b, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
		if err != nil {
			return r, fmt.Errorf("transport: reading request body: %w", err)
		}
		if int64(len(b)) > limit {
			// Too large to keep: glue what was read back in front.
			req.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}
			return r, nil
		}
		buf = b
	}
	req.Body.Close()
	r.body, r.replay = buf, true
	r.scan()
	return r, nil
}

// scan reads the top-level "model", "stream" and "max_tokens" (or
// "max_completion_tokens") of a JSON object body. Anything that is not a
// JSON object leaves the fields empty.
func (r *request) scan() {
	s := scanner{b: r.body}
	if !s.expect('{') {
		return
	}
	for {
		s.space()
		if s.peek() == '}' {
			return
		}
		kStart, kEnd, ok := s.str()
		if !ok || !s.expect(':') {
			return
		}
		s.space()
		vStart := s.i
		if !s.value() {
			return
		}
		key, val := r.body[kStart+1:kEnd-1], r.body[vStart:s.i]
		switch string(key) {
		case "model":
			if len(val) >= 2 && val[0] == '"' {
				r.model, r.modelAt = val[1:len(val)-1], [2]int{vStart, s.i}
			}
		case "stream":
			r.stream = string(val) == "true"
		case "max_tokens", "max_completion_tokens":
			if n, err := strconv.Atoi(string(val)); err == nil && n > 0 {
				r.maxTokens = n
			}
		}
		if !s.expect(',') {
			return
		}
	}
}

// withModel returns the body with its "model" value replaced.
func (r *request) withModel(model string) []byte {
	if r.model == nil || string(r.model) == model {
		return r.body
	}
	q := strconv.Quote(model)
	out := make([]byte, 0, len(r.body)-(r.modelAt[1]-r.modelAt[0])+len(q))
	out = append(out, r.body[:r.modelAt[0]]...)
	out = append(out, q...)
	return append(out, r.body[r.modelAt[1]:]...)
}

// tokens estimates the tokens a request will use: about four bytes a token
// of input, plus the output it asks for.
func (r *request) tokens() int { return len(r.body)/4 + r.maxTokens }

// scanner walks JSON just well enough to skip values; it never allocates.
type scanner struct {
	b []byte
	i int
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
