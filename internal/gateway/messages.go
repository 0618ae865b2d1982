package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// The gateway also speaks Anthropic's Messages API (POST /v1/messages), so
// Anthropic SDK users can point their base URL at it. A Messages request is
// translated to the OpenAI chat format on arrival, walks the same ladder
// (Anthropic targets translate it back to Messages on the way out), and the
// answer — JSON, stream or error — is translated back to Anthropic's shape.

// writeAnthropicError writes Anthropic's error shape.
func writeAnthropicError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": anthropic.ErrorType(status), "message": msg},
	})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// toAnthropicError rewrites an upstream error body in Anthropic's shape,
// passing one that already is.
func toAnthropicError(body []byte) (string, bool) {
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Type == "error" {
		return "", true
	}
	if e.Error.Message != "" {
		return e.Error.Message, false
	}
	return string(bytes.TrimSpace(body)), false
}

// sink receives a committed stream's events.
type sink interface {
	// Write passes one OpenAI-format event on. It may wait in a buffer
	// until Flush.
	Write(raw []byte) error
	// Flush sends what Write buffered.
	Flush() error
	// Broken ends the stream with error event e, without a normal end.
	Broken(e sse.ErrorEvent)
	// Close ends a stream that finished well.
	Close()
}

// openaiSink writes events as they are.
type openaiSink struct{ w *sse.Writer }

func (s openaiSink) Write(raw []byte) error  { return s.w.Write(raw) }
func (s openaiSink) Flush() error            { return s.w.Flush() }
func (s openaiSink) Close()                  { s.w.Flush() }
func (s openaiSink) Broken(e sse.ErrorEvent) { s.w.WriteError(e) }

// nativeSink passes an Anthropic stream through as it is.
type nativeSink struct{ w *sse.Writer }

func (s nativeSink) Write(raw []byte) error  { return s.w.Write(raw) }
func (s nativeSink) Flush() error            { return s.w.Flush() }
func (s nativeSink) Close()                  { s.w.Flush() }
func (s nativeSink) Broken(e sse.ErrorEvent) { s.w.WriteAnthropicError(anthropicEvent(e)) }

// newAnthropicSink translates OpenAI events to Anthropic's Messages
// events.
func newAnthropicSink(w http.ResponseWriter, model string) *pipeSink {
	return newPipeSink(w, func(r io.Reader) io.Reader { return anthropic.NewMessagesStream(r, model) },
		func(w http.ResponseWriter, e sse.ErrorEvent) { sse.NewWriter(w).WriteAnthropicError(anthropicEvent(e)) })
}

// anthropicEvent is an error event in Anthropic's types: a timeout is
// its timeout_error, anything else an api_error.
func anthropicEvent(e sse.ErrorEvent) sse.ErrorEvent {
	if e.Type == "timeout" {
		return sse.ErrorEvent{Message: e.Message, Type: "timeout_error"}
	}
	return sse.ErrorEvent{Message: e.Message, Type: "api_error"}
}

// serveMessages answers a non-streamed Messages request: an error answer
// in Anthropic's shape, a success translated back. It reports false, having
// sent nothing, when the walk should go on to the next target (the answer
// broke off, or is not a JSON object).
func (x *exchange) serveMessages(a *router.Attempt) bool {
	x.drain.hold(true)
	body, err := readAnswer(a.Resp.Body, a.Resp.ContentLength, anthropic.MaxResponseSize)
	x.drain.hold(false)
	a.Resp.Body.Close()
	if a.Final {
		x.passFinalMessages(a.Resp.StatusCode, a.Resp.Header, body)
		return true
	}
	switch {
	case err != nil && (x.r.Context().Err() != nil || x.drain.clientGone()):
		a.Abandon()
		return true
	case err != nil:
		a.Fail(x.s.classifyReadError(err))
		return false
	case !jsonObject(body):
		a.Fail(invalidAnswer(a))
		return false
	}
	x.trace.answered(a, body)
	if a.Native {
		a.Succeed()
		if u := usageOf(body); u != nil {
			x.account(a, u.anthropic())
		}
		x.captureForReplay()
		x.writeJSON(body)
		x.keepSent("application/json", a.Target.Name)
		return true
	}
	x.account(a, usageInto(&x.answerUsage, body))
	out, err := anthropic.ToMessagesResponse(body, x.model)
	if err != nil {
		a.Succeed() // the target answered; the translation is ours
		writeAnthropicError(x.w, http.StatusBadGateway, "The answer from "+a.Target.Name+" could not be translated to the Messages API: "+err.Error())
		return true
	}
	a.Succeed()
	x.captureForReplay()
	x.writeJSON(out)
	x.keepSent("application/json", a.Target.Name)
	return true
}

// writeJSON writes a 200 JSON answer.
func (x *exchange) writeJSON(body []byte) {
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(http.StatusOK)
	x.w.Write(body)
}

// passFinalMessages returns an upstream's client error in Anthropic's
// shape.
func (x *exchange) passFinalMessages(status int, h http.Header, body []byte) {
	if msg, native := toAnthropicError(body); !native {
		writeAnthropicError(x.w, status, msg)
		return
	}
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(status)
	x.w.Write(body)
}
