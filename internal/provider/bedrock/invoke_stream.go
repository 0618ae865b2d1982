package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// messagesEvents replaces a successful InvokeModelWithResponseStream
// answer's body (an AWS event stream of "chunk" events) with the
// Anthropic Messages SSE it carries: "event: <type>\ndata: <json>\n\n" per
// chunk, as Anthropic's own API sends it.
func messagesEvents(resp *http.Response) *http.Response {
	return chatwire.Streamed(resp, &messagesSSE{src: resp.Body, frames: newFrames(resp.Body)})
}

// messagesSSE turns chunk events into Anthropic SSE, one frame per refill.
// An exception in the stream becomes Anthropic's "event: error" with a
// type aierr reads as Bedrock meant it, and ends the stream; so does a
// stream that ends before message_stop, with a read error wrapping
// io.ErrUnexpectedEOF. It starts no goroutine and is not safe for
// concurrent use.
type messagesSSE struct {
	src             io.ReadCloser
	frames          *frames
	chatwire.Refill      // translated bytes not yet read
	done            bool // message_stop was passed on
}

// Read yields SSE bytes, decoding frames as needed.
func (s *messagesSSE) Read(p []byte) (int, error) { return s.Pull(p, s.step) }

// Close closes the upstream body.
func (s *messagesSSE) Close() error { return s.src.Close() }

// chunkPayload is a "chunk" event's payload.
type chunkPayload struct {
	Bytes []byte `json:"bytes"` // base64 in JSON, decoded by encoding/json
}

func (s *messagesSSE) step() {
	ev, err := s.frames.read()
	switch {
	case err == io.EOF && s.done:
		s.Err = io.EOF
		return
	case err == io.EOF:
		s.Err = fmt.Errorf("bedrock: stream ended before message_stop: %w", io.ErrUnexpectedEOF)
		return
	case err != nil:
		s.Err = err
		return
	case ev.exception != "":
		s.writeError(errorType(ev.exception), exceptionMessage(&ev))
		s.Err = io.EOF
		return
	case ev.kind != "chunk":
		return // an event type added later carries nothing we know
	}
	if err := s.chunk(ev.payload); err != nil {
		s.Err = err
	}
}

// chunk writes one chunk's Anthropic event.
func (s *messagesSSE) chunk(payload []byte) error {
	var c chunkPayload
	if err := json.Unmarshal(payload, &c); err != nil {
		return fmt.Errorf("bedrock: stream: malformed chunk: %w: %w", io.ErrUnexpectedEOF, err)
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(c.Bytes, &head); err != nil || !eventName(head.Type) {
		return fmt.Errorf("bedrock: stream: a chunk that is not an Anthropic event: %w", io.ErrUnexpectedEOF)
	}
	data := c.Bytes
	if bytes.IndexAny(data, "\r\n") >= 0 { // an SSE data line cannot break
		var b bytes.Buffer
		if err := json.Compact(&b, data); err != nil {
			return fmt.Errorf("bedrock: stream: malformed chunk: %w: %w", io.ErrUnexpectedEOF, err)
		}
		data = b.Bytes()
	}
	s.Out = append(s.Out, "event: "...)
	s.Out = append(s.Out, head.Type...)
	s.Out = append(s.Out, "\ndata: "...)
	s.Out = append(s.Out, data...)
	s.Out = append(s.Out, "\n\n"...)
	if head.Type == "message_stop" {
		s.done = true
	}
	if head.Type == "error" { // Anthropic's own error event, passed on
		s.Err = io.EOF
	}
	return nil
}

// eventName accepts Anthropic event names: lower-case letters and "_".
func eventName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

// writeError writes Anthropic's error event.
func (s *messagesSSE) writeError(typ, msg string) {
	s.Out = append(s.Out, `event: error`+"\n"+`data: {"type":"error","error":{"type":`...)
	s.Out = jsontext.AppendString(s.Out, typ)
	s.Out = append(s.Out, `,"message":`...)
	s.Out = jsontext.AppendString(s.Out, msg)
	s.Out = append(s.Out, "}}\n\n"...)
}
