package bedrock

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
)

// converseStreamResponse replaces a successful ConverseStream answer's
// body (an AWS event stream) with OpenAI's chat.completion.chunk SSE.
func converseStreamResponse(resp *http.Response, model string, includeUsage bool, created int64) *http.Response {
	s := &converseSSE{src: resp.Body, frames: newFrames(resp.Body), includeUsage: includeUsage, tools: map[int]int{}}
	s.setPrefix(completionID(resp.Header), model, created)
	return chatwire.Streamed(resp, s)
}

// converseSSE translates ConverseStream events into chunks, one frame per
// refill: messageStart → the role chunk; contentBlockStart of a toolUse →
// a tool_calls delta with its id and name; contentBlockDelta → content,
// tool_calls arguments or reasoning_content deltas; messageStop → the
// finish chunk; metadata → the usage chunk when asked, then data: [DONE].
// An exception ends it with an error chunk and no [DONE]; a stream that
// ends before both messageStop and metadata gives a read error wrapping
// io.ErrUnexpectedEOF. It starts no goroutine and is not safe for
// concurrent use.
type converseSSE struct {
	src          io.ReadCloser
	frames       *frames
	includeUsage bool

	chatwire.Refill // translated bytes not yet read

	prefix   []byte      // every chunk's start, through "choices":[
	started  bool        // the role chunk was written
	stopped  bool        // messageStop was seen
	tools    map[int]int // contentBlockIndex → tool_calls index
	ev       streamEvent
	usage    converseUsage
	hasUsage bool
}

// maxTools bounds the tool calls of one stream that are translated.
const maxTools = 1024

// streamEvent is the union of the ConverseStream events' payloads.
type streamEvent struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
	Start             struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta struct {
		Text    *string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
		ReasoningContent *struct {
			Text string `json:"text"`
		} `json:"reasoningContent"`
	} `json:"delta"`
	StopReason string         `json:"stopReason"`
	Usage      *converseUsage `json:"usage"`
}

// Read yields translated bytes, decoding frames as needed.
func (s *converseSSE) Read(p []byte) (int, error) { return s.Pull(p, s.step) }

// Close closes the upstream body.
func (s *converseSSE) Close() error { return s.src.Close() }

func (s *converseSSE) setPrefix(id, model string, created int64) {
	b := make([]byte, 0, 96+len(id)+len(model))
	b = append(b, `data: {"id":`...)
	b = jsontext.AppendString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = jsontext.AppendString(b, clip(model))
	s.prefix = append(b, `,"choices":[`...)
}

func (s *converseSSE) step() {
	ev, err := s.frames.read()
	switch {
	case err == io.EOF:
		s.Err = fmt.Errorf("bedrock: stream ended before messageStop and metadata: %w", io.ErrUnexpectedEOF)
		return
	case err != nil:
		s.Err = err
		return
	case ev.exception != "":
		s.writeError(errorType(ev.exception), exceptionMessage(&ev))
		s.Err = io.EOF
		return
	}
	s.ev = streamEvent{}
	switch ev.kind {
	case "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata":
		if err := json.Unmarshal(ev.payload, &s.ev); err != nil {
			s.Err = fmt.Errorf("bedrock: stream: malformed %s event: %w", ev.kind, io.ErrUnexpectedEOF)
			return
		}
	default:
		return // an event type added later carries nothing we know
	}
	s.apply(ev.kind)
}

// apply translates one decoded event.
func (s *converseSSE) apply(kind string) {
	e := &s.ev
	s.start()
	switch kind {
	case "contentBlockStart":
		if tu := e.Start.ToolUse; tu != nil && len(s.tools) < maxTools {
			n := len(s.tools)
			s.tools[e.ContentBlockIndex] = n
			s.chunk()
			s.Out = append(s.Out, `{"tool_calls":[{"index":`...)
			s.Out = strconv.AppendInt(s.Out, int64(n), 10)
			s.Out = append(s.Out, `,"id":`...)
			s.Out = jsontext.AppendString(s.Out, tu.ToolUseID)
			s.Out = append(s.Out, `,"type":"function","function":{"name":`...)
			s.Out = jsontext.AppendString(s.Out, tu.Name)
			s.Out = append(s.Out, `,"arguments":""}}]}`...)
			s.endChunk("")
		}
	case "contentBlockDelta":
		s.delta()
	case "messageStop":
		if !s.stopped {
			s.stopped = true
			s.chunk()
			s.Out = append(s.Out, `{}`...)
			s.endChunk(finishReason(e.StopReason))
		}
	case "metadata":
		if e.Usage != nil {
			s.usage, s.hasUsage = *e.Usage, true
		}
	}
	if s.stopped && s.hasUsage {
		if s.includeUsage {
			s.writeUsage()
		}
		s.Out = append(s.Out, "data: [DONE]\n\n"...)
		s.Err = io.EOF
	}
}

