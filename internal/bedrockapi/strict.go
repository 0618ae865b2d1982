package bedrockapi

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// MaxRequestSize is the largest request body the translators read: 20 MiB,
// room for Bedrock's own limits on images (3.75 MB each) and documents
// (4.5 MB each). A larger body is a ValidationException.
const MaxRequestSize = 20 << 20

// readBody reads a client's request body as Bedrock's JSON decoder reads
// it: within MaxRequestSize, valid JSON, a JSON object, and no object in it
// with the same key twice (after unescaping: "mod\u0065l" is "model"). A
// duplicate is refused, naming its path, rather than resolved: which of
// two values counts depends on the decoder, and the simulator must not
// serve a request other than the one its client meant.
func readBody(body []byte) (obj, error) {
	if len(body) > MaxRequestSize {
		return obj{}, invalid("", "the request body is larger than "+strconv.Itoa(MaxRequestSize)+" bytes")
	}
	if !json.Valid(body) {
		return obj{}, invalid("", "the request body is not valid JSON")
	}
	if err := checkKeys("", body); err != nil {
		return obj{}, err
	}
	return readObj("", body)
}

// frame is an object or array being scanned by checkKeys.
type frame struct {
	object  bool
	wantKey bool   // an object's next string token is a key
	key     string // the object's member being read
	index   int    // the array's element being read
	seen    map[string]struct{}
}

// checkKeys refuses a valid JSON value, at the path at, in which an
// object has a key twice.
func checkKeys(at string, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return invalid("", "the request body is not valid JSON")
		}
		top := len(stack) - 1
		if s, ok := tok.(string); ok && top >= 0 && stack[top].wantKey {
			f := &stack[top]
			if _, dup := f.seen[s]; dup {
				return invalid(framePath(at, stack[:top], s), "duplicate key "+quote(s))
			}
			f.seen[s], f.key, f.wantKey = struct{}{}, s, false
			continue
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			valueDone(stack)
			continue
		}
		if top >= 0 && !stack[top].object {
			stack[top].index++
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true, seen: map[string]struct{}{}})
		case json.Delim('['):
			stack = append(stack, frame{index: -1})
		default:
			valueDone(stack)
		}
	}
}

// valueDone records that the value of the innermost frame's member ended.
func valueDone(stack []frame) {
	if n := len(stack); n > 0 && stack[n-1].object {
		stack[n-1].wantKey = true
	}
}

