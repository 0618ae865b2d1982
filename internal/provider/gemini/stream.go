package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/sse"
)

// ChatStream replaces a successful (2xx) Gemini stream's body (SSE, as
// streamGenerateContent?alt=sse sends it) with the OpenAI
// chat.completion.chunk stream that says the same, ending in data: [DONE].
// model names the chunks when Gemini's do not; includeUsage adds the final
// usage chunk; created is the chunks' "created" time. An error object in
// the stream becomes an OpenAI error event and the stream ends without
// [DONE]; a stream cut before every candidate's finishReason gives a read
// error wrapping io.ErrUnexpectedEOF.
func ChatStream(resp *http.Response, model string, includeUsage bool, created int64) *http.Response {
	resp.Body = newChatStream(resp.Body, model, includeUsage, created)
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Encoding")
	resp.Header.Set("Content-Type", "text/event-stream")
	return resp
}

// choiceState is what the stream has said of one candidate.
type choiceState struct {
	started  bool // its role chunk is written
	finished bool // its finish_reason is written
	tools    int  // tool calls so far
}

// chatStream reads a Gemini event stream and yields the OpenAI
// chat.completion.chunk stream that says the same: per candidate a role
// chunk, content, reasoning_content and tool_calls deltas and a finish
// chunk; a usage chunk when asked; then data: [DONE].
//
// It translates one upstream event per refill of its output buffer, so
// memory is bounded by the sse.Reader's event limit and a small multiple
// of it for the output. It starts no goroutine. It is not safe for
// concurrent use.
type chatStream struct {
	src          io.ReadCloser
	rd           *sse.Reader
	model        string
	includeUsage bool
	created      int64

	out []byte // translated bytes not yet read, from off
	off int
	err error // returned once out is drained

	ev       geminiResponse
	prefix   []byte // every chunk's start, through "choices":[
	id       string // the first event's responseId, for tool call IDs
	choices  [MaxCandidates]choiceState
	started  int // candidates started
	finished int // candidates finished
	usage    usageMetadata
}

func newChatStream(src io.ReadCloser, model string, includeUsage bool, created int64) *chatStream {
	return &chatStream{
		src: src, rd: sse.NewReader(src, sse.Options{}), model: model,
		includeUsage: includeUsage, created: created,
	}
}

// Read yields translated bytes, pulling upstream events as needed.
func (s *chatStream) Read(p []byte) (int, error) {
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

// Close closes the upstream body.
func (s *chatStream) Close() error { return s.src.Close() }

// step translates the next upstream event into s.out, or sets s.err.
func (s *chatStream) step() {
	ev, err := s.rd.Next()
	switch {
	case err == io.EOF && s.started > 0 && s.finished == s.started:
		if s.includeUsage {
			s.writeUsage()
		}
		s.out = append(s.out, "data: [DONE]\n\n"...)
		s.err = io.EOF
		return
	case errors.Is(err, io.EOF), errors.Is(err, sse.ErrIncomplete):
		s.err = fmt.Errorf("gemini: stream ended before its finishReason: %w", io.ErrUnexpectedEOF)
		return
	case err != nil:
		s.err = fmt.Errorf("gemini: stream: %w", err)
		return
	}
	s.ev = geminiResponse{}
	if err := json.Unmarshal(ev.Data, &s.ev); err != nil {
		s.err = fmt.Errorf("gemini: stream: malformed event: %s", jsonProblem(err))
		return
	}
	if s.ev.Error != nil {
		s.writeError(s.ev.Error)
		s.err = io.EOF
		return
	}
	if err := s.apply(); err != nil {
		s.err = err
	}
}

// apply translates one decoded event.
func (s *chatStream) apply() error {
	e := &s.ev
	if s.prefix == nil {
		s.begin(e.ResponseID, answerModel(e.ModelVersion, s.model))
	}
	if u := e.UsageMetadata; u != nil {
		s.usage = *u // Gemini's counts are cumulative
	}
	if len(e.Candidates) == 0 && e.PromptFeedback != nil && e.PromptFeedback.BlockReason != "" {
		s.blocked(e.PromptFeedback)
		return nil
	}
	for i := range e.Candidates {
		c := &e.Candidates[i]
		if c.Index < 0 || c.Index >= MaxCandidates {
			return errors.New("gemini: stream: candidate index " + strconv.Itoa(c.Index) + " is out of range")
		}
		s.candidate(c)
	}
	return nil
}

// begin builds the chunk prefix from the stream's first event.
func (s *chatStream) begin(id, model string) {
	s.id = clip(id)
	b := make([]byte, 0, 96+len(id)+len(model))
	b = append(b, `data: {"id":`...)
	b = appendString(b, completionID(id))
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, model)
	b = append(b, `,"choices":[`...)
	s.prefix = b
}

// open writes a candidate's role chunk once.
func (s *chatStream) open(i int) *choiceState {
	st := &s.choices[i]
	if !st.started {
		st.started = true
		s.started++
		s.chunk(i)
		s.out = append(s.out, `{"role":"assistant","content":""}`...)
		s.endChunk("")
	}
	return st
}

