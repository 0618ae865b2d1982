package geminiapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/internal/jsontext"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// NewStream reads an OpenAI chat.completion.chunk SSE stream and yields
// streamGenerateContent's answer: with sse, Server-Sent Events
// "data: {GenerateContentResponse}\r\n\r\n" per chunk; without, one JSON
// array whose elements are written as they come. model is each
// response's modelVersion (the chunks' own model when empty).
//
// Text and reasoning deltas are passed on as they arrive, as text and
// thought parts of candidates[i] (i the choice's index). Tool calls are
// held until their choice finishes, as Gemini sends a functionCall whole
// with complete args. The last response has the function calls, each
// candidate's finishReason and the usageMetadata: it is written at the
// usage chunk that follows the finish_reasons, at data: [DONE] (a
// candidate without a finish_reason then gets STOP), or when the stream
// ends cleanly after every candidate's finish_reason.
//
// An error in the chat stream (an {"error": …} chunk, an event named
// error, an unreadable chunk, tool call arguments that are not a JSON
// object) ends the answer with an error object as Google sends it
// mid-stream: {"error": {"code", "message", "status"}}, an event of its
// own or the array's last element. A chat stream that ends (or breaks)
// without [DONE] or a finish_reason ends without a finishReason, and the
// array stays open: Read returns an error wrapping io.ErrUnexpectedEOF
// (a cut answer is never made whole).
//
// It reads one upstream event per refill, starts no goroutine and is not
// safe for concurrent use.
func NewStream(chatSSE io.Reader, model string, sse bool) io.Reader {
	return &stream{rd: newReader(chatSSE), model: model, sse: sse}
}

func newReader(r io.Reader) *sse.Reader { return sse.NewReader(r, sse.Options{}) }

// maxCandidates bounds the choices a stream may carry.
const maxCandidates = 64

type stream struct {
	rd  *sse.Reader
	out []byte
	off int
	err error

	model, id string
	sse       bool
	elems     int  // responses written
	final     bool // the last response is written
	usage     *chatUsage
	cands     []candidate
	view      chunkView // the chunk being read
	opts      Options
}

// candidate is what a stream holds of one choice until it ends.
type candidate struct {
	index  int
	finish string // Gemini's finishReason, "" until the choice finishes
	calls  []heldCall
}

// heldCall is a tool call being streamed.
type heldCall struct {
	index    int
	id, name string
	args     []byte
}

// upstreamError is an error reported inside a chat stream.
type upstreamError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// Read yields translated bytes, pulling upstream events as needed.
func (s *stream) Read(p []byte) (int, error) {
	for s.off == len(s.out) {
		if s.err != nil {
			return 0, s.err
		}
		s.out, s.off = s.out[:0], 0
		s.step()
	}
	n := copy(p, s.out[s.off:])
	s.off += n
	return n, nil
}

// step reads one upstream event and writes what it says.
func (s *stream) step() {
	ev, err := s.rd.Next()
	switch {
	case err != nil:
		s.ended(err)
		return
	case sse.IsDone(ev):
		s.finishAll()
		s.end()
		return
	case s.final:
		return // after the last response only [DONE] matters
	}
	c := &s.view
	if !readChunk(ev.Data, c) {
		s.fail(500, "INTERNAL", "the upstream sent an unreadable stream event")
		return
	}
	if c.err != nil || ev.Name == "error" {
		var e *upstreamError
		if c.err != nil && json.Unmarshal(c.err, &e) != nil {
			e = nil
		}
		s.upstreamFailed(e)
		return
	}
	if s.id == "" && c.id != nil {
		s.id = clipN(decodeRaw(c.id), maxID)
	}
	if s.model == "" && c.model != nil {
		s.model = clipN(decodeRaw(c.model), maxID)
	}
	if start, elems := len(s.out), s.elems; !s.chunk(c) {
		s.out, s.elems = s.out[:start], elems
		s.fail(500, "INTERNAL", "the upstream sent an unreadable stream event")
		return
	}
	if c.usage != nil {
		var u chatUsage
		if json.Unmarshal(c.usage, &u) != nil {
			s.fail(500, "INTERNAL", "the upstream sent an unreadable usage")
			return
		}
		s.usage = &u
		if s.allFinished() {
			s.writeFinal()
		}
	}
}

