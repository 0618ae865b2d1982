package responses

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// ErrUnsupported is matched by errors.Is for an *Error about a request
// that is valid for the Responses API but cannot be served through a
// chat completions target: a built-in tool, background mode, a file id,
// truncation "auto". A target that speaks the Responses API natively may
// still serve it; with none, answer the *Error as a 400.
var ErrUnsupported = errors.New("responses: not translatable to chat completions")

// The codes of an *Error, as OpenAI names them.
const (
	codeInvalidValue     = "invalid_value"
	codeInvalidType      = "invalid_type"
	codeMissing          = "missing_required_parameter"
	codeUnsupportedParam = "unsupported_parameter"
	codeUnsupportedValue = "unsupported_value"
	codePreviousNotFound = "previous_response_not_found"
	codeInvalidJSON      = "invalid_json"
)

// Error is a request that cannot be translated, for an OpenAI-shaped 400
// answer: {"error": {"message": Message, "type": "invalid_request_error",
// "param": Param, "code": Code}}.
type Error struct {
	// Param is the JSON path of the offending field ("input[3].content[0].type",
	// "tools[2].type"); "" when the body as a whole is at fault.
	Param string
	// Code is one of "invalid_json", "invalid_type", "invalid_value",
	// "missing_required_parameter", "unsupported_parameter",
	// "unsupported_value" (the last two match ErrUnsupported) and
	// "previous_response_not_found".
	Code string
	// Message says what is wrong, for the client: the quoted Param, then why.
	Message string

	why string // Message without the path
	// everywhere: no target may be sent the request as it is either (it
	// names what the provider keeps under the gateway's own key).
	everywhere bool
}

// Error returns the message, prefixed with the package name.
func (e *Error) Error() string { return "responses: " + e.Message }

// Is reports whether target is ErrUnsupported and e is about something
// only a chat completions target cannot serve.
func (e *Error) Is(target error) bool {
	return target == ErrUnsupported && !e.everywhere && (e.Code == codeUnsupportedParam || e.Code == codeUnsupportedValue)
}

// refused refuses a field for every target, a Responses API one too: it
// names something the provider keeps under the gateway's own key (a
// stored item, conversation or prompt, a background response), which
// every client of the gateway shares.
func refused(param, code, why string) *Error {
	e := newError(param, code, why)
	e.everywhere = true
	return e
}

// newError builds an *Error about the field at param. Readers of nested
// values name the field relative to the value they read, and the callers
// put their own path in front with under: paths are built only for
// errors.
func newError(param, code, why string) *Error {
	e := &Error{Param: param, Code: code, why: why}
	e.setMessage()
	return e
}

func (e *Error) setMessage() {
	if e.Param == "" {
		e.Message = e.why
		return
	}
	e.Message = strconv.Quote(e.Param) + ": " + e.why
}

// under puts prefix, the path of the value e was found in, in front of
// e's path.
func (e *Error) under(prefix string) *Error {
	switch {
	case e.Param == "":
		e.Param = prefix
	case e.Param[0] == '[':
		e.Param = prefix + e.Param
	default:
		e.Param = prefix + "." + e.Param
	}
	e.setMessage()
	return e
}

// errorUnder is under for an error that may be nil or not an *Error.
func errorUnder(err error, prefix string) error {
	if e, ok := err.(*Error); ok {
		return e.under(prefix)
	}
	return err
}

func invalid(param, why string) *Error { return newError(param, codeInvalidValue, why) }

func missing(param string) *Error { return newError(param, codeMissing, "is required") }

// unsupported refuses a value that only chat completions targets cannot
// serve; why says why.
func unsupported(param, why string) *Error {
	return newError(param, codeUnsupportedValue, why)
}

// wrongType refuses a value of the wrong JSON type.
func wrongType(param, want string, raw []byte) *Error {
	return newError(param, codeInvalidType, "want "+want+", got "+kindName(raw))
}

// kindName names the JSON type of a valid JSON value.
func kindName(raw []byte) string { return jsontext.Kind(raw) }

// maxQuoted is the most bytes of a client's text quoted in a message.
const maxQuoted = 64

// quote quotes a client's value for a message, clipped to maxQuoted bytes.
func quote(s string) string { return strconv.Quote(clip(s, maxQuoted)) }

// clip cuts s to at most n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// index appends [i] and, if child is not empty, .child to a path.
func index(parent string, i int, child string) string {
	b := make([]byte, 0, len(parent)+len(child)+8)
	b = append(b, parent...)
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, ']')
	if child != "" {
		b = append(b, '.')
		b = append(b, child...)
	}
	return string(b)
}
