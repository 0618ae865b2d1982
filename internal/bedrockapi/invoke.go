package bedrockapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// AnthropicVersion is the anthropic_version an InvokeModel body for a
// Claude model must give.
const AnthropicVersion = "bedrock-2023-05-31"

// InvokeToMessages turns an InvokeModel body for a Claude model into the
// Messages body the simulator serves: the body is Anthropic's Messages
// body less "model" and "stream" (which Bedrock refuses as extraneous
// keys; the model is the URL's), with "anthropic_version":
// "bedrock-2023-05-31" and max_tokens and messages required, and an
// optional "anthropic_beta" list of strings. The result has the other
// members as they came (in key order), "model": modelID and, when stream
// is set, "stream": true. Refusals are *Error, ValidationExceptions
// worded as Bedrock words them ("#: required key [max_tokens] not found").
// The members' own contents are for the Messages translation to check.
func InvokeToMessages(modelID string, body []byte, stream bool) ([]byte, error) {
	if modelID == "" {
		return nil, invalid("modelId", "is required")
	}
	req, err := readBody(body)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"model", "stream"} {
		if _, ok := req.m[key]; ok {
			return nil, malformed("extraneous key [" + key + "] is not permitted")
		}
	}
	for _, key := range []string{"anthropic_version", "max_tokens", "messages"} {
		if _, ok := req.m[key]; !ok {
			return nil, malformed("required key [" + key + "] not found")
		}
	}
	if v, err := req.str("anthropic_version"); err != nil || v != AnthropicVersion {
		return nil, malformed("anthropic_version: " + quote(v) + " is not a valid enum value; want " + AnthropicVersion)
	}
	if _, err := req.strs("anthropic_beta"); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(modelID)+32)
	out = append(out, `{"model":`...)
	out = jsontext.AppendString(out, modelID)
	for _, key := range slices.Sorted(maps.Keys(req.m)) {
		if key == "anthropic_version" || key == "anthropic_beta" {
			continue
		}
		out = append(out, ',')
		out = jsontext.AppendString(out, key)
		out = append(out, ':')
		out = append(out, validUTF8(req.m[key])...)
	}
	if stream {
		out = append(out, `,"stream":true`...)
	}
	return append(out, '}'), nil
}

// malformed is the ValidationException Bedrock gives a Claude body that
// does not meet its schema.
func malformed(problem string) *Error {
	return invalid("", "Malformed input request: #: "+problem+", please reformat your input and try again.")
}

// anthropicEvent is the part of an Anthropic stream event that
// InvokeModelWithResponseStream reads.
type anthropicEvent struct {
	Type  string `json:"type"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Message *struct {
		Usage struct {
			InputTokens int64 `json:"input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Usage *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// invokeStream translates an Anthropic Messages stream into
// InvokeModelWithResponseStream's event stream.
type invokeStream struct {
	in             *sse.Reader
	clk            clock.Clock
	start          time.Time
	firstByte      time.Duration
	out            frames
	done, stopped  bool
	input, output  int64
	payload, chunk []byte
}

// NewInvokeStream reads an Anthropic Messages SSE stream and yields
// InvokeModelWithResponseStream's event stream: one "chunk" event per
// Anthropic event, payload {"bytes": base64(event JSON)}, the
// message_stop event carrying "amazon-bedrock-invocationMetrics"
// (inputTokenCount, outputTokenCount, invocationLatency and
// firstByteLatency in milliseconds, on real time; see
// NewInvokeStreamClock) as Bedrock adds it. An Anthropic error event
// becomes an exception frame that ends the stream (overloaded_error a
// serviceUnavailableException, rate_limit_error a throttlingException,
// api_error an internalServerException, invalid_request_error a
// validationException, others a modelStreamErrorException), as does a
// stream that ends before message_stop or sends an event that is not
// JSON (modelStreamErrorException).
func NewInvokeStream(messagesSSE io.Reader) io.Reader {
	return NewInvokeStreamClock(messagesSSE, nil)
}

// NewInvokeStreamClock is NewInvokeStream with latencies measured on clk
// (nil: real time), from this call.
func NewInvokeStreamClock(messagesSSE io.Reader, clk clock.Clock) io.Reader {
	clk = clock.Or(clk)
	return &invokeStream{in: sse.NewReader(messagesSSE, sse.Options{}), clk: clk, start: clk.Now(), firstByte: -1}
}

// Read yields the next frames.
func (s *invokeStream) Read(p []byte) (int, error) {
	for s.out.buf.Len() == 0 {
		if s.done {
			return 0, io.EOF
		}
		s.step()
	}
	return s.out.buf.Read(p)
}

func (s *invokeStream) step() {
	ev, err := s.in.Next()
	if err != nil {
		s.done = true
		if !s.stopped {
			s.out.exception(ExceptionModelStreamError, msgCut)
		}
		return
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 || s.stopped {
		return
	}
	if s.firstByte < 0 {
		s.firstByte = s.clk.Now().Sub(s.start)
	}
	var e anthropicEvent
	if json.Unmarshal(data, &e) != nil || data[0] != '{' {
		s.fail(ExceptionModelStreamError, "The model stream sent an event that is not JSON.")
		return
	}
	switch {
	case e.Type == "error" || ev.Name == "error":
		typ, msg := "", ""
		if e.Error != nil {
			typ, msg = e.Error.Type, e.Error.Message
		}
		s.fail(exceptionFor(typ, ""), msg)
		return
	case e.Type == "message_start" && e.Message != nil:
		s.input = e.Message.Usage.InputTokens
	case e.Type == "message_delta" && e.Usage != nil:
		// A translated stream learns its input count at the end.
		s.input, s.output = max(s.input, e.Usage.InputTokens), e.Usage.OutputTokens
	case e.Type == "message_stop":
		s.stopped = true
		data = s.withMetrics(data)
	}
	s.chunk = append(s.chunk[:0], `{"bytes":"`...)
	s.chunk = base64.StdEncoding.AppendEncode(s.chunk, data)
	s.out.event("chunk", append(s.chunk, `"}`...))
}

// withMetrics returns the message_stop event with Bedrock's invocation
// metrics added.
func (s *invokeStream) withMetrics(data []byte) []byte {
	b := append(s.payload[:0], data[:len(data)-1]...)
	if len(bytes.TrimSpace(b)) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"amazon-bedrock-invocationMetrics":{"inputTokenCount":`...)
	b = strconv.AppendInt(b, s.input, 10)
	b = append(b, `,"outputTokenCount":`...)
	b = strconv.AppendInt(b, s.output, 10)
	b = append(b, `,"invocationLatency":`...)
	b = strconv.AppendInt(b, s.clk.Now().Sub(s.start).Milliseconds(), 10)
	b = append(b, `,"firstByteLatency":`...)
	b = strconv.AppendInt(b, s.firstByte.Milliseconds(), 10)
	s.payload = append(b, "}}"...)
	return s.payload
}

func (s *invokeStream) fail(typ, message string) {
	if message == "" {
		message = "The model stream failed."
	}
	s.out.exception(typ, message)
	s.done = true
}
