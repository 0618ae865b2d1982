package responses

import (
	"math"
	"strconv"

	"github.com/fuseboxhq/fusebox/aireq"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// Requests are read as OpenAI's servers read them, and as encoding/json
// reads JSON into a map: keys match exactly once their escapes are
// decoded ("\u006dodel" is model, "Model" is not), of a key given twice
// in one object only the last counts (the earlier value is not even
// type-checked), and a null value is the same as no value. Every object is
// read in two steps: aireq's strict Reader collects the raw span of each
// member it knows, the last one winning, then the spans are interpreted.
// Nothing is copied until it is decoded, and the work is linear in the
// body: each byte is looked at a bounded number of times, as the
// structures read nest a bounded number of levels.

// maxName is room for the longest member name read, decoded; a longer
// key is none of them.
const maxName = 32

// maxDepth is how deeply a request may nest objects and arrays. Schemas
// are the deepest values in practice (OpenAI takes structured-output
// schemas ten levels deep); the bound keeps client JSON passed on to
// upstreams, and echoed back, shallow.
const maxDepth = 64

// validObject reports whether raw is one valid JSON object (nothing but
// white space after it), as encoding/json would accept it.
func validObject(raw []byte) bool {
	r := aireq.NewStrictReader(raw)
	if r.Kind() != aireq.Object {
		return false
	}
	_, ok := r.Value()
	return ok && r.End()
}

// topMembers reads a whole document that must be one JSON object, checking
// it as encoding/json would (json.Valid) while it calls fn with each
// top-level member as members does. It reports false when raw is not
// one valid object.
func topMembers(raw []byte, fn func(name []byte, key aireq.Text, value []byte)) bool {
	r := aireq.NewStrictReader(raw)
	return r.Object(func(k aireq.Text) bool {
		v, ok := r.Value()
		if ok {
			fn(keyName(k), k, v)
		}
		return ok
	}) && r.End()
}

// keyName returns a key decoded: the key's own bytes when it has no
// escapes (the common case, without a copy), nil when it decodes to more
// than maxName bytes (it is none of the names read).
func keyName(k aireq.Text) []byte {
	if name := k.Name(nil); name != nil || len(k.Raw()) == 0 {
		return name
	}
	if len(k.Raw()) > 6*maxName { // too long even if every character is escaped
		return nil
	}
	if name := k.Bytes(nil); len(name) <= maxName {
		return name
	}
	return nil
}

// members reads the JSON object raw, calling fn with each member's name
// decoded (nil when longer than maxName), its key and its raw value, in
// order. It reports false when raw is not an object. raw must be part of
// a document checked whole by topMembers: members and elements read inside
// it with aireq's lenient Reader, which skips values without checking
// them again.
func members(raw []byte, fn func(name []byte, key aireq.Text, value []byte)) bool {
	r := aireq.NewReader(raw)
	return r.Object(func(k aireq.Text) bool {
		v, ok := r.Value()
		if ok {
			fn(keyName(k), k, v)
		}
		return ok
	})
}

// count returns the number of elements of the JSON array raw.
func count(raw []byte) int {
	r := aireq.NewReader(raw)
	n := 0
	r.Array(func() bool { n++; return true })
	return n
}

// elements calls fn with each element of the JSON array raw, stopping at
// the first error, which it returns under the path [i] of the element.
func elements(raw []byte, fn func(i int, el []byte) error) error {
	r := aireq.NewReader(raw)
	i := 0
	var err error
	r.Array(func() bool {
		v, ok := r.Value()
		if !ok {
			return false
		}
		if err = fn(i, v); err != nil {
			err = errorUnder(err, index("", i, ""))
			return false
		}
		i++
		return true
	})
	return err
}

// absent reports a member that is missing or null.
func absent(raw []byte) bool { return len(raw) == 0 || raw[0] == 'n' }

// decodeString decodes the JSON string raw as encoding/json does (escapes
// resolved, invalid UTF-8 and lone surrogates as U+FFFD).
func decodeString(raw []byte) string {
	r := aireq.NewReader(raw)
	t, _ := r.ReadString()
	return t.String()
}

// readString reads a string member at param; "" when absent.
func readString(param string, raw []byte) (string, error) {
	if absent(raw) {
		return "", nil
	}
	if raw[0] != '"' {
		return "", wrongType(param, "a string", raw)
	}
	return decodeString(raw), nil
}

// needString reads a string member that must be present and not empty.
func needString(param string, raw []byte) (string, error) {
	s, err := readString(param, raw)
	if err == nil && s == "" {
		if absent(raw) {
			return "", missing(param)
		}
		return "", invalid(param, "must not be empty")
	}
	return s, err
}

// readBool reads a boolean member; def when absent.
func readBool(param string, raw []byte, def bool) (bool, error) {
	switch {
	case absent(raw):
		return def, nil
	case raw[0] == 't':
		return true, nil
	case raw[0] == 'f':
		return false, nil
	}
	return def, wrongType(param, "a boolean", raw)
}

// readNumber checks a number member and returns its value; ok is false
// when it is absent.
func readNumber(param string, raw []byte) (v float64, ok bool, err error) {
	if absent(raw) {
		return 0, false, nil
	}
	if kindName(raw) != "a number" {
		return 0, false, wrongType(param, "a number", raw)
	}
	v, perr := strconv.ParseFloat(string(raw), 64)
	if perr != nil {
		return 0, false, invalid(param, "the number "+clip(string(raw), maxQuoted)+" is out of range")
	}
	return v, true, nil
}

// readInt reads a whole number member (100, 1e2 and 100.0 alike); ok is
// false when it is absent.
func readInt(param string, raw []byte) (n int64, ok bool, err error) {
	v, ok, err := readNumber(param, raw)
	switch {
	case err != nil || !ok:
		return 0, ok, err
	case v != math.Trunc(v):
		return 0, false, newError(param, codeInvalidType, "want an integer, got "+clip(string(raw), maxQuoted))
	case math.Abs(v) >= 1<<53:
		return 0, false, invalid(param, "the number "+clip(string(raw), maxQuoted)+" is out of range")
	}
	return int64(v), true, nil
}

// nestingWithin reports whether the JSON text b nests objects and arrays
// at most max levels deep.
func nestingWithin(b []byte, max int) bool { return jsontext.NestingWithin(b, max) }
