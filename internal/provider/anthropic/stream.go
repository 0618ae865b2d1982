package anthropic

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

// maxIDLen bounds the message ID and model name repeated in every chunk,
// so that one large message_start cannot multiply the output.
const maxIDLen = 128

// streamResponse replaces a successful Anthropic stream's body with its
// OpenAI translation.
func streamResponse(resp *http.Response, includeUsage bool, created int64) *http.Response {
	return chatwire.Streamed(resp, newChatStream(resp.Body, includeUsage, created))
}

// Kinds of the content block being streamed.
const (
	blockNone = iota
	blockText
	blockTool
	blockThinking
	blockOther
)

// chatStream reads an Anthropic Messages event stream and yields the
// OpenAI chat.completion.chunk stream that says the same: a role chunk,
// content and tool_calls deltas, a finish chunk, a usage chunk when asked,
// then data: [DONE]. An error event becomes an OpenAI error event and ends
// the stream without [DONE]; a stream that ends before message_stop gives
// a read error wrapping io.ErrUnexpectedEOF, so it is never mistaken for a
// whole answer.
//
// It translates one upstream event per refill of its output buffer, so
// memory is bounded by the sse.Reader's event limit and a small multiple
// of it for the output. It starts no goroutine. It is not safe for
// concurrent use.
type chatStream struct {
	src          io.ReadCloser
	rd           *sse.Reader
	includeUsage bool
	created      int64

	chatwire.Refill // translated bytes not yet read

	ev       streamEvent
	prefix   []byte // every chunk's start, through "choices":[
	started  bool   // the role chunk has been written
	finished bool   // a finish_reason has been written
	block    int    // the kind of the open content block
	blockAt  int    // its index
	tool     int    // its tool_calls index, when a tool_use block
	tools    int    // tool_use blocks so far
	usage    anthropicUsage
}

func newChatStream(src io.ReadCloser, includeUsage bool, created int64) *chatStream {
	return &chatStream{
		src: src, rd: sse.NewReader(src, sse.Options{}),
		includeUsage: includeUsage, created: created,
	}
}

// Read yields translated bytes, pulling upstream events as needed.
func (s *chatStream) Read(p []byte) (int, error) { return s.Pull(p, s.step) }

// Close closes the upstream body.
func (s *chatStream) Close() error { return s.src.Close() }

