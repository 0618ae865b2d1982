package aireq

// A Reader reads one JSON value in a single pass without allocating. It
// hands the members of an object, and the elements of an array, to a
// function one at a time; the function reads the value in turn or leaves
// it, and what it leaves is skipped. It is the one JSON reader of the
// gateway: aierr reads provider error bodies with it, and the stream
// reader its chunks.
//
// Keys are read as encoding/json reads them: compare them with Text.Is,
// which decodes escapes ("con\u0074ent" is content) and reads invalid
// UTF-8 and lone surrogates as U+FFFD. Object reports every member in
// order, duplicates included, so a caller sees them: one that keeps the
// last value of each key reads the object as encoding/json does into a map
// or a struct; one that must refuse duplicates (as Scan does) notes the
// keys it has seen.
//
// A Reader from NewReader is lenient: it skips values without checking
// them (a number or literal is any run of bytes up to a delimiter) and
// reads a cut input as far as it goes, which suits bodies that may be
// truncated or are validated elsewhere. One from NewStrictReader accepts
// exactly what encoding/json accepts (json.Valid): string escapes and
// control bytes, numbers, literals, nesting up to 10000 levels; with End
// it tells whether anything follows the value.
//
// A syntax error, or the end of the input inside a value, stops a Reader:
// every method then reports failure, and what was read before stands. A
// number that the end of the input cuts inside an object or array is such
// an error (it may be the start of a longer one); true, false and null are
// read whole. A Reader is not safe for concurrent use.
type Reader struct {
	b      []byte
	i      int // the next byte to read
	depth  int // objects and arrays open
	strict bool
	failed bool // a syntax error, or a callback stopped the reading
}

// NewReader returns a lenient Reader of data.
func NewReader(data []byte) Reader { return Reader{b: data} }

// NewStrictReader returns a Reader of data that accepts only what
// encoding/json accepts.
func NewStrictReader(data []byte) Reader { return Reader{b: data, strict: true} }

// Kind is the kind of a JSON value, as its first byte tells it.
type Kind uint8

// The kinds of values.
const (
	Invalid Kind = iota // no value: the end of the input, an error, or a byte no value starts with
	Object
	Array
	String
	Number
	Bool
	Null
)

var kinds = func() (t [256]Kind) {
	t['{'], t['['], t['"'] = Object, Array, String
	t['t'], t['f'], t['n'], t['-'] = Bool, Bool, Null, Number
	for c := '0'; c <= '9'; c++ {
		t[c] = Number
	}
	return t
}()

// maxDepth is how deeply encoding/json lets values nest.
const maxDepth = 10000

// Kind returns the kind of the value at the reader's position, reading
// nothing.
func (r *Reader) Kind() Kind {
	if r.failed {
		return Invalid
	}
	r.space()
	if r.i == len(r.b) {
		return Invalid
	}
	return kinds[r.b[r.i]]
}

// Object reads the object at the reader's position. It calls fn with each
// member's key, the reader at the member's value, in order, until fn
// returns false. fn may read that one value with r's methods, or leave it
// to be skipped. Object reports whether it read the whole object: false,
// reading nothing, when the value there is not an object; false, stopping
// the reader, on a syntax error, a cut input, or when fn returns false.
func (r *Reader) Object(fn func(key Text) bool) bool {
	if r.Kind() != Object || !r.enter() {
		return false
	}
	if r.peek() == '}' {
		return r.leave()
	}
	for {
		if r.peek() != '"' {
			return r.fail()
		}
		var key Text
		var ok bool
		if r.strict { // not r.str(): a call less per key
			key, ok = r.strictStr()
		} else {
			key, ok = r.lenientString()
		}
		if !ok {
			return r.fail()
		}
		r.space()
		if r.peek() != ':' {
			return r.fail()
		}
		r.i++
		r.space()
		start := r.i
		if !fn(key) || !r.skipUnread(start) {
			return r.fail()
		}
		r.space()
		switch r.peek() {
		case ',':
			r.i++
			r.space()
		case '}':
			return r.leave()
		default:
			return r.fail()
		}
	}
}

// Array reads the array at the reader's position as Object reads an
// object, calling fn for each element.
func (r *Reader) Array(fn func() bool) bool {
	if r.Kind() != Array || !r.enter() {
		return false
	}
	if r.peek() == ']' {
		return r.leave()
	}
	for {
		start := r.i
		if !fn() || !r.skipUnread(start) {
			return r.fail()
		}
		r.space()
		switch r.peek() {
		case ',':
			r.i++
			r.space()
		case ']':
			return r.leave()
		default:
			return r.fail()
		}
	}
}

// ReadString reads the string at the reader's position. It reports false,
// reading nothing, when the value there is not a string, and false,
// stopping the reader, when the string is cut (or, strict, invalid).
func (r *Reader) ReadString() (Text, bool) {
	if r.Kind() != String {
		return Text{}, false
	}
	var t Text
	var ok bool
	if r.strict {
		t, ok = r.strictStr()
	} else {
		t, ok = r.lenientString()
	}
	if !ok {
		r.failed = true
	}
	return t, ok
}

// Value reads the value at the reader's position, of any kind, and
// returns it as the input spells it; false, stopping the reader, when
// there is none.
func (r *Reader) Value() ([]byte, bool) {
	if r.failed {
		return nil, false
	}
	r.space()
	start := r.i
	if !r.skip() {
		return nil, false
	}
	return r.b[start:r.i], true
}

// End reports whether the reader met no error and only white space is
// left to read.
func (r *Reader) End() bool {
	if r.failed {
		return false
	}
	r.space()
	return r.i == len(r.b)
}

func (r *Reader) enter() bool {
	r.depth++
	if r.strict && r.depth > maxDepth {
		return r.fail()
	}
	r.i++
	r.space()
	return true
}

func (r *Reader) leave() bool {
	r.i++
	r.depth--
	return true
}

func (r *Reader) fail() bool {
	r.failed = true
	return false
}

// skipUnread skips the value at start if a callback left it unread, and
// reports whether the reader is still good.
func (r *Reader) skipUnread(start int) bool {
	if r.failed {
		return false
	}
	return r.i != start || r.skip()
}

func (r *Reader) space() {
	for r.i < len(r.b) {
		if c := r.b[r.i]; c > ' ' || c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return
		}
		r.i++
	}
}

func (r *Reader) peek() byte {
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// str reads the string at r.i, its opening quote.
func (r *Reader) str() (Text, bool) {
	if r.strict {
		return r.strictStr()
	}
	return r.lenientString()
}

// skip skips the value at r.i (after white space), or stops the reader.
func (r *Reader) skip() bool {
	var ok bool
	switch {
	case r.i == len(r.b):
		ok = false
	case r.b[r.i] == '"': // the most common value, and no nesting to check
		_, ok = r.str()
	case r.strict:
		ok = r.skipStrict()
	default:
		ok = r.skipLenient()
	}
	if !ok {
		r.failed = true
	}
	return ok
}