// framePath is the path of key inside the object the frames lead to, in
// the value at the path at.
func framePath(at string, frames []frame, key string) string {
	var b strings.Builder
	b.WriteString(at)
	for _, f := range frames {
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(clip(f.key))
		} else {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(clip(key))
	return b.String()
}

// clip clips a client's key for a path in an error message.
func clip(s string) string {
	q := quote(s)
	if q[1:len(q)-1] == s {
		return s
	}
	return q
}

// obj is an object of a client's request: its members by exact key, and
// its path in the request for errors. The request was checked as a whole,
// so a member's value is valid JSON and its keys are unique.
type obj struct {
	at string
	m  map[string]json.RawMessage
}

// readObj reads raw, the value at the path at, as an object.
func readObj(at string, raw json.RawMessage) (obj, error) {
	var m map[string]json.RawMessage
	if kind(raw) != "an object" || json.Unmarshal(raw, &m) != nil {
		return obj{}, wantType(at, "an object", raw)
	}
	return obj{at: at, m: m}, nil
}

// readArr reads raw, the value at the path at, as an array.
func readArr(at string, raw json.RawMessage) ([]json.RawMessage, error) {
	var list []json.RawMessage
	if kind(raw) != "an array" || json.Unmarshal(raw, &list) != nil {
		return nil, wantType(at, "an array", raw)
	}
	return list, nil
}

// index returns the path of element i of the array at the path at.
func index(at string, i int) string { return at + "[" + strconv.Itoa(i) + "]" }

// path returns the path of the member key.
func (o obj) path(key string) string {
	if o.at == "" {
		return clip(key)
	}
	return o.at + "." + clip(key)
}

// only refuses a member whose key is not one of keys (the first such key
// in byte order, so the error is the same every time).
func (o obj) only(keys ...string) error {
	bad := ""
	for k := range o.m {
		if !slices.Contains(keys, k) && (bad == "" || k < bad) {
			bad = k
		}
	}
	if bad != "" || o.m[""] != nil && !slices.Contains(keys, "") {
		return invalid(o.path(bad), "unknown field")
	}
	return nil
}

// get returns the member key, nil when it is absent or null.
func (o obj) get(key string) json.RawMessage {
	if raw := o.m[key]; kind(raw) != "null" && raw != nil {
		return raw
	}
	return nil
}

// required is the error for a member that is absent, null or empty.
func (o obj) required(key string) error { return invalid(o.path(key), "is required") }

// object returns the member key as an object; it is required.
func (o obj) object(key string) (obj, error) {
	raw := o.get(key)
	if raw == nil {
		return obj{}, o.required(key)
	}
	return readObj(o.path(key), raw)
}

// array returns the member key as an array, nil when absent.
func (o obj) array(key string) ([]json.RawMessage, error) {
	raw := o.get(key)
	if raw == nil {
		return nil, nil
	}
	return readArr(o.path(key), raw)
}

// str returns the member key as a string, "" when absent.
func (o obj) str(key string) (string, error) {
	raw := o.get(key)
	var s string
	if raw != nil && (kind(raw) != "a string" || json.Unmarshal(raw, &s) != nil) {
		return "", wantType(o.path(key), "a string", raw)
	}
	return s, nil
}

// needStr returns the member key as a string that must not be empty.
func (o obj) needStr(key string) (string, error) {
	s, err := o.str(key)
	if err == nil && s == "" {
		err = o.required(key)
	}
	return s, err
}

// oneOf returns the member key as one of the strings allowed; "" when
// absent.
func (o obj) oneOf(key string, allowed ...string) (string, error) {
	s, err := o.str(key)
	if err != nil || s == "" {
		return s, err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", invalid(o.path(key), quote(s)+" is not one of "+strings.Join(allowed, ", "))
}

// boolean returns the member key as a boolean, false when absent.
func (o obj) boolean(key string) (bool, error) {
	switch raw := o.get(key); string(raw) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, wantType(o.path(key), "a boolean", raw)
	}
}

// number returns the member key as a number between lo and hi; ok is
// false when it is absent.
func (o obj) number(key string, lo, hi float64) (v float64, ok bool, err error) {
	raw := o.get(key)
	if raw == nil {
		return 0, false, nil
	}
	if kind(raw) != "a number" {
		return 0, false, wantType(o.path(key), "a number", raw)
	}
	v, err = strconv.ParseFloat(string(raw), 64)
	if err != nil || v < lo || v > hi {
		return 0, false, invalid(o.path(key), "must be between "+fmtNum(lo)+" and "+fmtNum(hi))
	}
	return v, true, nil
}

// integer returns the member key as a whole number of at least lo; ok is
// false when it is absent.
func (o obj) integer(key string, lo int64) (n int64, ok bool, err error) {
	v, ok, err := o.number(key, math.Inf(-1), math.Inf(1))
	switch {
	case err != nil || !ok:
		return 0, ok, err
	case v != math.Trunc(v):
		return 0, false, invalid(o.path(key), "want an integer, got a fraction")
	case v < float64(lo) || v > math.MaxInt32:
		return 0, false, invalid(o.path(key), "must be between "+strconv.FormatInt(lo, 10)+" and "+strconv.Itoa(math.MaxInt32))
	}
	return int64(v), true, nil
}

// strs returns the member key as a list of non-empty strings.
func (o obj) strs(key string) ([]string, error) {
	list, err := o.array(key)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, el := range list {
		if kind(el) != "a string" || json.Unmarshal(el, &out[i]) != nil {
			return nil, wantType(index(o.path(key), i), "a string", el)
		}
		if out[i] == "" {
			return nil, invalid(index(o.path(key), i), "must not be empty")
		}
	}
	return out, nil
}

// union returns the one member of a union (an object with exactly one
// member set, as Bedrock's content blocks are).
func (o obj) union() (string, json.RawMessage, error) {
	var name string
	for k, v := range o.m {
		if kind(v) == "null" {
			continue
		}
		if name != "" {
			return "", nil, invalid(o.at, "must have exactly one member, has "+quote(min(name, k))+" and "+quote(max(name, k)))
		}
		name = k
	}
	if name == "" {
		return "", nil, invalid(o.at, "must have exactly one member, has none")
	}
	return name, o.m[name], nil
}

// kind names the JSON type of a valid JSON value.
func kind(raw json.RawMessage) string { return jsontext.Kind(raw) }

func wantType(at, want string, raw json.RawMessage) error {
	return invalid(at, "want "+want+", got "+kind(raw))
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