// ended handles the end of the upstream stream, or a read error.
func (s *stream) ended(err error) {
	if len(s.cands) > 0 && s.allFinished() {
		if !s.final {
			s.writeFinal()
		}
		if s.err == nil {
			s.end()
		}
		return
	}
	if errors.Is(err, io.EOF) || errors.Is(err, sse.ErrIncomplete) {
		s.err = fmt.Errorf("geminiapi: the upstream stream ended before the answer was complete: %w", io.ErrUnexpectedEOF)
		return
	}
	s.err = fmt.Errorf("geminiapi: the upstream stream broke before the answer was complete: %w: %w", io.ErrUnexpectedEOF, err)
}

// chunk writes the deltas of c and holds its tool calls and finish; it
// reports false for a chunk it cannot read.
func (s *stream) chunk(c *chunkView) bool {
	n := 0 // candidates written
	for i := range c.choices {
		ch := &c.choices[i]
		cand := s.candidate(ch.index)
		if cand == nil {
			return false
		}
		if ch.calls != nil {
			calls, ok := toolCalls(ch.calls)
			if !ok {
				return false
			}
			for _, tc := range calls {
				cand.hold(tc)
			}
		}
		if ch.finish != nil && len(ch.finish) > 2 {
			cand.finish = finishReason(decodeFinish(ch.finish))
		}
		if s.opts.OmitThoughts {
			ch.reasoning = nil
		}
		if ch.reasoning == nil && ch.content == nil && ch.refusal == nil {
			continue
		}
		if n == 0 {
			s.open()
			s.out = append(s.out, `{"candidates":[`...)
		} else {
			s.out = append(s.out, ',')
		}
		n++
		s.out = append(s.out, `{"content":{"parts":[`...)
		if ch.reasoning != nil {
			s.out = append(appendRawString(append(s.out, `{"text":`...), ch.reasoning), `,"thought":true}`...)
			if ch.content != nil || ch.refusal != nil {
				s.out = append(s.out, ',')
			}
		}
		switch {
		case ch.content != nil && ch.refusal != nil:
			s.out = jsontext.AppendString(append(s.out, `{"text":`...), decodeRaw(ch.content)+decodeRaw(ch.refusal))
			s.out = append(s.out, '}')
		case ch.content != nil || ch.refusal != nil:
			s.out = append(appendRawString(append(s.out, `{"text":`...), orRaw(ch.content, ch.refusal)), '}')
		}
		s.out = append(s.out, `],"role":"model"},"index":`...)
		s.out = append(strconv.AppendInt(s.out, int64(ch.index), 10), '}')
	}
	if n > 0 {
		s.out = appendIdentity(append(s.out, ']'), s.model, s.id)
		s.close()
	}
	return true
}

// orRaw returns a unless it is nil, else b.
func orRaw(a, b []byte) []byte {
	if a != nil {
		return a
	}
	return b
}

// decodeFinish decodes a raw finish_reason into a string, without
// allocating for the names finishReason knows.
func decodeFinish(raw []byte) string {
	switch string(raw) {
	case `"stop"`:
		return "stop"
	case `"length"`:
		return "length"
	case `"tool_calls"`:
		return "tool_calls"
	case `"content_filter"`:
		return "content_filter"
	}
	return decodeRaw(raw)
}

// candidate returns the candidate of the choice index, adding it.
// It returns nil for a negative index, or one past maxCandidates.
func (s *stream) candidate(index int) *candidate {
	for i := range s.cands {
		if s.cands[i].index == index {
			return &s.cands[i]
		}
	}
	if len(s.cands) == maxCandidates || index < 0 {
		return nil
	}
	s.cands = append(s.cands, candidate{index: index})
	return &s.cands[len(s.cands)-1]
}

// hold adds the fragment tc to the candidate's tool calls: a fragment
// with an id, or of a new index, starts a call.
func (c *candidate) hold(tc chatToolCall) {
	n := len(c.calls)
	if n == 0 || tc.ID != "" && tc.ID != c.calls[n-1].id || tc.Index != c.calls[n-1].index {
		c.calls = append(c.calls, heldCall{index: tc.Index, id: tc.ID})
		n++
	}
	call := &c.calls[n-1]
	call.name += tc.Function.Name
	call.args = append(call.args, tc.Function.Arguments...)
}

// allFinished reports whether every candidate has its finish_reason.
func (s *stream) allFinished() bool {
	for i := range s.cands {
		if s.cands[i].finish == "" {
			return false
		}
	}
	return true
}

