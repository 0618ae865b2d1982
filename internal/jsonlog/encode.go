package jsonlog

import (
	"log/slog"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// This file renders records exactly as slog's JSONHandler does, but only for
// the values it can render without encoding/json. Each append function
// reports false when the value falls outside that set; the handler then
// discards the partial line and gives the whole record to the stdlib
// handler, so stdlib stays the single definition of the format, including
// its odd corners (see the comments below).

// appendRecord appends r as one JSON line, as slog.JSONHandler with no
// ReplaceAttr, no AddSource and no groups would write it. It reports false,
// with b in an unspecified state, if r holds anything it does not render.
func appendRecord(b []byte, r slog.Record) ([]byte, bool) {
	b = append(b, '{')
	if !r.Time.IsZero() {
		b = append(b, `"time":`...)
		var ok bool
		if b, ok = appendTime(b, r.Time); !ok {
			return b, false
		}
		b = append(b, ',')
	}
	b = append(b, `"level":"`...)
	b = appendLevel(b, r.Level)
	b = append(b, `","msg":`...)
	b = appendString(b, r.Message)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		b = append(b, ',')
		b = appendString(b, a.Key)
		b = append(b, ':')
		b, ok = appendValue(b, a.Value)
		return ok
	})
	if !ok {
		return b, false
	}
	return append(b, '}', '\n'), true
}

// appendValue appends v for the kinds the fast path knows. Any, Group and
// LogValuer are left to the stdlib handler: they need Resolve, reflection
// or group bookkeeping, and an empty Attr (which stdlib elides) is of kind
// Any, so every attr this function accepts is printed.
func appendValue(b []byte, v slog.Value) ([]byte, bool) {
	switch v.Kind() {
	case slog.KindString:
		return appendString(b, v.String()), true
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindFloat64:
		return appendFloat(b, v.Float64())
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool()), true
	case slog.KindDuration:
		// As json.Marshal does: integer nanoseconds.
		return strconv.AppendInt(b, int64(v.Duration()), 10), true
	case slog.KindTime:
		return appendTime(b, v.Time())
	}
	return b, false
}

// appendTime appends t quoted in RFC 3339 with up to nanosecond precision,
// as time.Time.MarshalJSON does. Note the JSON handler does not use the
// millisecond format of the text handler.
//
// Years outside [0, 9999] are refused: stdlib then writes an
// "!ERROR:..." string followed directly by the quoted time, which is not
// valid JSON, and we leave reproducing that to stdlib itself.
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y >= 10000 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}

// appendFloat appends f as encoding/json does: like %g but switching to an
// exponent only below 1e-6 or from 1e21, with the exponent unpadded
// ("1e-07" becomes "1e-7"). NaN and ±Inf are refused: json.Marshal fails on
// them and stdlib prints the error as a string, which we leave to stdlib.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendLevel appends l.String() without the string concatenation that
// method does for levels between the named ones ("INFO+2", "DEBUG-3").
// Level names never need escaping.
func appendLevel(b []byte, l slog.Level) []byte {
	base, off := "ERROR", l-slog.LevelError
	switch {
	case l < slog.LevelInfo:
		base, off = "DEBUG", l-slog.LevelDebug
	case l < slog.LevelWarn:
		base, off = "INFO", l-slog.LevelInfo
	case l < slog.LevelError:
		base, off = "WARN", l-slog.LevelWarn
	}
	b = append(b, base...)
	if off == 0 {
		return b
	}
	if off > 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, int64(off), 10)
}

// appendString appends s as a quoted JSON string, escaped as slog does
// (which is encoding/json with HTML escaping off): '"', '\\' and control
// characters are escaped, '<', '>' and '&' are not; invalid UTF-8 bytes
// become \ufffd one byte at a time; U+2028 and U+2029 are escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0
	for i < len(s) && plain[s[i]] {
		i++
	}
	if i < len(s) {
		return appendEscaped(b, s, i)
	}
	b = append(b, s...)
	return append(b, '"')
}

// appendEscaped finishes appendString for an s whose bytes before i are
// plain ASCII. It follows slog's appendEscapedJSONString.
func appendEscaped(b []byte, s string, i int) []byte {
	start := 0
	for i < len(s) {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			b = appendEscapedByte(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscapedByte appends the escape for an ASCII byte that is not safe.
func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
}

const hex = "0123456789abcdef"

// plain reports, for each byte, whether it is ASCII that goes into a JSON
// string unescaped: everything but the control characters, '"' and '\\'.
// Unlike encoding/json's default, '<', '>' and '&' are plain, as in slog.
// Bytes from 0x80 up are false: they start UTF-8 sequences to check.
var plain = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
