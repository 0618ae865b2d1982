package anthropic

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
)

// Error codes in the OpenAI-shaped error bodies this package writes.
const (
	// CodeUnsupportedParameter names a request field that has no Anthropic
	// equivalent and would change the answer if dropped.
	CodeUnsupportedParameter = chatwire.CodeUnsupportedParameter
	// CodeUnsupportedValue names a request field whose value Anthropic
	// cannot honour (n > 1, temperature above 1, a json_schema format…).
	CodeUnsupportedValue = chatwire.CodeUnsupportedValue
	// CodeInvalidValue names a request field that cannot be translated
	// because it is malformed (tool call arguments that are not a JSON
	// object, an image URL that is not http(s) or data:, …).
	CodeInvalidValue = chatwire.CodeInvalidValue
	// CodeUnsupportedOperation is the code of the answer to an operation
	// Anthropic does not offer, such as /embeddings.
	CodeUnsupportedOperation = chatwire.CodeUnsupportedOperation
	// CodeBadUpstreamResponse is the code of the 502 answer written when a
	// successful Anthropic answer cannot be read.
	CodeBadUpstreamResponse = chatwire.CodeBadUpstreamResponse
)

// RequestError is a request that cannot be translated faithfully. Field is
// the JSON path of the offending field in the request (such as "n",
// "messages[2].content[0].type"), Code one of the Code constants.
type RequestError struct {
	Field   string
	Code    string
	Message string
}

// Error returns the message, prefixed with the package name.
func (e *RequestError) Error() string { return "anthropic: " + e.Message }

// unsupported refuses a field that Anthropic has no equivalent for.
func unsupported(field, why string) *RequestError {
	msg := strconv.Quote(field) + " is not supported by Anthropic targets"
	if why != "" {
		msg += ": " + why
	}
	return &RequestError{Field: field, Code: CodeUnsupportedParameter, Message: msg}
}

// badValue refuses a value of a field.
func badValue(field, code, msg string) *RequestError {
	return &RequestError{Field: field, Code: code, Message: strconv.Quote(field) + ": " + msg}
}

// errorResponse is the one place that writes an OpenAI-shaped error answer:
// {"error":{"message","type","param","code"}} with the given status.
func errorResponse(req *http.Request, status int, typ, code, param, msg string) *http.Response {
	b := make([]byte, 0, 128+len(msg))
	b = append(b, `{"error":{"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"param":`...)
	if param == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, param)
	}
	b = append(b, `,"code":`...)
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

// requestErrorResponse is the 400 answer to a request that cannot be
// translated.
func requestErrorResponse(e *RequestError) *http.Response {
	return errorResponse(nil, http.StatusBadRequest, "invalid_request_error", e.Code, e.Field, e.Error())
}

// ErrorType is the Anthropic error type for an HTTP status, as the Messages
// API reports it ("overloaded_error" for 503 and 529, "rate_limit_error"
// for 429, …), for those who answer in Anthropic's shape.
func ErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}
