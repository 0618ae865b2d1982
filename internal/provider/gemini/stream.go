package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
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
	return chatwire.Streamed(resp, newChatStream(resp.Body, model, includeUsage, created))
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

	chatwire.Refill // translated bytes not yet read

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
func (s *chatStream) Read(p []byte) (int, error) { return s.Pull(p, s.step) }

// Close closes the upstream body.
func (s *chatStream) Close() error { return s.src.Close() }

// step translates the next upstream event into s.Out, or sets s.Err.
func (s *chatStream) step() {
	ev, err := s.rd.Next()
	switch {
	case err == io.EOF && s.started > 0 && s.finished == s.started:
		if s.includeUsage {
			s.writeUsage()
		}
		s.Out = append(s.Out, "data: [DONE]\n\n"...)
		s.Err = io.EOF
		return
	case errors.Is(err, io.EOF), errors.Is(err, sse.ErrIncomplete):
		s.Err = fmt.Errorf("gemini: stream ended before its finishReason: %w", io.ErrUnexpectedEOF)
		return
	case err != nil:
		s.Err = fmt.Errorf("gemini: stream: %w", err)
		return
	}
	s.ev = geminiResponse{}
	if err := json.Unmarshal(ev.Data, &s.ev); err != nil {
		s.Err = fmt.Errorf("gemini: stream: malformed event: %s", jsonProblem(err))
		return
	}
	if s.ev.Error != nil {
		s.writeError(s.ev.Error)
		s.Err = io.EOF
		return
	}
	if err := s.apply(); err != nil {
		s.Err = err
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
		s.Out = append(s.Out, `{"role":"assistant","content":""}`...)
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
		s.Out = append(s.Out, `{}`...)
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
	s.Out = append(s.Out, `{"content":`...)
	s.Out = appendString(s.Out, why)
	s.Out = append(s.Out, `,"refusal":`...)
	s.Out = appendString(s.Out, why)
	s.Out = append(s.Out, '}')
	s.endChunk("")
	st.finished = true
	s.finished++
	s.chunk(0)
	s.Out = append(s.Out, `{}`...)
	s.endChunk("content_filter")
}

func (s *chatStream) writeText(i int, key, text string) {
	if text == "" {
		return
	}
	s.chunk(i)
	s.Out = append(s.Out, key...)
	s.Out = appendString(s.Out, text)
	s.Out = append(s.Out, '}')
	s.endChunk("")
}

// writeCall writes a whole function call as one tool_calls delta: Gemini
// streams each call in one part.
func (s *chatStream) writeCall(i int, st *choiceState, p *answerPart) {
	n := st.tools
	st.tools++
	s.chunk(i)
	s.Out = append(s.Out, `{"tool_calls":[{"index":`...)
	s.Out = strconv.AppendInt(s.Out, int64(n), 10)
	s.Out = append(s.Out, `,"id":`...)
	s.Out = appendString(s.Out, callID(s.id, i, n))
	s.Out = append(s.Out, `,"type":"function","function":{"name":`...)
	s.Out = appendString(s.Out, p.FunctionCall.Name)
	s.Out = append(s.Out, `,"arguments":`...)
	s.Out = appendString(s.Out, arguments(p.FunctionCall.Args))
	s.Out = append(s.Out, '}')
	if p.ThoughtSignature != "" {
		s.Out = append(s.Out, `,"extra_content":{"google":{"thought_signature":`...)
		s.Out = appendString(s.Out, p.ThoughtSignature)
		s.Out = append(s.Out, `}}`...)
	}
	s.Out = append(s.Out, `}]}`...)
	s.endChunk("")
}

// chunk starts a chunk of choice i, up to its delta.
func (s *chatStream) chunk(i int) {
	s.Out = append(s.Out, s.prefix...)
	s.Out = append(s.Out, `{"index":`...)
	s.Out = strconv.AppendInt(s.Out, int64(i), 10)
	s.Out = append(s.Out, `,"delta":`...)
}

// endChunk ends a chunk after its delta.
func (s *chatStream) endChunk(finish string) {
	s.Out = append(s.Out, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		s.Out = append(s.Out, "null"...)
	} else {
		s.Out = appendString(s.Out, finish)
	}
	s.Out = append(s.Out, "}]}\n\n"...)
}

// writeUsage writes the usage chunk of stream_options.include_usage: no
// choices, the whole stream's usage.
func (s *chatStream) writeUsage() {
	if s.prefix == nil {
		s.begin("", s.model)
	}
	u := usage(&s.usage)
	s.Out = append(s.Out, s.prefix...)
	s.Out = append(s.Out, `],"usage":{"prompt_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.PromptTokens), 10)
	s.Out = append(s.Out, `,"completion_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.CompletionTokens), 10)
	s.Out = append(s.Out, `,"total_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.TotalTokens), 10)
	s.Out = append(s.Out, `,"prompt_tokens_details":{"cached_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.PromptTokensDetails.CachedTokens), 10)
	s.Out = append(s.Out, `},"completion_tokens_details":{"reasoning_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.CompletionTokensDetails.ReasoningTokens), 10)
	s.Out = append(s.Out, "}}}\n\n"...)
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
	s.Out = append(s.Out, `data: {"error":{"message":`...)
	s.Out = appendString(s.Out, clipText(msg))
	s.Out = append(s.Out, `,"type":`...)
	s.Out = appendString(s.Out, status)
	s.Out = append(s.Out, `,"param":null,"code":`...)
	s.Out = appendString(s.Out, status)
	s.Out = append(s.Out, "}}\n\n"...)
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
