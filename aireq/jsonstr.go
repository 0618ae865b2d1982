package aireq

import (
	"unicode/utf16"
	"unicode/utf8"
)

// The functions here read the content of a JSON string literal (the bytes
// between its quotes) as encoding/json decodes it: escapes resolved,
// surrogate pairs joined, and invalid UTF-8 and lone surrogates read as
// U+FFFD. None of them allocates except unquote, for its result.

// next decodes the character at s[i] and returns it with the index after
// it. ok is false for invalid UTF-8, a lone surrogate, a control byte or an
// unknown escape; r is then U+FFFD, except that an unknown escape returns
// the escaped byte ("\e" reads as 'e'), which is how lenient decoders read
// it.
func next(s []byte, i int) (r rune, n int, ok bool) {
	switch c := s[i]; {
	case c == '\\':
		return escape(s, i)
	case c < 0x20:
		return utf8.RuneError, i + 1, false
	case c < utf8.RuneSelf:
		return rune(c), i + 1, true
	}
	r, size := utf8.DecodeRune(s[i:])
	return r, i + size, r != utf8.RuneError || size > 1
}

// escape decodes the escape sequence at s[i] (a backslash).
func escape(s []byte, i int) (rune, int, bool) {
	if i+1 >= len(s) {
		return utf8.RuneError, len(s), false
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/':
		return rune(c), i + 2, true
	case 'b':
		return '\b', i + 2, true
	case 'f':
		return '\f', i + 2, true
	case 'n':
		return '\n', i + 2, true
	case 'r':
		return '\r', i + 2, true
	case 't':
		return '\t', i + 2, true
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return utf8.RuneError, i + 2, false
		}
		if !utf16.IsSurrogate(r) {
			return r, i + 6, true
		}
		// A surrogate counts only as the first half of a pair, as in
		// encoding/json; otherwise it alone becomes U+FFFD.
		if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if r2, ok := hex4(s, i+8); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, i + 12, true
				}
			}
		}
		return utf8.RuneError, i + 6, false
	default:
		return rune(c), i + 2, false
	}
}

// hex4 reads the four hex digits at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// plain reports whether c stands for itself in a JSON string: printable
// ASCII other than the backslash.
func plain(c byte) bool { return c >= 0x20 && c < utf8.RuneSelf && c != '\\' }

// validString reports whether the string content s decodes the same way in
// every JSON decoder: valid escapes, valid UTF-8, no lone surrogate and no
// control byte.
func validString(s []byte) bool {
	for i := 0; i < len(s); {
		if plain(s[i]) {
			i++
			continue
		}
		var ok bool
		if _, i, ok = next(s, i); !ok {
			return false
		}
	}
	return true
}

// unquote returns the string content s decoded as encoding/json would
// (with U+FFFD for what is invalid).
func unquote(s []byte) string {
	i := 0
	for i < len(s) && plain(s[i]) {
		i++
	}
	if i == len(s) {
		return string(s)
	}
	out := make([]byte, i, len(s))
	copy(out, s[:i])
	for i < len(s) {
		r, n, ok := next(s, i)
		if !ok {
			r = utf8.RuneError
		}
		out, i = utf8.AppendRune(out, r), n
	}
	return string(out)
}

// equalUnquoted reports whether the string content s decodes to t, without
// allocating.
func equalUnquoted(s []byte, t string) bool {
	j := 0
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		if plain(s[i]) {
			if j == len(t) || t[j] != s[i] {
				return false
			}
			i, j = i+1, j+1
			continue
		}
		r, n, ok := next(s, i)
		if !ok {
			r = utf8.RuneError
		}
		enc := buf[:utf8.EncodeRune(buf[:], r)]
		if len(t)-j < len(enc) || t[j:j+len(enc)] != string(enc) {
			return false
		}
		i, j = n, j+len(enc)
	}
	return j == len(t)
}

// appendQuoted appends s as a JSON string literal, escaping the quote, the
// backslash and control bytes, with invalid UTF-8 as U+FFFD (as
// encoding/json writes it). strconv.Quote is not JSON: it writes \x00,
// \a and \U0001f600.
func appendQuoted(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if plain(c) && c != '"' {
			dst, i = append(dst, c), i+1
			continue
		}
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			dst = utf8.AppendRune(dst, r) // U+FFFD when invalid
			i += size
			continue
		}
		i++
	}
	return append(dst, '"')
}
