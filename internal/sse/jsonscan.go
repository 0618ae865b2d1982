package sse

// A small validating JSON scanner for the commit-point rules: it finds the
// raw values of a few keys in an object without decoding anything or
// allocating. It accepts exactly what encoding/json accepts, and gives up
// (status bail) where matching encoding/json would take more than raw bytes:
// nesting deeper than maxDepth and escaped keys. HasContent then falls back
// to encoding/json.

// maxDepth bounds the nesting the scanner follows; stream chunks nest about
// six levels.
const maxDepth = 64

// status is the outcome of a scan.
type status uint8

const (
	scanOK        status = iota
	scanNotObject        // valid or not, the value is not an object
	scanInvalid          // not valid JSON
	scanBail             // cannot decide without encoding/json
)

type scanner struct {
	b     []byte
	i     int
	depth int
	bail  bool
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *scanner) ws() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

// fields scans obj, which must be one JSON object with optional white
// space around it, and stores in out[k] the raw value of the last member
// named keys[k], or nil.
func fields(obj []byte, keys []string, out [][]byte) status {
	s := scanner{b: obj}
	s.ws()
	if s.i == len(s.b) {
		return scanInvalid
	}
	if s.b[s.i] != '{' {
		return scanNotObject
	}
	s.i++
	s.depth = 1
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return s.end()
	}
	for {
		s.ws()
		k0 := s.i
		if !s.str() {
			return s.fail()
		}
		key := s.b[k0+1 : s.i-1]
		s.ws()
		if s.i == len(s.b) || s.b[s.i] != ':' {
			return scanInvalid
		}
		s.i++
		s.ws()
		v0 := s.i
		if !s.value() {
			return s.fail()
		}
		for k, name := range keys {
			if string(key) == name {
				out[k] = s.b[v0:s.i]
			}
		}
		if hasByte(key, '\\') {
			s.bail = true // an escaped key might decode to one of keys
		}
		s.ws()
		if s.i == len(s.b) {
			return scanInvalid
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return s.end()
		default:
			return scanInvalid
		}
	}
}

// end checks that only white space follows the object.
func (s *scanner) end() status {
	s.ws()
	switch {
	case s.i != len(s.b):
		return scanInvalid
	case s.bail:
		return scanBail
	}
	return scanOK
}

func (s *scanner) fail() status {
	if s.bail {
		return scanBail
	}
	return scanInvalid
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// value checks and skips one value starting at i.
func (s *scanner) value() bool {
	if s.i == len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.num()
	}
	return false
}

func (s *scanner) enter() bool {
	s.depth++
	if s.depth > maxDepth {
		s.bail = true
		return false
	}
	s.i++
	s.ws()
	return true
}

func (s *scanner) object() bool {
	if !s.enter() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.ws()
		if !s.str() {
			return false
		}
		s.ws()
		if s.i == len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !s.value() {
			return false
		}
		s.ws()
		if s.i == len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *scanner) array() bool {
	if !s.enter() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.ws()
		if !s.value() {
			return false
		}
		s.ws()
		if s.i == len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// plain marks the bytes that stand for themselves inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str checks and skips a string; invalid UTF-8 passes, as in encoding/json.
func (s *scanner) str() bool {
	if s.i == len(s.b) || s.b[s.i] != '"' {
		return false
	}
	for s.i++; s.i < len(s.b); {
		for s.i < len(s.b) && plain[s.b[s.i]] {
			s.i++
		}
		if s.i == len(s.b) {
			return false
		}
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !s.escape() {
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

func (s *scanner) escape() bool {
	if s.i+1 >= len(s.b) {
		return false
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		if s.i+6 > len(s.b) {
			return false
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		s.i += 6
		return true
	}
	return false
}

func (s *scanner) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// num checks and skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i == len(s.b):
		return false
	case s.b[s.i] == '0':
		s.i++
	case '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits.
func (s *scanner) digits() bool {
	i0 := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > i0
}

// arrayIter walks the elements of a raw array that fields has validated.
type arrayIter struct {
	s    scanner
	elem []byte
}

func newArrayIter(raw []byte) arrayIter {
	it := arrayIter{s: scanner{b: raw}}
	if len(raw) == 0 || raw[0] != '[' {
		it.s.i = len(raw) // not an array: no elements
		return it
	}
	it.s.i = 1
	return it
}

// next moves to the next element and reports whether there is one.
func (it *arrayIter) next() bool {
	s := &it.s
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] == ']' {
		return false
	}
	if s.b[s.i] == ',' {
		s.i++
		s.ws()
	}
	e0 := s.i
	if !s.value() {
		s.i = len(s.b)
		return false
	}
	it.elem = s.b[e0:s.i]
	return true
}