// finishAll writes the last response at [DONE] unless it is written: a
// candidate without a finish_reason then stops.
func (s *stream) finishAll() {
	if s.final {
		return
	}
	if len(s.cands) == 0 {
		s.cands = append(s.cands, candidate{})
	}
	for i := range s.cands {
		if s.cands[i].finish == "" {
			s.cands[i].finish = "STOP"
		}
	}
	s.writeFinal()
}

// writeFinal writes the last response: the held function calls, the
// finishReasons and the usage.
func (s *stream) writeFinal() {
	s.final = true
	start, elems := len(s.out), s.elems
	s.open()
	s.out = append(s.out, `{"candidates":[`...)
	for i := range s.cands {
		c := &s.cands[i]
		if i > 0 {
			s.out = append(s.out, ',')
		}
		s.out = append(s.out, `{"content":{"parts":[`...)
		n := 0
		for _, call := range c.calls {
			var err error
			if s.out, err = appendFunctionCall(s.out, &n, call.id, call.name, string(call.args)); err != nil {
				s.out, s.elems = s.out[:start], elems
				s.fail(500, "INTERNAL", "the upstream sent tool call arguments that are not a JSON object")
				return
			}
		}
		s.out = append(s.out, `],"role":"model"},"finishReason":"`...)
		s.out = append(s.out, c.finish...)
		s.out = append(strconv.AppendInt(append(s.out, `","index":`...), int64(c.index), 10), '}')
	}
	s.out = append(s.out, ']')
	if s.usage != nil {
		s.out = appendUsage(append(s.out, `,"usageMetadata":`...), s.usage)
	}
	s.out = appendIdentity(s.out, s.model, s.id)
	s.close()
}

// open starts a response: the event's data field, or the array's
// separator (its opening bracket before the first).
func (s *stream) open() {
	switch {
	case s.sse:
		s.out = append(s.out, "data: "...)
	case s.elems == 0:
		s.out = append(s.out, '[')
	default:
		s.out = append(s.out, ",\r\n"...)
	}
	s.elems++
}

// close ends a response.
func (s *stream) close() {
	if s.sse {
		s.out = append(s.out, "\r\n\r\n"...)
	}
}

// end ends the answer: the array's closing bracket, then io.EOF.
func (s *stream) end() {
	if s.err != nil {
		return // ended already, by an error object
	}
	if !s.sse {
		if s.elems == 0 {
			s.out = append(s.out, '[')
		}
		s.out = append(s.out, ']')
	}
	s.err = io.EOF
}

// fail ends the answer with an error object.
func (s *stream) fail(code int, status, message string) {
	s.open()
	s.out = AppendError(s.out, code, status, message)
	s.close()
	s.final = true
	s.end()
}

// upstreamFailed ends the answer with the error the upstream reported,
// named as Google names it.
func (s *stream) upstreamFailed(e *upstreamError) {
	code, msg := 500, "the upstream reported an error in the stream"
	if e != nil {
		code = errorCode(e.Type, e.Code)
		if e.Message != "" {
			msg = clipMessage(e.Message)
		}
	}
	s.fail(code, StatusFor(code), msg)
}

// maxID is the most bytes of an upstream's id or model name repeated in
// every response: a stream's size stays proportional to its upstream's.
const maxID = 128

// clipN cuts s to at most n bytes at a rune boundary.
func clipN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// maxMessage is the most bytes of an upstream's error message passed on.
const maxMessage = 1024

// clipMessage clips an upstream's error message to maxMessage bytes.
func clipMessage(m string) string {
	if len(m) <= maxMessage {
		return m
	}
	return clipN(m, maxMessage) + "…"
}

// errorCode reads the HTTP status an OpenAI-style stream error stands
// for from its type and code.
func errorCode(typ string, code json.RawMessage) int {
	var c string
	if json.Unmarshal(code, &c) != nil {
		c = string(code)
	}
	for _, v := range [...]string{c, typ} {
		switch v {
		case "rate_limit_exceeded", "rate_limit_error", "429", "tokens", "requests", "RESOURCE_EXHAUSTED":
			return 429
		case "overloaded_error", "overloaded", "engine_overloaded", "server_overloaded", "529", "503", "UNAVAILABLE":
			return 503
		case "invalid_request_error", "400", "INVALID_ARGUMENT", "context_length_exceeded":
			return 400
		case "authentication_error", "invalid_api_key", "401", "UNAUTHENTICATED":
			return 401
		case "permission_error", "permission_denied", "403", "PERMISSION_DENIED":
			return 403
		case "timeout", "504", "DEADLINE_EXCEEDED":
			return 504
		}
	}
	return 500
}
