package bedrockapi

import (
	"bytes"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// ContentTypeEventStream is the Content-Type of ConverseStream's and
// InvokeModelWithResponseStream's answers.
const ContentTypeEventStream = "application/vnd.amazon.eventstream"

// The exception types of Bedrock's response streams: the :exception-type
// header of an exception frame, which the AWS SDKs turn into their typed
// errors (*types.ThrottlingException and so on).
const (
	ExceptionInternalServer     = "internalServerException"
	ExceptionModelStreamError   = "modelStreamErrorException"
	ExceptionValidation         = "validationException"
	ExceptionThrottling         = "throttlingException"
	ExceptionServiceUnavailable = "serviceUnavailableException"
	ExceptionModelTimeout       = "modelTimeoutException" // InvokeModelWithResponseStream only
)

// eventHeaders are the headers of an event frame, per event type: built
// once, as an encoder only reads them.
var eventHeaders = map[string]eventstream.Headers{}

func init() {
	for _, typ := range []string{"messageStart", "contentBlockStart", "contentBlockDelta",
		"contentBlockStop", "messageStop", "metadata", "chunk"} {
		eventHeaders[typ] = eventstream.Headers{
			{Name: ":event-type", Value: eventstream.StringValue(typ)},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("event")},
		}
	}
}

// frames encodes event-stream messages into a buffer, with the SDK's
// encoder.
type frames struct {
	enc *eventstream.Encoder
	buf bytes.Buffer
}

// event appends an event frame of type typ (a key of eventHeaders).
func (f *frames) event(typ string, payload []byte) {
	if f.enc == nil {
		f.enc = eventstream.NewEncoder()
	}
	// Encoding into a bytes.Buffer fails only for headers or a payload
	// over the format's limits, which these frames never reach.
	f.enc.Encode(&f.buf, eventstream.Message{Headers: eventHeaders[typ], Payload: payload})
}

// exception appends an exception frame.
func (f *frames) exception(typ, message string) {
	f.buf.Write(ExceptionFrame(typ, message))
}

// ExceptionFrame is one event-stream exception message, as Bedrock ends a
// response stream that fails: headers :message-type exception,
// :exception-type exceptionType (one of the Exception constants) and
// :content-type application/json, payload {"message": message}. The AWS
// SDKs return it from the stream's Err as their typed exception.
func ExceptionFrame(exceptionType, message string) []byte {
	payload := append([]byte(`{"message":`), jsontext.AppendString(nil, message)...)
	return exceptionFrame(exceptionType, append(payload, '}'))
}

func exceptionFrame(exceptionType string, payload []byte) []byte {
	var b bytes.Buffer
	eventstream.NewEncoder().Encode(&b, eventstream.Message{
		Headers: eventstream.Headers{
			{Name: ":exception-type", Value: eventstream.StringValue(exceptionType)},
			{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			{Name: ":message-type", Value: eventstream.StringValue("exception")},
		},
		Payload: payload,
	})
	return b.Bytes()
}

// ModelStreamErrorFrame is the modelStreamErrorException Bedrock sends
// when the model behind it failed mid-stream, with the model's own status
// and message (originalStatusCode, originalMessage; left out when 0 or
// ""), which the SDKs expose on *types.ModelStreamErrorException.
func ModelStreamErrorFrame(message string, originalStatus int, originalMessage string) []byte {
	payload := append([]byte(`{"message":`), jsontext.AppendString(nil, message)...)
	if originalStatus != 0 {
		payload = append(payload, `,"originalStatusCode":`...)
		payload = strconv.AppendInt(payload, int64(originalStatus), 10)
	}
	if originalMessage != "" {
		payload = append(payload, `,"originalMessage":`...)
		payload = jsontext.AppendString(payload, originalMessage)
	}
	return exceptionFrame(ExceptionModelStreamError, append(payload, '}'))
}

// exceptionFor maps the type (or code) of an OpenAI or Anthropic error
// event to the exception Bedrock sends for it mid-stream: a rate limit is
// a throttlingException, an overload a serviceUnavailableException, a bad
// request a validationException, a server error an
// internalServerException, and anything else a modelStreamErrorException.
func exceptionFor(typ, code string) string {
	for _, s := range [2]string{typ, code} {
		switch s {
		case "rate_limit_exceeded", "rate_limit_error", "tokens", "requests", "RESOURCE_EXHAUSTED":
			return ExceptionThrottling
		case "overloaded_error", "service_unavailable", "server_overloaded", "UNAVAILABLE":
			return ExceptionServiceUnavailable
		case "invalid_request_error", "invalid_request", "INVALID_ARGUMENT":
			return ExceptionValidation
		case "server_error", "api_error", "internal_error", "INTERNAL":
			return ExceptionInternalServer
		}
	}
	return ExceptionModelStreamError
}
