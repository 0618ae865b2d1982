package bedrock

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// Codes of the refusals (router.Unservable.Code) and of the error bodies
// this package writes.
const (
	// CodeUnsupportedParameter names a request field Bedrock has no
	// equivalent for, which would change the answer if dropped.
	CodeUnsupportedParameter = chatwire.CodeUnsupportedParameter
	// CodeUnsupportedValue names a field whose value Bedrock cannot
	// honour for this model.
	CodeUnsupportedValue = chatwire.CodeUnsupportedValue
	// CodeInvalidValue names a field that cannot be translated because it
	// is malformed.
	CodeInvalidValue = chatwire.CodeInvalidValue
	// CodeUnsupportedOperation refuses a path (such as /embeddings) or a
	// body format the model is not served with.
	CodeUnsupportedOperation = chatwire.CodeUnsupportedOperation
	// CodeBadUpstreamResponse is the code of the 502 written when a
	// successful Bedrock answer cannot be read.
	CodeBadUpstreamResponse = chatwire.CodeBadUpstreamResponse
)

// MaxResponseSize bounds a non-stream answer read for translation: 32 MiB.
// A larger answer is a 502.
const MaxResponseSize = 32 << 20

func unsupportedOperation(path string) *router.Unservable {
	return &router.Unservable{Param: "model", Code: CodeUnsupportedOperation,
		Message: "bedrock: Bedrock targets do not serve " + clip(path) + "; route this model to a target that does"}
}

// refuse is the refusal of field with code and a message about it.
func refuse(field, code, msg string) *router.Unservable {
	return &router.Unservable{Param: field, Code: code, Message: "bedrock: " + strconv.Quote(field) + ": " + msg}
}

// clip bounds a client- or upstream-given string quoted in a message.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}

// errorResponse is an OpenAI-shaped error answer with the given status,
// keeping the upstream's headers that say who answered.
func errorResponse(resp *http.Response, status int, code, msg string) *http.Response {
	b := make([]byte, 0, 96+len(msg))
	b = append(b, `{"error":{"message":`...)
	b = jsontext.AppendString(b, msg)
	b = append(b, `,"type":"server_error","param":null,"code":`...)
	b = jsontext.AppendString(b, code)
	b = append(b, "}}\n"...)
	h := make(http.Header, len(resp.Header)+2)
	for k, v := range resp.Header {
		switch k {
		case "Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding":
			continue
		}
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h,
		Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: resp.Request,
	}
}