// streamEvent is the union of the Anthropic stream events' data.
type streamEvent struct {
	Type    string `json:"type"`
	Message struct {
		ID    string         `json:"id"`
		Model string         `json:"model"`
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Index        int            `json:"index"`
	ContentBlock anthropicBlock `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// step translates the next upstream event into s.Out, or sets s.Err.
func (s *chatStream) step() {
	ev, err := s.rd.Next()
	if err != nil {
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, sse.ErrIncomplete):
			s.Err = fmt.Errorf("anthropic: stream ended before message_stop: %w", io.ErrUnexpectedEOF)
		default:
			s.Err = fmt.Errorf("anthropic: stream: %w", err)
		}
		return
	}
	s.ev = streamEvent{}
	decodeErr := json.Unmarshal(ev.Data, &s.ev)
	kind := ev.Name
	if kind == "" {
		kind = s.ev.Type
	}
	if kind == "error" {
		s.writeError()
		s.Err = io.EOF
		return
	}
	if decodeErr != nil {
		switch kind {
		case "message_start", "content_block_start", "content_block_delta", "message_delta":
			s.Err = fmt.Errorf("anthropic: stream: malformed %s event: %w", kind, decodeErr)
			return
		}
	}
	s.apply(kind)
}

// apply translates one decoded event of the given kind.
func (s *chatStream) apply(kind string) {
	e := &s.ev
	switch kind {
	case "message_start":
		if !s.started {
			s.usage = e.Message.Usage
			s.start(e.Message.ID, e.Message.Model)
		}
	case "content_block_start":
		s.start("", "")
		s.blockStart(e.Index, &e.ContentBlock)
	case "content_block_delta":
		s.start("", "")
		s.blockDelta(e.Index)
	case "content_block_stop":
		s.block = blockNone
	case "message_delta":
		s.start("", "")
		if u := e.Usage; u != nil {
			s.mergeUsage(u)
		}
		if e.Delta.StopReason != "" && !s.finished {
			s.writeFinish(finishReason(e.Delta.StopReason))
		}
	case "message_stop":
		s.start("", "")
		if !s.finished {
			s.writeFinish("stop")
		}
		if s.includeUsage {
			s.writeUsage()
		}
		s.Out = append(s.Out, "data: [DONE]\n\n"...)
		s.Err = io.EOF
	}
	// ping and event types added later carry nothing to translate.
}

// start writes the role chunk once, building the chunk prefix from the
// message's ID and model (or empty ones when message_start is missing).
func (s *chatStream) start(id, model string) {
	if s.started {
		return
	}
	s.started = true
	b := s.prefix[:0]
	b = append(b, `data: {"id":`...)
	b = appendString(b, clip(id))
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, clip(model))
	b = append(b, `,"choices":[`...)
	s.prefix = b
	s.chunk()
	s.Out = append(s.Out, `{"role":"assistant","content":""}`...)
	s.endChunk("")
}

func clip(s string) string {
	if len(s) > maxIDLen {
		return s[:maxIDLen]
	}
	return s
}

func (s *chatStream) blockStart(index int, b *anthropicBlock) {
	s.blockAt = index
	switch b.Type {
	case "text":
		s.block = blockText
		s.writeContent(b.Text)
	case "thinking":
		s.block = blockThinking
		s.writeReasoning(b.Thinking)
	case "tool_use":
		s.block = blockTool
		s.tool = s.tools
		s.tools++
		args := ""
		if in := b.Input; len(in) > 0 && !isNull(in) && !isEmptyObject(in) {
			args = string(in)
		}
		s.chunk()
		s.Out = append(s.Out, `{"tool_calls":[{"index":`...)
		s.Out = strconv.AppendInt(s.Out, int64(s.tool), 10)
		s.Out = append(s.Out, `,"id":`...)
		s.Out = appendString(s.Out, b.ID)
		s.Out = append(s.Out, `,"type":"function","function":{"name":`...)
		s.Out = appendString(s.Out, b.Name)
		s.Out = append(s.Out, `,"arguments":`...)
		s.Out = appendString(s.Out, args)
		s.Out = append(s.Out, `}}]}`...)
		s.endChunk("")
	default:
		s.block = blockOther
	}
}

func (s *chatStream) blockDelta(index int) {
	d := &s.ev.Delta
	switch d.Type {
	case "text_delta":
		s.writeContent(d.Text)
	case "thinking_delta":
		s.writeReasoning(d.Thinking)
	case "input_json_delta":
		if s.block != blockTool || index != s.blockAt || d.PartialJSON == "" {
			return
		}
		s.chunk()
		s.Out = append(s.Out, `{"tool_calls":[{"index":`...)
		s.Out = strconv.AppendInt(s.Out, int64(s.tool), 10)
		s.Out = append(s.Out, `,"function":{"arguments":`...)
		s.Out = appendString(s.Out, d.PartialJSON)
		s.Out = append(s.Out, `}}]}`...)
		s.endChunk("")
	}
	// signature_delta, citations_delta and others have no OpenAI form.
}

func (s *chatStream) writeContent(text string) {
	if text == "" {
		return
	}
	s.chunk()
	s.Out = append(s.Out, `{"content":`...)
	s.Out = appendString(s.Out, text)
	s.Out = append(s.Out, '}')
	s.endChunk("")
}

func (s *chatStream) writeReasoning(text string) {
	if text == "" {
		return
	}
	s.chunk()
	s.Out = append(s.Out, `{"reasoning_content":`...)
	s.Out = appendString(s.Out, text)
	s.Out = append(s.Out, '}')
	s.endChunk("")
}

func (s *chatStream) writeFinish(reason string) {
	s.finished = true
	s.chunk()
	s.Out = append(s.Out, `{}`...)
	s.endChunk(reason)
}

// chunk starts a chunk, up to its delta.
func (s *chatStream) chunk() {
	s.Out = append(s.Out, s.prefix...)
	s.Out = append(s.Out, `{"index":0,"delta":`...)
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

// mergeUsage takes message_delta's cumulative counts; input counts are
// only taken when present, as older streams send them in message_start
// alone.
func (s *chatStream) mergeUsage(u *anthropicUsage) {
	s.usage.OutputTokens = u.OutputTokens
	if u.InputTokens > 0 {
		s.usage.InputTokens = u.InputTokens
	}
	if u.CacheReadInputTokens > 0 {
		s.usage.CacheReadInputTokens = u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens > 0 {
		s.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
}

// writeUsage writes the usage chunk of stream_options.include_usage: no
// choices, the whole stream's usage.
func (s *chatStream) writeUsage() {
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

// writeError writes an Anthropic error event as an OpenAI error event,
// keeping the error type (overloaded_error, rate_limit_error, …) so that
// aierr classifies it as it would the Anthropic event.
func (s *chatStream) writeError() {
	typ, msg := s.ev.Error.Type, s.ev.Error.Message
	if typ == "" {
		typ = "api_error"
	}
	if msg == "" {
		msg = "Anthropic reported an error in the stream"
	}
	s.Out = append(s.Out, `data: {"error":{"message":`...)
	s.Out = appendString(s.Out, msg)
	s.Out = append(s.Out, `,"type":`...)
	s.Out = appendString(s.Out, typ)
	s.Out = append(s.Out, `,"param":null,"code":`...)
	s.Out = appendString(s.Out, typ)
	s.Out = append(s.Out, "}}\n\n"...)
}
