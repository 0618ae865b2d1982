package responses

import (
	"strconv"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// The package writes its JSON by appending to a byte slice: compact, in a
// fixed member order, never a line break (an event's data must be one
// line), and strings escaped as encoding/json escapes them.

// appendString appends s as a JSON string, as encoding/json writes it.
func appendString[S string | []byte](b []byte, s S) []byte { return jsontext.AppendString(b, s) }

// appendKey appends "name": after a comma unless the object was just
// opened.
func appendKey(b []byte, name string) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' && b[n-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendStringMember appends "name":"value".
func appendStringMember(b []byte, name, value string) []byte {
	return appendString(appendKey(b, name), value)
}

// appendStringOrNull appends "name":"value", or "name":null when value
// is empty.
func appendStringOrNull(b []byte, name, value string) []byte {
	b = appendKey(b, name)
	if value == "" {
		return append(b, "null"...)
	}
	return appendString(b, value)
}

// appendRaw appends "name": and a raw JSON value, or def when raw is nil.
func appendRaw(b []byte, name string, raw []byte, def string) []byte {
	b = appendKey(b, name)
	if raw == nil {
		return append(b, def...)
	}
	return append(b, raw...)
}

func appendInt(b []byte, name string, n int64) []byte {
	return strconv.AppendInt(appendKey(b, name), n, 10)
}

func appendBool(b []byte, name string, v bool) []byte {
	return strconv.AppendBool(appendKey(b, name), v)
}

// compact appends the valid JSON value raw to b without white space
// outside strings, invalid UTF-8 (only possible inside strings) replaced
// by U+FFFD: a client's value written on as it is, on one line.
func compact(b, raw []byte) []byte {
	start := len(b)
	b = jsontext.AppendCompact(b, raw)
	if !utf8.Valid(b[start:]) {
		fixed := []byte(string([]rune(string(b[start:]))))
		b = append(b[:start], fixed...)
	}
	return b
}