// delta writes a contentBlockDelta's text, tool input or reasoning.
func (s *converseSSE) delta() {
	d := &s.ev.Delta
	switch {
	case d.Text != nil && *d.Text != "":
		s.chunk()
		s.Out = append(s.Out, `{"content":`...)
		s.Out = jsontext.AppendString(s.Out, *d.Text)
		s.Out = append(s.Out, '}')
		s.endChunk("")
	case d.ToolUse != nil && d.ToolUse.Input != "":
		n, ok := s.tools[s.ev.ContentBlockIndex]
		if !ok {
			return
		}
		s.chunk()
		s.Out = append(s.Out, `{"tool_calls":[{"index":`...)
		s.Out = strconv.AppendInt(s.Out, int64(n), 10)
		s.Out = append(s.Out, `,"function":{"arguments":`...)
		s.Out = jsontext.AppendString(s.Out, d.ToolUse.Input)
		s.Out = append(s.Out, `}}]}`...)
		s.endChunk("")
	case d.ReasoningContent != nil && d.ReasoningContent.Text != "":
		s.chunk()
		s.Out = append(s.Out, `{"reasoning_content":`...)
		s.Out = jsontext.AppendString(s.Out, d.ReasoningContent.Text)
		s.Out = append(s.Out, '}')
		s.endChunk("")
	}
	// Reasoning signatures and redacted reasoning have no OpenAI form.
}

// start writes the role chunk once.
func (s *converseSSE) start() {
	if s.started {
		return
	}
	s.started = true
	s.chunk()
	s.Out = append(s.Out, `{"role":"assistant","content":""}`...)
	s.endChunk("")
}

// chunk starts a chunk, up to its delta.
func (s *converseSSE) chunk() {
	s.Out = append(s.Out, s.prefix...)
	s.Out = append(s.Out, `{"index":0,"delta":`...)
}

// endChunk ends a chunk after its delta.
func (s *converseSSE) endChunk(finish string) {
	s.Out = append(s.Out, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		s.Out = append(s.Out, "null"...)
	} else {
		s.Out = jsontext.AppendString(s.Out, finish)
	}
	s.Out = append(s.Out, "}]}\n\n"...)
}

// writeUsage writes the usage chunk: no choices, the stream's usage.
func (s *converseSSE) writeUsage() {
	u := usage(s.usage)
	s.Out = append(s.Out, s.prefix...)
	s.Out = append(s.Out, `],"usage":{"prompt_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.PromptTokens), 10)
	s.Out = append(s.Out, `,"completion_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.CompletionTokens), 10)
	s.Out = append(s.Out, `,"total_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.TotalTokens), 10)
	s.Out = append(s.Out, `,"prompt_tokens_details":{"cached_tokens":`...)
	s.Out = strconv.AppendInt(s.Out, int64(u.PromptTokensDetails.CachedTokens), 10)
	s.Out = append(s.Out, "}}}\n\n"...)
}

// writeError writes an error chunk in OpenAI's shape, with the type aierr
// reads as Bedrock meant the exception.
func (s *converseSSE) writeError(typ, msg string) {
	s.Out = append(s.Out, `data: {"error":{"message":`...)
	s.Out = jsontext.AppendString(s.Out, msg)
	s.Out = append(s.Out, `,"type":`...)
	s.Out = jsontext.AppendString(s.Out, typ)
	s.Out = append(s.Out, `,"param":null,"code":`...)
	s.Out = jsontext.AppendString(s.Out, typ)
	s.Out = append(s.Out, "}}\n\n"...)
}
