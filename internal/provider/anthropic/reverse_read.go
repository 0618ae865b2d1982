package anthropic

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// reqObject is an object of a client's Messages request: its members by
// exact key, and its path in the request for errors. Keys are matched as
// Anthropic matches them, exactly ("Text" is not text, though
// encoding/json's struct decoding would take it for it); of duplicate keys
// the last counts. The request was validated as a whole, so a member's
// value is valid JSON and can only be of the wrong type.
type reqObject struct {
	at string
	m  map[string]json.RawMessage
}

// readObject reads raw, the value at the path at, as an object.
func readObject(at string, raw json.RawMessage) (reqObject, error) {
	var m map[string]json.RawMessage
	if kind(raw) != "an object" || json.Unmarshal(raw, &m) != nil {
		return reqObject{}, wantType(at, "an object", raw)
	}
	return reqObject{at: at, m: m}, nil
}

// readArray reads raw, the value at the path at, as an array.
func readArray(at string, raw json.RawMessage) ([]json.RawMessage, error) {
	var list []json.RawMessage
	if kind(raw) != "an array" || json.Unmarshal(raw, &list) != nil {
		return nil, wantType(at, "an array", raw)
	}
	return list, nil
}

// path returns the path of the member key.
func (o reqObject) path(key string) string {
	if o.at == "" {
		return key
	}
	return o.at + "." + key
}

// get returns the member key, nil when it is absent or null.
func (o reqObject) get(key string) json.RawMessage {
	if raw := o.m[key]; !isNull(raw) {
		return raw
	}
	return nil
}

// required is the error for a member that is absent, null or empty.
func (o reqObject) required(key string) error {
	return badValue(o.path(key), CodeInvalidValue, "is required")
}

// object returns the member key as an object; it is required.
func (o reqObject) object(key string) (reqObject, error) {
	raw := o.get(key)
	if raw == nil {
		return reqObject{}, o.required(key)
	}
	return readObject(o.path(key), raw)
}

// str returns the member key as a string, "" when absent or null.
func (o reqObject) str(key string) (string, error) {
	raw := o.get(key)
	var s string
	if raw != nil && (kind(raw) != "a string" || json.Unmarshal(raw, &s) != nil) {
		return "", wantType(o.path(key), "a string", raw)
	}
	return s, nil
}

// needStr returns the member key as a string that must not be empty.
func (o reqObject) needStr(key string) (string, error) {
	s, err := o.str(key)
	if err == nil && s == "" {
		err = o.required(key)
	}
	return s, err
}

// boolean returns the member key as a boolean, false when absent or null.
func (o reqObject) boolean(key string) (bool, error) {
	switch raw := o.get(key); string(raw) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, wantType(o.path(key), "a boolean", raw)
	}
}

// number returns the member key as a number; ok is false when it is
// absent or null.
func (o reqObject) number(key string) (v float64, ok bool, err error) {
	raw := o.get(key)
	if raw == nil {
		return 0, false, nil
	}
	if kind(raw) != "a number" {
		return 0, false, wantType(o.path(key), "a number", raw)
	}
	if v, err = strconv.ParseFloat(string(raw), 64); err != nil {
		return 0, false, badValue(o.path(key), CodeInvalidValue, "is out of range")
	}
	return v, true, nil
}

// integer returns the member key as a whole number (100, 1e2 or 100.0);
// ok is false when it is absent or null.
func (o reqObject) integer(key string) (n int64, ok bool, err error) {
	if n, err := strconv.ParseInt(string(o.get(key)), 10, 64); err == nil {
		return n, true, nil
	}
	v, ok, err := o.number(key)
	switch {
	case err != nil || !ok:
		return 0, ok, err
	case v != math.Trunc(v):
		return 0, false, badValue(o.path(key), CodeInvalidValue, "want an integer, got a fraction")
	case math.Abs(v) >= 1<<63:
		return 0, false, badValue(o.path(key), CodeInvalidValue, "is out of range")
	}
	return int64(v), true, nil
}

// strings returns the member key as a list of strings.
func (o reqObject) strings(key string) ([]string, error) {
	raw := o.get(key)
	if raw == nil {
		return nil, nil
	}
	list, err := readArray(o.path(key), raw)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(list))
	for i, el := range list {
		if kind(el) != "a string" || json.Unmarshal(el, &out[i]) != nil {
			return nil, wantType(path(o.path(key), i, ""), "a string", el)
		}
	}
	return out, nil
}

// kind names the JSON type of a valid JSON value.
func kind(raw json.RawMessage) string { return jsontext.Kind(raw) }

func wantType(at, want string, raw json.RawMessage) error {
	return badValue(at, CodeInvalidValue, "want "+want+", got "+kind(raw))
}

// maxQuoted is the most bytes of a client's text quoted in an error.
const maxQuoted = 64

// quoted quotes a client's value for an error message, clipped to
// maxQuoted bytes.
func quoted(s string) string {
	return strconv.Quote(clipText(s))
}

// clipText clips s to maxQuoted bytes at a rune boundary, marking the cut.
func clipText(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// refuse refuses a field of a client's request that OpenAI-compatible
// targets have no equivalent for. Field is the name clipped, as it may be
// any key the client sent.
func refuse(field, why string) *RequestError {
	field = clipText(field)
	msg := strconv.Quote(field) + " is not supported for OpenAI-compatible targets"
	if why != "" {
		msg += ": " + why
	}
	return &RequestError{Field: field, Code: CodeUnsupportedParameter, Message: msg}
}

// rawJSON is a client's JSON value written on as it is, less any invalid
// UTF-8 (which valid JSON has only inside strings): encoding/json copies
// raw values verbatim.
func rawJSON(raw json.RawMessage) json.RawMessage {
	if utf8.Valid(raw) {
		return raw
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}
