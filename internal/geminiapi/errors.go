package geminiapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// Error is a refusal in Google's shape:
// {"error": {"code": Code, "message": Message, "status": Status}}.
// ToChat and CountTokensToChat return one for a request they refuse;
// write it with WriteError(w, e.Code, e.Status, e.Message).
type Error struct {
	// Code is the HTTP status code: 400 for every refused request.
	Code int
	// Status is Google's canonical status name ("INVALID_ARGUMENT").
	Status string
	// Message says what is wrong, naming the field as Google names it
	// ("contents[2].parts[0]"); it quotes at most 64 bytes of the
	// client's own text.
	Message string
}

// Error returns the status and message, prefixed with the package name.
func (e *Error) Error() string {
	return "geminiapi: " + strconv.Itoa(e.Code) + " " + e.Status + ": " + e.Message
}

// WriteError writes Google's error answer (Content-Type application/json)
// with the HTTP status code; details are extra "details" entries (e.g. a
// RetryInfo) written as given. A detail that is not valid JSON is left
// out, so the answer always is. An empty status is the one Google gives
// the code (StatusFor).
func WriteError(w http.ResponseWriter, code int, status, message string, details ...json.RawMessage) {
	b := AppendError(make([]byte, 0, 96+len(message)), code, status, message, details...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	w.Write(b)
}

// AppendError appends the error object WriteError writes to b: the body
// of an error answer, and what a stream ends with when it fails.
func AppendError(b []byte, code int, status, message string, details ...json.RawMessage) []byte {
	if status == "" {
		status = StatusFor(code)
	}
	b = append(b, `{"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = jsontext.AppendString(b, message)
	b = append(b, `,"status":`...)
	b = jsontext.AppendString(b, status)
	n := 0
	for _, d := range details {
		if !json.Valid(d) {
			continue
		}
		if n == 0 {
			b = append(b, `,"details":[`...)
		} else {
			b = append(b, ',')
		}
		b = compact(b, d)
		n++
	}
	if n > 0 {
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

// RetryInfo returns the details entry
// {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "<seconds>s"}
// that tells a client how long to wait before it tries again; a negative
// d is 0s. Fractions of a second are kept to the millisecond ("1.5s").
func RetryInfo(d time.Duration) json.RawMessage {
	d = max(d, 0).Round(time.Millisecond)
	b := append(make([]byte, 0, 80), `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"`...)
	b = strconv.AppendFloat(b, d.Seconds(), 'f', -1, 64)
	return append(b, `s"}`...)
}

// StatusFor returns the canonical status Google gives an HTTP status
// code: 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED,
// 404 NOT_FOUND, 409 ABORTED, 429 RESOURCE_EXHAUSTED, 499 CANCELLED,
// 501 NOT_IMPLEMENTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED; any other
// 4xx FAILED_PRECONDITION and anything else INTERNAL.
func StatusFor(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "NOT_IMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 400 && code < 500 {
		return "FAILED_PRECONDITION"
	}
	return "INTERNAL"
}

// The kinds of fieldError, each with Google's wording.
const (
	errSyntax    = iota // the body is not JSON: Invalid JSON payload received. <detail>
	errValue            // a value of the wrong type: Invalid value at '<path>' (<typ>), <detail>
	errUnknown          // an unknown member <detail> of the object at path
	errDuplicate        // a member <detail> given twice in the object at path
	errRule             // a value the API refuses: * <root>.<path>: <detail>
)

// fieldError is a refusal of one field, its path relative to the value
// being read: readers of nested values name the field from where they
// stand, and their callers put their own path in front with under, so a
// path is built only for an error.
type fieldError struct {
	kind   int
	path   string
	typ    string // for errValue: the field's type as Google names it
	detail string
}

func (e *fieldError) Error() string { return e.message("GenerateContentRequest") }

// message words the error as Google does for a request of type root.
func (e *fieldError) message(root string) string {
	switch e.kind {
	case errSyntax:
		return "Invalid JSON payload received. " + e.detail
	case errValue:
		return "Invalid value at '" + e.path + "' (" + e.typ + "), " + e.detail
	case errUnknown, errDuplicate:
		msg := "Invalid JSON payload received. Unknown name " + strconv.Quote(e.detail)
		if e.kind == errDuplicate {
			msg = "Invalid JSON payload received. Duplicate name " + strconv.Quote(e.detail)
		}
		if e.path != "" {
			msg += " at '" + e.path + "'"
		}
		if e.kind == errDuplicate {
			return msg + ": the field is given more than once."
		}
		return msg + ": Cannot find field."
	}
	if e.path == "" {
		return "* " + root + ": " + e.detail
	}
	return "* " + root + "." + e.path + ": " + e.detail
}

// public turns an error of the readers into the *Error for the client.
func public(err error, root string) error {
	if fe, ok := err.(*fieldError); ok {
		return &Error{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Message: fe.message(root)}
	}
	return err
}

// under puts prefix, the path of the value err was found in, in front of
// err's path. Errors of other types pass unchanged.
func under(err error, prefix string) error {
	fe, ok := err.(*fieldError)
	switch {
	case !ok:
		return err
	case fe.path == "":
		fe.path = prefix
	case fe.path[0] == '[':
		fe.path = prefix + fe.path
	default:
		fe.path = prefix + "." + fe.path
	}
	return err
}

// index returns the path name[i].
func index(name string, i int) string {
	return name + "[" + strconv.Itoa(i) + "]"
}

// badValue refuses the value raw at path, of Google's type typ.
func badValue(path, typ string, raw []byte) error {
	return &fieldError{kind: errValue, path: path, typ: typ, detail: clip(strings.TrimSpace(string(raw)))}
}

// rule refuses the field at path; why says why, in Google's words.
func rule(path, why string) error {
	return &fieldError{kind: errRule, path: path, detail: why}
}

// unsupported refuses a field the API has but this translation cannot
// carry to chat completions targets.
func unsupported(path, what string) error {
	return rule(path, what+" is not supported by this gateway: its targets speak OpenAI chat completions")
}

// maxQuoted is the most bytes of a client's text quoted in a message.
const maxQuoted = 64

// clip cuts s to at most maxQuoted bytes at a rune boundary, marking the
// cut, and makes it valid UTF-8.
func clip(s string) string {
	if len(s) > maxQuoted {
		n := maxQuoted
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// typePrefix starts Google's names of the message types, for errors
// about a value that should have been one.
const typePrefix = "type.googleapis.com/google.ai.generativelanguage.v1beta."

// msgType returns Google's name of the message type name.
func msgType(name string) string { return typePrefix + name }
