package aireq

import "bytes"

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
	for i := start + 1; ; i++ {
		if i = s.quote(i); i < 0 {
			return 0, 0, false
		}
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		k := i
		for s.b[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			s.i = i + 1
			return start, s.i, true
		}
	}
}

// quote returns the index of the first '"' at or after i, or -1.
func (s *scanner) quote(i int) int {
	// Keys and most values are short: walking them beats a call.
	for end := min(i+16, len(s.b)); i < end; i++ {
		if s.b[i] == '"' {
			return i
		}
	}
	if j := bytes.IndexByte(s.b[i:], '"'); j >= 0 {
		return i + j
	}
	return -1
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
	for s.i < len(s.b) && !delimiter(s.b[s.i]) {
		s.i++
	}
	return s.i > start
}

// delimiter reports whether c ends a number or literal.
func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\n', '\r', '\t':
		return true
	}
	return false
}
