package geminiapi

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/aireq"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// Requests are read as Google's servers read protobuf JSON: a member may
// be named by its JSON name (maxOutputTokens) or its proto name
// (max_output_tokens); escapes in keys are decoded first ("con\u0074ents"
// is contents); a member named twice, under either name, is refused, as
// is a name the message does not have; null is the same as absent. The
// whole body is checked once as encoding/json checks it (json.Valid);
// objects and arrays inside it are then read with aireq's lenient Reader,
// which skips values without checking them again. Nothing is copied
// until it is written out, and each byte is looked at a bounded number of
// times: the work is linear in the body.

// fieldSet names the members of one message type: camel[i] is the JSON
// name of member i, snake[i] its proto name, used in paths. A set has at
// most 64 members.
type fieldSet struct {
	typ   string // the message type, for errors
	camel []string
	snake []string
}

// newFields returns the set of members named (JSON names) for the message
// type typ.
func newFields(typ string, camel ...string) *fieldSet {
	s := &fieldSet{typ: typ, camel: camel, snake: make([]string, len(camel))}
	for i, c := range camel {
		s.snake[i] = snakeCase(c)
	}
	return s
}

// snakeCase returns the proto name of the JSON name c.
func snakeCase(c string) string {
	var b []byte
	for i := 0; i < len(c); i++ {
		if ch := c[i]; ch >= 'A' && ch <= 'Z' {
			b = append(b, '_', ch+'a'-'A')
		} else {
			b = append(b, ch)
		}
	}
	return string(b)
}

// maxKey is room for the longest key read, decoded; a longer key names no
// member.
const maxKey = 48

// eachMember calls fn with the index in set and the raw value of each
// member of the object raw that is not null. It refuses a value that is
// not an object, a member set does not name and a member named twice;
// fn's errors are returned as they are.
func eachMember(raw []byte, set *fieldSet, fn func(i int, v []byte) error) error {
	if len(raw) == 0 || raw[0] != '{' {
		return badValue("", msgType(set.typ), raw)
	}
	var seen uint64
	var err error
	r := aireq.NewReader(raw)
	r.Object(func(k aireq.Text) bool {
		v, ok := r.Value()
		if !ok {
			return false
		}
		i := set.find(k)
		switch {
		case i < 0:
			err = &fieldError{kind: errUnknown, detail: clip(k.String())}
		case seen&(1<<i) != 0:
			err = &fieldError{kind: errDuplicate, detail: set.camel[i]}
		case isNull(v):
			seen |= 1 << i
			return true
		default:
			seen |= 1 << i
			err = fn(i, v)
		}
		return err == nil
	})
	return err
}

// find returns the index of the member the key k names, or -1.
func (s *fieldSet) find(k aireq.Text) int {
	var buf, camel [maxKey]byte
	name := k.Name(buf[:])
	if name == nil || len(name) > maxKey {
		return -1
	}
	if bytes.IndexByte(name, '_') >= 0 {
		name = camelCase(camel[:0], name)
	}
	for i, c := range s.camel {
		if string(name) == c {
			return i
		}
	}
	return -1
}

// camelCase appends the JSON name of the proto name n to b.
func camelCase(b, n []byte) []byte {
	up := false
	for _, c := range n {
		switch {
		case c == '_':
			up = true
			continue
		case up && c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		}
		up = false
		b = append(b, c)
	}
	return b
}

// eachElement calls fn with the index and raw value of each element of
// the array raw, which must be an array of elements of type typ; an
// error of fn is returned under the path [i].
func eachElement(raw []byte, typ string, fn func(i int, el []byte) error) error {
	if len(raw) == 0 || raw[0] != '[' {
		return badValue("", typ, raw)
	}
	var err error
	i := 0
	r := aireq.NewReader(raw)
	r.Array(func() bool {
		v, ok := r.Value()
		if !ok {
			return false
		}
		if err = fn(i, v); err != nil {
			err = under(err, index("", i))
			return false
		}
		i++
		return true
	})
	return err
}

// isNull reports a member that is null.
func isNull(raw []byte) bool { return len(raw) > 0 && raw[0] == 'n' }

// readString checks that raw is a string, and returns it decoded.
func readString(raw []byte) (string, error) {
	if raw[0] != '"' {
		return "", badValue("", "TYPE_STRING", raw)
	}
	r := aireq.NewReader(raw)
	t, _ := r.ReadString()
	return t.String(), nil
}

// readBool reads a boolean.
func readBool(raw []byte) (bool, error) {
	switch raw[0] {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	return false, badValue("", "TYPE_BOOL", raw)
}

// numberText returns the number raw spells: a JSON number, or a string
// holding one, as protobuf JSON allows. ok is false for anything else.
func numberText(raw []byte) (string, bool) {
	s := string(raw)
	if raw[0] == '"' {
		s = string(raw[1 : len(raw)-1])
	}
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return "", false
	}
	return s, true
}

// readInt32 reads an int32: a whole number (100, 1e2, "100").
func readInt32(raw []byte) (int64, error) {
	s, ok := numberText(raw)
	if !ok {
		return 0, badValue("", "TYPE_INT32", raw)
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return n, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, badValue("", "TYPE_INT32", raw)
	}
	return int64(v), nil
}

// readFloat reads a float: a number, or a string holding one.
func readFloat(raw []byte) (float64, error) {
	s, ok := numberText(raw)
	if !ok {
		return 0, badValue("", "TYPE_FLOAT", raw)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, badValue("", "TYPE_FLOAT", raw)
	}
	return v, nil
}

// appendNumber appends the number raw, read by readFloat or readInt32:
// a JSON number as it is, a string's number written anew.
func appendNumber(b, raw []byte, v float64) []byte {
	if raw[0] != '"' {
		return append(b, raw...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// maxDepth is how deeply a free-form value (function arguments and
// responses, schemas) may nest objects and arrays.
const maxDepth = 64

// nestingWithin reports whether the JSON text b nests objects and arrays
// at most max levels deep.
func nestingWithin(b []byte, max int) bool { return jsontext.NestingWithin(b, max) }

// compact appends the valid JSON value raw to b without white space
// outside strings, invalid UTF-8 (only possible inside strings) replaced
// by U+FFFD: a client's value written on as it is.
func compact(b, raw []byte) []byte {
	start := len(b)
	b = jsontext.AppendCompact(b, raw)
	if !utf8.Valid(b[start:]) {
		fixed := bytes.ToValidUTF8(b[start:], []byte("\uFFFD"))
		b = append(b[:start], fixed...)
	}
	return b
}

// appendRawString appends the JSON string raw as the client spelled it:
// a valid JSON string decodes the same wherever it is copied, so it is
// not decoded and escaped again; invalid UTF-8 becomes U+FFFD.
func appendRawString(b, raw []byte) []byte {
	if utf8.Valid(raw) {
		return append(b, raw...)
	}
	return append(b, bytes.ToValidUTF8(raw, []byte("\uFFFD"))...)
}

// validDocument reports whether body is one valid JSON object with
// nothing but white space after it, as encoding/json accepts it.
func validDocument(body []byte) bool {
	r := aireq.NewStrictReader(body)
	if r.Kind() != aireq.Object {
		return false
	}
	_, ok := r.Value()
	return ok && r.End()
}
