package jsontext

import "bytes"

// NestingWithin reports whether the JSON text b nests objects and arrays
// at most max levels deep. It does not check b otherwise.
func NestingWithin(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = StringEnd(b, i) - 1
		case '{', '[':
			if depth++; depth > max {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return true
}

// StringEnd returns the index after the string that starts with the quote
// at b[i], or len(b) if it does not end. A quote ends the string unless an
// odd number of backslashes comes before it; counting them back stops at
// the previous quote, so the work is linear in b.
func StringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		k += j
		n := 0
		for m := k - 1; m > i && b[m] == '\\'; m-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		j = k + 1
	}
}

// AppendCompact appends the valid JSON value raw to b without the white
// space outside its strings; strings are copied byte for byte.
func AppendCompact(b, raw []byte) []byte {
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case '"':
			end := StringEnd(raw, i)
			b = append(b, raw[i:end]...)
			i = end
		case ' ', '\t', '\n', '\r':
			i++
		default:
			j := i + 1
			for j < len(raw) && raw[j] != '"' && raw[j] > ' ' {
				j++
			}
			b = append(b, raw[i:j]...)
			i = j
		}
	}
	return b
}