func (s *chatStream) candidate(c *candidate) {
	st := s.open(c.Index)
	for j := range c.Content.Parts {
		p := &c.Content.Parts[j]
		switch {
		case p.FunctionCall != nil:
			s.writeCall(c.Index, st, p)
		case p.Thought:
			s.writeText(c.Index, `{"reasoning_content":`, p.Text)
		default:
			s.writeText(c.Index, `{"content":`, p.Text)
		}
	}
	if c.FinishReason != "" && !st.finished {
		st.finished = true
		s.finished++
		s.chunk(c.Index)
		s.out = append(s.out, `{}`...)
		s.endChunk(finishReason(c.FinishReason, st.tools > 0))
	}
}

// blocked answers a prompt Gemini refused: a refusal that says why,
// finish_reason content_filter.
func (s *chatStream) blocked(f *promptFeedback) {
	st := s.open(0)
	if st.finished {
		return
	}
	why := blockedMessage(f)
	s.chunk(0)
	s.out = append(s.out, `{"content":`...)
	s.out = appendString(s.out, why)
	s.out = append(s.out, `,"refusal":`...)
	s.out = appendString(s.out, why)
	s.out = append(s.out, '}')
	s.endChunk("")
	st.finished = true
	s.finished++
	s.chunk(0)
	s.out = append(s.out, `{}`...)
	s.endChunk("content_filter")
}

func (s *chatStream) writeText(i int, key, text string) {
	if text == "" {
		return
	}
	s.chunk(i)
	s.out = append(s.out, key...)
	s.out = appendString(s.out, text)
	s.out = append(s.out, '}')
	s.endChunk("")
}

// writeCall writes a whole function call as one tool_calls delta: Gemini
// streams each call in one part.
func (s *chatStream) writeCall(i int, st *choiceState, p *answerPart) {
	n := st.tools
	st.tools++
	s.chunk(i)
	s.out = append(s.out, `{"tool_calls":[{"index":`...)
	s.out = strconv.AppendInt(s.out, int64(n), 10)
	s.out = append(s.out, `,"id":`...)
	s.out = appendString(s.out, callID(s.id, i, n))
	s.out = append(s.out, `,"type":"function","function":{"name":`...)
	s.out = appendString(s.out, p.FunctionCall.Name)
	s.out = append(s.out, `,"arguments":`...)
	s.out = appendString(s.out, arguments(p.FunctionCall.Args))
	s.out = append(s.out, '}')
	if p.ThoughtSignature != "" {
		s.out = append(s.out, `,"extra_content":{"google":{"thought_signature":`...)
		s.out = appendString(s.out, p.ThoughtSignature)
		s.out = append(s.out, `}}`...)
	}
	s.out = append(s.out, `}]}`...)
	s.endChunk("")
}

// chunk starts a chunk of choice i, up to its delta.
func (s *chatStream) chunk(i int) {
	s.out = append(s.out, s.prefix...)
	s.out = append(s.out, `{"index":`...)
	s.out = strconv.AppendInt(s.out, int64(i), 10)
	s.out = append(s.out, `,"delta":`...)
}

// endChunk ends a chunk after its delta.
func (s *chatStream) endChunk(finish string) {
	s.out = append(s.out, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		s.out = append(s.out, "null"...)
	} else {
		s.out = appendString(s.out, finish)
	}
	s.out = append(s.out, "}]}\n\n"...)
}

// writeUsage writes the usage chunk of stream_options.include_usage: no
// choices, the whole stream's usage.
func (s *chatStream) writeUsage() {
	if s.prefix == nil {
		s.begin("", s.model)
	}
	u := usage(&s.usage)
	s.out = append(s.out, s.prefix...)
	s.out = append(s.out, `],"usage":{"prompt_tokens":`...)
	s.out = strconv.AppendInt(s.out, int64(u.PromptTokens), 10)
	s.out = append(s.out, `,"completion_tokens":`...)
	s.out = strconv.AppendInt(s.out, int64(u.CompletionTokens), 10)
	s.out = append(s.out, `,"total_tokens":`...)
	s.out = strconv.AppendInt(s.out, int64(u.TotalTokens), 10)
	s.out = append(s.out, `,"prompt_tokens_details":{"cached_tokens":`...)
	s.out = strconv.AppendInt(s.out, int64(u.PromptTokensDetails.CachedTokens), 10)
	s.out = append(s.out, `},"completion_tokens_details":{"reasoning_tokens":`...)
	s.out = strconv.AppendInt(s.out, int64(u.CompletionTokensDetails.ReasoningTokens), 10)
	s.out = append(s.out, "}}}\n\n"...)
}

// writeError writes Google's error object as an OpenAI error event whose
// type and code are Google's status (RESOURCE_EXHAUSTED, UNAVAILABLE, …),
// so that aierr classifies it as it would the error answer.
func (s *chatStream) writeError(e *googleError) {
	status := e.Status
	if status == "" {
		status = statusName(e.Code)
	}
	status = clip(status)
	msg := e.Message
	if msg == "" {
		msg = "Gemini reported an error in the stream"
	}
	s.out = append(s.out, `data: {"error":{"message":`...)
	s.out = appendString(s.out, clipText(msg))
	s.out = append(s.out, `,"type":`...)
	s.out = appendString(s.out, status)
	s.out = append(s.out, `,"param":null,"code":`...)
	s.out = appendString(s.out, status)
	s.out = append(s.out, "}}\n\n"...)
}

// statusName is Google's status name for an HTTP status.
func statusName(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}
