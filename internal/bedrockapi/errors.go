package bedrockapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// Error is a refusal in Bedrock's shape: an HTTP status, the error type
// Bedrock names in its x-amzn-ErrorType header, and a message for people.
type Error struct {
	// Status is the HTTP status: 400 for a ValidationException, 403 for
	// the authentication refusals, and so on.
	Status int
	// Type is Bedrock's error type, e.g. "ValidationException".
	Type string
	// Message says what is wrong; a bad field is named by its path in the
	// request ("messages[1].content[0].image.format").
	Message string
}

// Error returns the type and the message.
func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Write writes e as Bedrock's error answer (see WriteError).
func (e *Error) Write(w http.ResponseWriter) { WriteError(w, e.Status, e.Type, e.Message) }

// WriteError writes Bedrock's error answer: the status, x-amzn-ErrorType:
// typ, Content-Type application/json and the body {"message": message}.
// The AWS SDKs read the type from the header and the message from the body.
func WriteError(w http.ResponseWriter, status int, typ, message string) {
	body, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{message})
	h := w.Header()
	h.Set("X-Amzn-Errortype", typ)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// Bedrock's error types and their statuses.
const (
	// TypeValidation is a request Bedrock refuses as malformed (400).
	TypeValidation = "ValidationException"
	// TypeInternal is a failure on Bedrock's side (500).
	TypeInternal = "InternalServerException"
	// TypeThrottling is a request over the account's quota (429).
	TypeThrottling = "ThrottlingException"
	// TypeServiceUnavailable is a service that cannot answer now (503).
	TypeServiceUnavailable = "ServiceUnavailableException"
	// TypeModelStreamError is a model that failed mid-stream (424).
	TypeModelStreamError = "ModelStreamErrorException"
	// TypeAccessDenied is a caller without access, or a bad API key (403).
	TypeAccessDenied = "AccessDeniedException"
	// TypeUnrecognizedClient is an access key id Bedrock does not know (403).
	TypeUnrecognizedClient = "UnrecognizedClientException"
	// TypeInvalidSignature is a signature that does not match, or a
	// request signed too long ago or for later (403).
	TypeInvalidSignature = "InvalidSignatureException"
	// TypeIncompleteSignature is an Authorization header that lacks a part
	// SigV4 requires (400).
	TypeIncompleteSignature = "IncompleteSignatureException"
	// TypeMissingAuthenticationToken is a request with no credentials (403).
	TypeMissingAuthenticationToken = "MissingAuthenticationTokenException"
	// TypeExpiredToken is temporary credentials past their expiry (403).
	TypeExpiredToken = "ExpiredTokenException"
	// TypeResourceNotFound is a model id Bedrock does not know (404).
	TypeResourceNotFound = "ResourceNotFoundException"
	// TypeModelTimeout is a model that took too long to answer (408).
	TypeModelTimeout = "ModelTimeoutException"
	// TypeModelNotReady is a model not ready to serve yet (429).
	TypeModelNotReady = "ModelNotReadyException"
	// TypeModelError is a model that failed to answer (424).
	TypeModelError = "ModelErrorException"
	// TypeServiceQuotaExceeded is a request over an account quota (400).
	TypeServiceQuotaExceeded = "ServiceQuotaExceededException"
)

// invalid is the ValidationException for the field at path.
func invalid(path, problem string) *Error {
	msg := problem
	if path != "" {
		msg = path + ": " + problem
	}
	return &Error{Status: http.StatusBadRequest, Type: TypeValidation, Message: msg}
}

// internal is the InternalServerException for an answer that cannot be
// translated.
func internal(problem string) *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeInternal, Message: problem}
}

// maxQuoted is the most bytes of a client's text quoted in an error.
const maxQuoted = 64

// quote quotes a client's text for an error message, clipped to maxQuoted
// bytes at a rune boundary.
func quote(s string) string {
	if len(s) > maxQuoted {
		n := maxQuoted
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}
