package aireq

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// How strings are scanned, a word at a time (both kinds of Reader), and
// how a lenient Reader finds their ends and skips values without checking
// them.

// textByte marks the bytes that stand for themselves inside a string:
// printable ASCII but the quote and the backslash.
var textByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainRun returns the index of the first byte in b[i:end] that does not
// stand for itself in a string (a quote, a backslash, a control byte or a
// byte of a multi-byte character), or end. It looks at eight bytes at a
// time.
func plainRun(b []byte, i, end int) int {
	for ; i+8 <= end; i += 8 {
		if m := specials(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < end && textByte[b[i]] {
		i++
	}
	return i
}

// specials marks with its high bit each byte of the eight in x that does
// not stand for itself in a string: a zero byte of x^'"' or x^'\\', a byte
// below 0x20 or one from 0x80. Borrows may mark bytes after a marked one
// too, never before: the first mark is exact.
func specials(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return ((q-ones)&^q | (bs-ones)&^bs | (x - ones*0x20) | x) & highs
}

// lenientString finds the end of a string: the first quote that an odd
// run of backslashes does not escape.
func (r *Reader) lenientString() (Text, bool) {
	b := r.b
	start := r.i + 1
	// Keys and most values are short and plain: looking at them a word at
	// a time beats a call, and tells that they need no decoding. The first
	// word is looked at here: most keys end in it.
	i := start
	switch {
	case start+8 > len(b):
		i = plainRun(b, start, len(b))
	default:
		if m := specials(binary.LittleEndian.Uint64(b[start:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
		} else {
			i = plainRun(b, start+8, min(start+32, len(b)))
		}
	}
	if i < len(b) && b[i] == '"' {
		r.i = i + 1
		return Text{raw: b[start:i], plain: true}, true
	}
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return Text{}, false
		}
		i += j
		k := i
		for b[k-1] == '\\' { // stops at the opening quote at the latest
			k--
		}
		if (i-k)%2 == 0 {
			r.i = i + 1
			return Text{raw: b[start:i]}, true
		}
		i++
	}
}

// skipLenient skips a value without checking it: brackets matched by
// counting, or a run of bytes up to a delimiter.
func (r *Reader) skipLenient() bool {
	if c := r.b[r.i]; c == '{' || c == '[' {
		return r.skipBrackets()
	}
	start := r.i
	for r.i < len(r.b) && !delimiter(r.b[r.i]) {
		r.i++
	}
	if r.i == len(r.b) && r.depth > 0 { // cut by the end of the input
		switch string(r.b[start:]) {
		case "true", "false", "null":
			return true
		}
		return false
	}
	return r.i > start
}

// bracketByte marks the bytes skipBrackets stops at.
var bracketByte = func() (t [256]bool) {
	for _, c := range `"{}[]` {
		t[c] = true
	}
	return t
}()

// skipBrackets skips the object or array at r.i by counting brackets
// outside strings.
func (r *Reader) skipBrackets() bool {
	b, i, depth := r.b, r.i, 0
	for {
		for i < len(b) && !bracketByte[b[i]] {
			i++
		}
		if i == len(b) {
			r.i = i
			return false
		}
		switch b[i] {
		case '"': // to the quote that ends the string, as lenientString
			for i++; ; i++ {
				// Most strings are short: walking them beats a call.
				end := min(i+16, len(b))
				for i < end && b[i] != '"' {
					i++
				}
				if i == end {
					j := bytes.IndexByte(b[i:], '"')
					if j < 0 {
						r.i = len(b)
						return false
					}
					i += j
				}
				k := i
				for b[k-1] == '\\' {
					k--
				}
				if (i-k)%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
		default:
			if depth--; depth == 0 {
				r.i = i + 1
				return true
			}
		}
		i++
	}
}

// delimiter reports whether c ends a number or literal.
func delimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\n', '\r', '\t':
		return true
	}
	return false
}
