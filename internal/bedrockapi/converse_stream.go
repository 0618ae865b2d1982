package bedrockapi

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/jsontext"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// chatChunk is the part of a chat.completion.chunk event a ConverseStream
// answer carries, or an error event.
type chatChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			Refusal          string `json:"refusal"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// The kinds of content block a ConverseStream answer has open.
const (
	noBlock = iota
	textBlock
	reasoningBlock
	toolBlock
)

// Why a stream ends with an exception rather than its metadata.
const (
	msgCut     = "The model stream ended before the answer was complete."
	msgGarbage = "The model stream sent an event that is not a chat completion chunk."
)

// converseStream translates a chat.completion.chunk stream into
// ConverseStream's event stream, an event at a time.
type converseStream struct {
	in    *sse.Reader
	clk   clock.Clock
	start time.Time
	out   frames
	done  bool

	started bool   // messageStart was sent
	open    int    // the kind of the open block
	index   int    // the open block's contentBlockIndex, or the next one's
	call    int    // the chat index of the open tool call
	calls   bool   // the answer has tool calls
	stop    string // stopReason once the finish chunk came
	usage   *chatUsage
	payload []byte // scratch for event payloads
	chunk   chatChunk
}

// NewConverseStream reads an OpenAI chat.completion.chunk SSE stream and
// yields the ConverseStream answer as AWS event-stream frames, encoded
// with the SDK's eventstream Encoder: messageStart, then per content block
// (text, reasoning, each tool call) a contentBlockStart for a tool use,
// contentBlockDelta events (text, toolUse input, reasoningContent text)
// and a contentBlockStop, then messageStop with the stopReason and
// metadata with usage and metrics.latencyMs (measured on real time; see
// NewConverseStreamClock). The answer ends at data: [DONE], or at the end
// of a stream that sent its finish chunk. An error event in the chat stream becomes an
// exception frame that ends the stream (see exceptionFor for the
// mapping), as does a stream that ends before its finish chunk, breaks,
// or sends an event that is not a chunk (modelStreamErrorException).
// Memory is bounded by the largest chat event.
func NewConverseStream(chatSSE io.Reader) io.Reader {
	return NewConverseStreamClock(chatSSE, nil)
}

// NewConverseStreamClock is NewConverseStream with latency measured on
// clk (nil: real time), from this call to the end of the chat stream.
func NewConverseStreamClock(chatSSE io.Reader, clk clock.Clock) io.Reader {
	clk = clock.Or(clk)
	return &converseStream{in: sse.NewReader(chatSSE, sse.Options{}), clk: clk, start: clk.Now()}
}

// Read yields the next frames.
func (s *converseStream) Read(p []byte) (int, error) {
	for s.out.buf.Len() == 0 {
		if s.done {
			return 0, io.EOF
		}
		s.step()
	}
	return s.out.buf.Read(p)
}

// step reads one chat event and writes what it says.
func (s *converseStream) step() {
	ev, err := s.in.Next()
	switch {
	case err != nil:
		s.end()
		return
	case bytes.Equal(ev.Data, []byte("[DONE]")):
		s.finish("stop")
		s.end()
		return
	case len(bytes.TrimSpace(ev.Data)) == 0:
		return
	}
	s.chunk = chatChunk{}
	if json.Unmarshal(ev.Data, &s.chunk) != nil {
		s.fail(ExceptionModelStreamError, msgGarbage)
		return
	}
	if e := s.chunk.Error; e != nil {
		code, _ := e.Code.(string)
		s.fail(exceptionFor(e.Type, code), e.Message)
		return
	}
	if s.chunk.Usage != nil {
		s.usage = s.chunk.Usage
	}
	for i := range s.chunk.Choices {
		if c := &s.chunk.Choices[i]; c.Index == 0 && s.stop == "" {
			s.delta(i)
		}
	}
}

// delta writes the content of choice i of the chunk.
func (s *converseStream) delta(i int) {
	c := &s.chunk.Choices[i]
	s.begin()
	if t := c.Delta.ReasoningContent; t != "" {
		s.block(reasoningBlock)
		s.emitDelta(`{"reasoningContent":{"text":`, t, "}}")
	}
	if t := c.Delta.Content + c.Delta.Refusal; t != "" {
		s.block(textBlock)
		s.emitDelta(`{"text":`, t, "}")
	}
	for _, tc := range c.Delta.ToolCalls {
		if s.open != toolBlock || tc.Index != s.call || tc.ID != "" {
			s.block(noBlock)
			s.open, s.call, s.calls = toolBlock, tc.Index, true
			b := s.head()
			b = append(b, `,"start":{"toolUse":{"toolUseId":`...)
			b = jsontext.AppendString(b, toolUseID(tc.ID))
			b = append(b, `,"name":`...)
			b = jsontext.AppendString(b, tc.Function.Name)
			s.emit("contentBlockStart", append(b, "}}}"...))
		}
		if tc.Function.Arguments != "" {
			s.emitDelta(`{"toolUse":{"input":`, tc.Function.Arguments, "}}")
		}
	}
	if c.FinishReason != "" {
		s.finish(c.FinishReason)
	}
}

// begin sends messageStart once.
func (s *converseStream) begin() {
	if !s.started {
		s.started = true
		s.emit("messageStart", append(s.payload[:0], `{"role":"assistant"}`...))
	}
}

// block makes a block of the kind open, closing another one first;
// noBlock closes the open block.
func (s *converseStream) block(kind int) {
	if s.open == kind {
		return
	}
	if s.open != noBlock {
		s.emit("contentBlockStop", append(s.head(), '}'))
		s.index++
	}
	s.open = kind
}

// head starts a payload with the open block's index.
func (s *converseStream) head() []byte {
	b := append(s.payload[:0], `{"contentBlockIndex":`...)
	return strconv.AppendInt(b, int64(s.index), 10)
}

// emitDelta sends a contentBlockDelta whose delta is open, text as a
// JSON string, then closing (the braces open opened).
func (s *converseStream) emitDelta(open, text, closing string) {
	b := append(s.head(), `,"delta":`...)
	b = append(b, open...)
	b = jsontext.AppendString(b, text)
	b = append(b, closing...)
	s.emit("contentBlockDelta", append(b, '}'))
}

// finish closes the answer with its stop reason, once.
func (s *converseStream) finish(reason string) {
	if s.stop != "" {
		return
	}
	s.begin()
	s.block(noBlock)
	s.stop = stopReason(reason, s.calls)
	b := append(s.payload[:0], `{"stopReason":`...)
	s.emit("messageStop", append(jsontext.AppendString(b, s.stop), '}'))
}

// end ends the stream: with the metadata when the answer finished, with
// an exception when it was cut.
func (s *converseStream) end() {
	if s.stop == "" {
		s.fail(ExceptionModelStreamError, msgCut)
		return
	}
	u := s.usage.usage()
	b := append(s.payload[:0], `{"usage":{"inputTokens":`...)
	b = strconv.AppendInt(b, u.InputTokens, 10)
	b = append(b, `,"outputTokens":`...)
	b = strconv.AppendInt(b, u.OutputTokens, 10)
	b = append(b, `,"totalTokens":`...)
	b = strconv.AppendInt(b, u.TotalTokens, 10)
	if u.CacheReadInputTokens > 0 {
		b = append(b, `,"cacheReadInputTokens":`...)
		b = strconv.AppendInt(b, u.CacheReadInputTokens, 10)
	}
	b = append(b, `},"metrics":{"latencyMs":`...)
	b = strconv.AppendInt(b, s.clk.Now().Sub(s.start).Milliseconds(), 10)
	s.emit("metadata", append(b, "}}"...))
	s.done = true
}

// fail ends the stream with an exception frame.
func (s *converseStream) fail(typ, message string) {
	if message == "" {
		message = "The model stream failed."
	}
	s.out.exception(typ, message)
	s.done = true
}

func (s *converseStream) emit(typ string, payload []byte) {
	s.payload = payload
	s.out.event(typ, payload)
}
