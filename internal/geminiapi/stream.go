package geminiapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

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
}

// candidate is what a stream holds of one choice until it ends.
type candidate struct {
	index  int
	finish string
	calls  []heldCall
}

// heldCall is a tool call being streamed.
type heldCall struct {
	index    int
	id, name string
	args     []byte
}

// chatChunk is an OpenAI stream chunk, as far as it is read.
type chatChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string         `json:"content"`
			Refusal          string         `json:"refusal"`
			ReasoningContent string         `json:"reasoning_content"`
			Reasoning        string         `json:"reasoning"`
			ToolCalls        []chatToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage     `json:"usage"`
	Error *upstreamError `json:"error"`
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
	var c chatChunk
	if json.Unmarshal(ev.Data, &c) != nil {
		s.fail(500, "INTERNAL", "the upstream sent an unreadable stream event")
		return
	}
	if c.Error != nil || ev.Name == "error" {
		s.upstreamFailed(c.Error)
		return
	}
	if s.id == "" {
		s.id = clipN(c.ID, maxID)
	}
	if s.model == "" {
		s.model = clipN(c.Model, maxID)
	}
	if start, elems := len(s.out), s.elems; s.chunk(&c) != nil {
		s.out, s.elems = s.out[:start], elems
		s.fail(500, "INTERNAL", "the upstream stream has more choices than a stream may carry")
		return
	}
	if c.Usage != nil {
		s.usage = c.Usage
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

// chunk writes the deltas of c and holds its tool calls and finish.
func (s *stream) chunk(c *chatChunk) error {
	n := 0 // candidates written
	for i := range c.Choices {
		ch := &c.Choices[i]
		cand, err := s.candidate(ch.Index)
		if err != nil {
			return err
		}
		for _, tc := range ch.Delta.ToolCalls {
			cand.hold(tc)
		}
		if ch.FinishReason != "" {
			cand.finish = ch.FinishReason
		}
		d := &ch.Delta
		r, text := reasoning(d.ReasoningContent, d.Reasoning), d.Content+d.Refusal
		if r == "" && text == "" {
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
		parts := 0
		if r != "" {
			s.out = appendAnswerText(s.out, &parts, r, true)
		}
		if text != "" {
			s.out = appendAnswerText(s.out, &parts, text, false)
		}
		s.out = append(s.out, `],"role":"model"},"index":`...)
		s.out = append(strconv.AppendInt(s.out, int64(ch.Index), 10), '}')
	}
	if n > 0 {
		s.out = appendIdentity(append(s.out, ']'), s.model, s.id)
		s.close()
	}
	return nil
}

// candidate returns the candidate of the choice index, adding it.
func (s *stream) candidate(index int) (*candidate, error) {
	for i := range s.cands {
		if s.cands[i].index == index {
			return &s.cands[i], nil
		}
	}
	if len(s.cands) == maxCandidates || index < 0 {
		return nil, errors.New("the upstream stream has too many choices")
	}
	s.cands = append(s.cands, candidate{index: index})
	return &s.cands[len(s.cands)-1], nil
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
			s.cands[i].finish = "stop"
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
		s.out = append(s.out, finishReason(c.finish)...)
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
