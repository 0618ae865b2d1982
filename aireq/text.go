package aireq

import "unicode/utf8"

// A Text is a JSON string as the input spells it: the bytes between its
// quotes, escapes not decoded. Its methods read it as encoding/json decodes
// it: escapes resolved, surrogate pairs joined, invalid UTF-8 and lone
// surrogates as U+FFFD (and so are the control bytes and unknown escapes
// that only a lenient Reader lets through). Only String allocates, and
// Bytes when buf is too small. A Text is empty exactly when Raw is; the
// zero Text is the empty string.
type Text struct {
	raw   []byte
	plain bool // raw is known to decode to itself
}

// Raw returns the text as the input spells it, pointing into the input.
func (t Text) Raw() []byte { return t.raw }

// Is reports whether t decodes to s: "con\u0074ent" is "content".
func (t Text) Is(s string) bool {
	if t.plain {
		return string(t.raw) == s
	}
	return equalUnquoted(t.raw, s)
}

// String returns t decoded.
func (t Text) String() string {
	if t.plain {
		return string(t.raw)
	}
	return unquote(t.raw)
}

// Bytes returns t decoded: Raw itself when decoding would not change it
// (the common case), else t decoded into buf's capacity, or into a new
// slice when it does not fit there.
func (t Text) Bytes(buf []byte) []byte {
	if t.plain {
		return t.raw
	}
	return t.bytes(buf)
}

func (t Text) bytes(buf []byte) []byte {
	if unchanged(t.raw) {
		return t.raw
	}
	if n, all := t.Decode(buf[:cap(buf)]); all {
		return buf[:n]
	}
	out := make([]byte, 3*len(t.raw)) // an invalid byte becomes three; escapes shrink
	n, _ := t.Decode(out)
	return out[:n]
}

// Name returns t decoded, for a switch on keys without allocating: Raw
// itself when t has nothing to decode, else t decoded into buf, or nil
// when it does not fit there.
//
//	var buf [16]byte // room for the longest name
//	switch string(key.Name(buf[:])) {
//	case "model": …
func (t Text) Name(buf []byte) []byte {
	if t.plain {
		return t.raw
	}
	return t.name(buf)
}

func (t Text) name(buf []byte) []byte {
	if n, all := t.decode(buf); all {
		return buf[:n]
	}
	return nil
}

// Decode writes t decoded into buf, as many whole characters as fit, and
// returns the number of bytes written and whether they are all of t.
func (t Text) Decode(buf []byte) (n int, all bool) {
	if t.plain {
		n = copy(buf, t.raw)
		return n, n == len(t.raw)
	}
	return t.decode(buf)
}

func (t Text) decode(buf []byte) (n int, all bool) {
	s := t.raw
	for i := 0; i < len(s); {
		if j := plainRun(s, i, len(s)); j > i {
			m := copy(buf[n:], s[i:j])
			if n += m; m < j-i {
				return n, false
			}
			i = j
			continue
		}
		r, next, ok := next(s, i)
		if !ok {
			r = utf8.RuneError
		}
		if utf8.RuneLen(r) > len(buf)-n {
			return n, false
		}
		n += utf8.EncodeRune(buf[n:], r)
		i = next
	}
	return n, true
}

// unchanged reports whether s decodes to itself: no escapes, no control
// bytes, valid UTF-8.
func unchanged(s []byte) bool {
	for i := 0; ; {
		if i = plainRun(s, i, len(s)); i == len(s) {
			return true
		}
		switch c := s[i]; {
		case c == '"': // escaped in JSON, but it reads as itself
			i++
		case c < utf8.RuneSelf:
			return false // a backslash or a control byte
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
		}
	}
}
