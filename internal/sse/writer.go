package sse

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// SetHeaders sets the response headers of an event stream on h: the
// text/event-stream content type, no caching, and no buffering by nginx
// and similar proxies. Call it before the first write.
//
// The values are shared by every stream, so setting them allocates
// nothing; each has capacity one, so an Add to the same header copies
// it. Replace such a value (Set), never write into it.
func SetHeaders(h http.Header) {
	h["Content-Type"] = eventStream
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = no
	delete(h, "Content-Length")
}

var (
	eventStream = []string{"text/event-stream"}
	noCache     = []string{"no-cache"}
	no          = []string{"no"}
)

// Writer writes server-sent events, one Write and one flush per event, so
// that each event reaches the client as soon as it is written. Write and
// Flush split the two, for a relay that passes on a batch of events that
// arrived together with one flush: it writes each and flushes before it
// waits for more.
//
// A Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	flush   func() error
	rc      http.ResponseController // NewWriter's: used when flush is nil and rw is set
	rw      bool
	buf     []byte // the event being framed, reused
	pending bool   // written since the last flush
}

// NewWriter returns a Writer to w that flushes through
// http.NewResponseController, so wrapped ResponseWriters that implement
// Unwrap flush too. A ResponseWriter that cannot flush at all is written
// to without flushing, as httputil.ReverseProxy does.
//
// The Writer holds its ResponseController, so that a new Writer is one
// allocation, not three (the controller, a closure over it, the Writer).
func NewWriter(w http.ResponseWriter) *Writer {
	return &Writer{w: w, rc: *http.NewResponseController(w), rw: true}
}

// NewFlushWriter returns a Writer to w that calls flush, if not nil, after
// each event.
func NewFlushWriter(w io.Writer, flush func() error) *Writer {
	return &Writer{w: w, flush: flush}
}

// WriteRaw writes raw as it is, typically an Event's Raw from a Reader,
// passing an upstream event through byte for byte, and flushes. raw should
// end with the blank line that ends an event; WriteRaw does not check.
func (w *Writer) WriteRaw(raw []byte) error {
	if err := w.Write(raw); err != nil {
		return err
	}
	return w.Flush()
}

// Write writes raw as WriteRaw does, without flushing: the event waits in
// the response's buffer until Flush or the next flushing write.
func (w *Writer) Write(raw []byte) error {
	if _, err := w.w.Write(raw); err != nil {
		return err
	}
	w.pending = true
	return nil
}

// Flush sends what Write left in the buffer; without such events it does
// nothing.
func (w *Writer) Flush() error {
	if !w.pending {
		return nil
	}
	return w.doFlush()
}

// WriteEvent writes an event with the given name ("" for none) and data,
// and flushes. Data holding line breaks ("\n", "\r\n" or "\r") is written as
// several data lines, which a client joins back with "\n". A name holding a
// line break gives ErrInvalidName and writes nothing.
func (w *Writer) WriteEvent(name string, data []byte) error {
	if strings.ContainsAny(name, "\r\n") {
		return ErrInvalidName
	}
	b := w.buf[:0]
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	for {
		n, next := lineEnd(data)
		if next < 0 {
			b = appendData(b, data)
			break
		}
		b = appendData(b, data[:n])
		data = data[next:]
	}
	b = append(b, '\n')
	w.buf = b
	return w.WriteRaw(b)
}

func appendData(b, line []byte) []byte {
	b = append(b, "data: "...)
	b = append(b, line...)
	return append(b, '\n')
}

// WriteDone writes OpenAI's end-of-stream event, data: [DONE], and flushes.
func (w *Writer) WriteDone() error {
	return w.WriteRaw(doneEvent)
}

var doneEvent = []byte("data: [DONE]\n\n")

// WriteComment writes a comment block (": text" and a blank line), which
// clients ignore: a keep-alive for idle connections. Line breaks in text
// become separate comment lines.
func (w *Writer) WriteComment(text string) error {
	b := w.buf[:0]
	for {
		n, next := lineEnd([]byte(text))
		if next < 0 {
			b = append(append(append(b, ": "...), text...), '\n')
			break
		}
		b = append(append(append(b, ": "...), text[:n]...), '\n')
		text = text[next:]
	}
	b = append(b, '\n')
	w.buf = b
	return w.WriteRaw(b)
}

// ErrorEvent is the error the gateway reports inside a stream it has
// already committed, just before it ends the stream.
type ErrorEvent struct {
	// Message is for people: what went wrong.
	Message string
	// Type is the error's class: OpenAI's "server_error" or
	// "rate_limit_exceeded", Anthropic's "overloaded_error" or "api_error".
	Type string
	// Code is OpenAI's machine-readable code ("" writes null). Anthropic
	// errors have none.
	Code string
}

// WriteError writes e as OpenAI reports an error inside a chat completion
// stream, a nameless event whose data is the usual error object:
//
//	data: {"error":{"message":"…","type":"server_error","param":null,"code":null}}
//
// and flushes. The official OpenAI SDKs raise an APIError for any event
// whose data has an "error" member (openai-python's and openai-go's
// ssestream check exactly that), and OpenRouter, vLLM and LiteLLM send their
// mid-stream errors the same way, so OpenAI-compatible clients all see a
// failure. The gateway then ends the stream without data: [DONE].
func (w *Writer) WriteError(e ErrorEvent) error {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	b := body{Message: e.Message, Type: e.Type}
	if e.Code != "" {
		b.Code = &e.Code
	}
	data, err := json.Marshal(struct {
		Error body `json:"error"`
	}{b})
	if err != nil {
		return err
	}
	return w.WriteEvent("", data)
}

// WriteAnthropicError writes e as Anthropic reports an error inside a
// Messages stream, and flushes:
//
//	event: error
//	data: {"type":"error","error":{"type":"overloaded_error","message":"…"}}
//
// The Anthropic SDKs raise an error for an event named "error" (and skip
// nameless events, so WriteError would go unseen by them). e.Code is not
// written.
func (w *Writer) WriteAnthropicError(e ErrorEvent) error {
	type body struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		Type  string `json:"type"`
		Error body   `json:"error"`
	}{"error", body{e.Type, e.Message}})
	if err != nil {
		return err
	}
	return w.WriteEvent("error", data)
}

func (w *Writer) doFlush() error {
	w.pending = false
	switch {
	case w.flush != nil:
		return w.flush()
	case w.rw:
		if err := w.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
	}
	return nil
}
