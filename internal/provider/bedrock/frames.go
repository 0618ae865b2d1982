package bedrock

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// MaxFrameSize bounds one event-stream message (prelude, headers, payload
// and checksum): 1 MiB. Bedrock's events are a few kilobytes; a larger
// frame is refused as corrupt, so a hostile length costs no memory.
const MaxFrameSize = 1 << 20

// frames reads AWS event-stream messages (application/vnd.amazon.eventstream)
// with the SDK's decoder, which checks both CRCs. It reads one frame's
// length first, to refuse an oversized frame before reading it. A
// message's Payload is valid until the next call. It is not safe for
// concurrent use.
type frames struct {
	src *sticky
	br  *bufio.Reader
	dec *eventstream.Decoder
	buf []byte
}

func newFrames(r io.Reader) *frames {
	src := &sticky{r: r}
	return &frames{src: src, br: bufio.NewReaderSize(src, 16<<10), dec: eventstream.NewDecoder()}
}

// sticky remembers the body's first read error other than io.EOF, so a
// frame cut by a cancelled context says so rather than "corrupt".
type sticky struct {
	r   io.Reader
	err error
}

func (s *sticky) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// errCorrupt is the error of a frame cut short, oversized or failing its
// checksum: nothing after it can be trusted.
func errCorrupt(what string, err error) error {
	if err != nil {
		return fmt.Errorf("bedrock: event stream: %s: %w: %w", what, io.ErrUnexpectedEOF, err)
	}
	return fmt.Errorf("bedrock: event stream: %s: %w", what, io.ErrUnexpectedEOF)
}

// next returns the next message, io.EOF at a clean end between frames, or
// an error wrapping io.ErrUnexpectedEOF for a cut or corrupt frame. A read
// error of the body (a cancelled context, a reset) is wrapped as it is.
func (f *frames) next() (eventstream.Message, error) {
	head, err := f.br.Peek(4)
	switch {
	case f.src.err != nil:
		return eventstream.Message{}, fmt.Errorf("bedrock: event stream: %w", f.src.err)
	case len(head) == 0 && err == io.EOF:
		return eventstream.Message{}, io.EOF
	case err != nil:
		return eventstream.Message{}, errCorrupt("cut inside a frame", nil)
	}
	n := binary.BigEndian.Uint32(head)
	if n < 16 || n > MaxFrameSize {
		return eventstream.Message{}, errCorrupt(fmt.Sprintf("frame length %d outside 16 to %d", n, MaxFrameSize), nil)
	}
	lr := &io.LimitedReader{R: f.br, N: int64(n)}
	msg, err := f.dec.Decode(lr, f.buf[:0])
	switch {
	case f.src.err != nil:
		return eventstream.Message{}, fmt.Errorf("bedrock: event stream: %w", f.src.err)
	case err != nil:
		return eventstream.Message{}, errCorrupt("bad or cut frame", err)
	case lr.N != 0:
		return eventstream.Message{}, errCorrupt("frame lengths disagree", nil)
	}
	f.buf = msg.Payload[:0]
	return msg, nil
}

// event is one decoded message: an event's type and payload, or an
// exception Bedrock sent in the stream.
type event struct {
	kind      string // :event-type, for an event
	payload   []byte
	exception string // :exception-type or :error-code, for an exception
	message   string // the exception's message
}

// read decodes the next message into an event.
func (f *frames) read() (event, error) {
	msg, err := f.next()
	if err != nil {
		return event{}, err
	}
	switch header(msg, ":message-type") {
	case "event":
		return event{kind: header(msg, ":event-type"), payload: msg.Payload}, nil
	case "exception":
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(msg.Payload, &p)
		kind := header(msg, ":exception-type")
		if kind == "" {
			kind = "exception"
		}
		return event{exception: kind, message: p.Message}, nil
	case "error":
		code := header(msg, ":error-code")
		if code == "" {
			code = "error"
		}
		return event{exception: code, message: header(msg, ":error-message")}, nil
	}
	return event{}, errCorrupt("a message of unknown :message-type", nil)
}

// header is a string header of msg, or "".
func header(msg eventstream.Message, name string) string {
	if v, ok := msg.Headers.Get(name).(eventstream.StringValue); ok {
		return string(v)
	}
	return ""
}

// errorType maps a Bedrock exception to the Anthropic error type that
// aierr reads the same way: a throttle, an outage or the caller's fault.
func errorType(exception string) string {
	switch exception {
	case "throttlingException", "ThrottlingException":
		return "rate_limit_error"
	case "serviceUnavailableException", "ServiceUnavailableException":
		return "overloaded_error"
	case "validationException", "ValidationException":
		return "invalid_request_error"
	}
	// internalServerException, modelStreamErrorException,
	// modelTimeoutException and anything unknown: the upstream failed.
	return "api_error"
}

// exceptionMessage is what an error event says of an exception.
func exceptionMessage(ev *event) string {
	msg := "bedrock: " + clip(ev.exception)
	if ev.message != "" {
		msg += ": " + clip(ev.message)
	}
	return msg
}
