package aireq

// A strict Reader checks what it skips as encoding/json's scanner does,
// without recursion: one bit per open object or array (1 for an object)
// says which closing bracket and separators may come. Most values nest a
// few levels, so a word of bits is tried first; a deeper value is read
// again with room for maxDepth levels.

type validity uint8

const (
	invalid validity = iota
	valid
	tooDeep // deeper than the stack given
)

// skipStrict skips the value at r.i, or reports that it is not valid.
func (r *Reader) skipStrict() bool {
	start := r.i
	var stack [1]uint64
	switch r.validate(stack[:]) {
	case valid:
		return true
	case tooDeep:
		r.i = start
		return r.validateDeep()
	}
	return false
}

//go:noinline
func (r *Reader) validateDeep() bool {
	var stack [maxDepth/64 + 1]uint64
	return r.validate(stack[:]) == valid
}

// validate skips the value at r.i, checking it; stack holds a bit for each
// container open in it.
func (r *Reader) validate(stack []uint64) validity {
	b, i, n := r.b, r.i, 0
	var ok bool
value:
	for {
		i = space(b, i)
		if i == len(b) {
			return invalid
		}
		switch c := b[i]; c {
		case '{', '[':
			if r.depth+n >= maxDepth {
				return invalid
			}
			if n == len(stack)*64 {
				return tooDeep
			}
			if bit := uint64(1) << (n % 64); c == '{' {
				stack[n/64] |= bit
			} else {
				stack[n/64] &^= bit
			}
			n++
			if i = space(b, i+1); i < len(b) && b[i] == c+2 { // '{'+2 is '}', '['+2 is ']'
				i++
				n--
				break // an empty object or array
			}
			if c == '{' {
				if i, ok = key(b, i); !ok {
					return invalid
				}
			}
			continue value
		case '"':
			if i, _, ok = strictString(b, i); !ok {
				return invalid
			}
		case 't':
			if i, ok = literal(b, i, "true"); !ok {
				return invalid
			}
		case 'f':
			if i, ok = literal(b, i, "false"); !ok {
				return invalid
			}
		case 'n':
			if i, ok = literal(b, i, "null"); !ok {
				return invalid
			}
		default:
			if i, ok = skipNumber(b, i); !ok {
				return invalid
			}
		}
		// After a value: close what it ends until a container has another
		// member.
		for {
			if n == 0 {
				r.i = i
				return valid
			}
			if i = space(b, i); i == len(b) {
				return invalid
			}
			obj := stack[(n-1)/64]>>((n-1)%64)&1 != 0
			switch c := b[i]; {
			case c == ',':
				i++
				if obj {
					if i, ok = key(b, space(b, i)); !ok {
						return invalid
					}
				}
				continue value
			case obj && c == '}' || !obj && c == ']':
				i++
				n--
			default:
				return invalid
			}
		}
	}
}

// space returns the index of the first byte at or after i that is not
// white space.
func space(b []byte, i int) int {
	for i < len(b) {
		if c := b[i]; c > ' ' || c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return i
		}
		i++
	}
	return i
}

// key reads a key and its colon at b[i].
func key(b []byte, i int) (int, bool) {
	if i == len(b) || b[i] != '"' {
		return i, false
	}
	i, _, ok := strictString(b, i)
	if !ok {
		return i, false
	}
	if i = space(b, i); i == len(b) || b[i] != ':' {
		return i, false
	}
	return i + 1, true
}

// strictStr reads the string at r.i.
func (r *Reader) strictStr() (Text, bool) {
	end, plain, ok := strictString(r.b, r.i)
	if !ok {
		return Text{}, false
	}
	t := Text{raw: r.b[r.i+1 : end-1], plain: plain}
	r.i = end
	return t, true
}

// strictString reads the string at b[i], its opening quote, as
// encoding/json does: no control bytes, only JSON's escapes (invalid UTF-8
// passes). It returns the index after the closing quote, and whether the
// string is plain (printable ASCII, no escapes).
func strictString(b []byte, i int) (end int, plain, ok bool) {
	plain = true
	for i++; ; {
		if i = plainRun(b, i, len(b)); i == len(b) {
			return i, false, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain, true
		case c == '\\':
			plain = false
			if i+1 == len(b) {
				return i, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					return i, false, false
				}
				i += 6
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		default: // a byte of a UTF-8 sequence, valid or not
			plain = false
			i++
		}
	}
}

func literal(b []byte, i int, word string) (int, bool) {
	if len(b)-i >= len(word) && string(b[i:i+len(word)]) == word {
		return i + len(word), true
	}
	return i, false
}

// skipNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func skipNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return i, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}
