package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// Error codes of the refusals (router.Unservable.Code) and of the
// OpenAI-shaped error bodies this package writes. They are the codes the
// anthropic adapter uses, so a client sees one vocabulary.
const (
	// CodeUnsupportedParameter names a request field that has no Gemini
	// equivalent and would change the answer if dropped.
	CodeUnsupportedParameter = chatwire.CodeUnsupportedParameter
	// CodeUnsupportedValue names a request field whose value Gemini cannot
	// honour (n above 8, an image URL whose type cannot be known, …).
	CodeUnsupportedValue = chatwire.CodeUnsupportedValue
	// CodeInvalidValue names a request field that cannot be translated
	// because it is malformed (tool call arguments that are not a JSON
	// object, a tool result that answers no call, …).
	CodeInvalidValue = chatwire.CodeInvalidValue
	// CodeUnsupportedOperation refuses an operation the upstream does not
	// offer through this adapter, such as /embeddings.
	CodeUnsupportedOperation = chatwire.CodeUnsupportedOperation
	// CodeBadUpstreamResponse is the code of the 502 answer written when a
	// successful Gemini answer cannot be read.
	CodeBadUpstreamResponse = chatwire.CodeBadUpstreamResponse
)

// refusal is a request that cannot be translated faithfully.
func refusal(field, code, msg string) *router.Unservable {
	return &router.Unservable{Param: field, Code: code, Message: "gemini: " + msg}
}

// unsupported refuses a field that Gemini has no equivalent for.
func unsupported(field, why string) *router.Unservable {
	msg := strconv.Quote(field) + " is not supported by Gemini targets"
	if why != "" {
		msg += ": " + why
	}
	return refusal(field, CodeUnsupportedParameter, msg)
}

// badValue refuses a value of a field.
func badValue(field, code, msg string) *router.Unservable {
	return refusal(field, code, strconv.Quote(field)+": "+msg)
}

// decode unmarshals a field's value, naming the field on failure.
func decode(field string, raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return badValue(field, CodeInvalidValue, jsonProblem(err))
	}
	return nil
}

// jsonProblem says what is wrong with a JSON value in JSON's words.
func jsonProblem(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return "want " + chatwire.JSONKind(ute.Type) + ", got " + article(ute.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "not valid JSON at offset " + strconv.FormatInt(se.Offset, 10)
	}
	return "not valid JSON"
}

// article names encoding/json's JSON value type (string, number 1.5, bool,
// array, object) with its article.
func article(v string) string {
	switch {
	case v == "array" || v == "object":
		return "an " + v
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number"):
		return "a number"
	}
	return "a " + v
}

// path builds a field path such as messages[3].content.
func path(parent string, i int, child string) string {
	var b strings.Builder
	b.Grow(len(parent) + len(child) + 6)
	b.WriteString(parent)
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(i))
	b.WriteByte(']')
	if child != "" {
		b.WriteByte('.')
		b.WriteString(child)
	}
	return b.String()
}

// shown clips a client's value for an error message: named, not echoed
// whole.
func shown(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// appendString appends s as a JSON string, as encoding/json writes it with
// HTML escaping off.
func appendString(b []byte, s string) []byte { return jsontext.AppendString(b, s) }

// errorResponse is the one place that writes an OpenAI-shaped error answer:
// {"error":{"message","type","param","code"}} with the given status.
func errorResponse(req *http.Request, status int, typ, code, msg string) *http.Response {
	b := make([]byte, 0, 96+len(msg))
	b = append(b, `{"error":{"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"param":null,"code":`...)
	b = appendString(b, code)
	b = append(b, "}}\n"...)
	h := make(http.Header, 2)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}
}

// copyHeaders copies the headers of an upstream answer that say who
// answered and what limits apply, leaving framing headers alone.
func copyHeaders(dst, src http.Header) {
	for k, v := range src {
		switch k {
		case "Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding":
			continue
		}
		dst[k] = v
	}
}
