package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/fuseboxhq/fusebox/internal/chatwire"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// NewMessagesStream returns a reader of the Anthropic Messages event
// stream that says what the OpenAI chat.completion.chunk stream in
// openAIStream says, for Anthropic clients whose requests went to
// OpenAI-compatible targets. model, if not empty, is the model named in
// message_start; otherwise the first chunk's.
//
// Mapping: the first chunk → message_start (usage arrives at the end);
// delta.content → a text block (content_block_start, text_delta events);
// each tool call (a delta with an id, or a new index) → a tool_use block
// whose arguments fragments become input_json_delta events as they
// arrive; finish_reason → the stop_reason of message_delta; the usage
// chunk → message_delta's usage; data: [DONE] (or the end of a stream
// that has sent a finish_reason) → content_block_stop, message_delta,
// message_stop. An in-stream {"error":…} chunk, or a stream that ends
// before its finish_reason, becomes an "event: error" and ends the stream.
// Reasoning deltas are left out. Fragments of tool calls interleaved by
// index start a new tool_use block at each change of index, as Anthropic
// streams one block at a time.
//
// Like the forward translator it reads one upstream event per refill,
// holds memory bounded by the event size limit, starts no goroutine and is
// not safe for concurrent use.
func NewMessagesStream(openAIStream io.Reader, model string) io.Reader {
	return &messagesStream{rd: sse.NewReader(openAIStream, sse.Options{}), model: clip(model)}
}

type messagesStream struct {
	rd              *sse.Reader
	chatwire.Refill // translated bytes not yet read

	model   string
	started bool
	block   int // blockNone, blockText or blockTool: the open block
	next    int // index of the next block
	tool    int // OpenAI index of the open tool call
	stop    string
	usage   anthropicUsage
}

// openAIChunk is an OpenAI stream chunk, as far as it is read.
type openAIChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
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
	Usage *openAIUsage `json:"usage"`
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// Read yields translated bytes, pulling upstream events as needed.
func (s *messagesStream) Read(p []byte) (int, error) { return s.Pull(p, s.step) }

func (s *messagesStream) step() {
	ev, err := s.rd.Next()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, sse.ErrIncomplete):
		if s.stop != "" && err == io.EOF {
			s.end()
			return
		}
		s.writeError("api_error", "the upstream stream ended before the answer was complete")
		return
	case err != nil:
		s.Err = fmt.Errorf("anthropic: stream: %w", err)
		return
	}
	if sse.IsDone(ev) {
		s.end()
		return
	}
	var c openAIChunk
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		s.writeError("api_error", "the upstream sent an unreadable stream event")
		return
	}
	if c.Error != nil || ev.Name == "error" {
		typ, msg := "api_error", "the upstream reported an error in the stream"
		if c.Error != nil {
			typ, msg = anthropicErrorType(c.Error.Type, c.Error.Code), c.Error.Message
		}
		s.writeError(typ, msg)
		return
	}
	s.start(c.ID, c.Model)
	if c.Usage != nil {
		s.usage = reverseUsage(c.Usage)
	}
	if len(c.Choices) == 0 {
		return
	}
	ch := &c.Choices[0]
	if ch.Delta.Content != "" {
		if s.block != blockText {
			s.closeBlock()
			s.openBlock(`{"type":"text","text":""}`)
			s.block = blockText
		}
		s.event("content_block_delta", `{"type":"content_block_delta","index":`)
		s.Out = strconv.AppendInt(s.Out, int64(s.next-1), 10)
		s.Out = append(s.Out, `,"delta":{"type":"text_delta","text":`...)
		s.Out = appendString(s.Out, ch.Delta.Content)
		s.Out = append(s.Out, "}}\n\n"...)
	}
	for _, tc := range ch.Delta.ToolCalls {
		if s.block != blockTool || tc.ID != "" || tc.Index != s.tool {
			s.closeBlock()
			b := append([]byte(nil), `{"type":"tool_use","id":`...)
			b = appendString(b, tc.ID)
			b = append(b, `,"name":`...)
			b = appendString(b, tc.Function.Name)
			b = append(b, `,"input":{}}`...)
			s.openBlock(string(b))
			s.block, s.tool = blockTool, tc.Index
		}
		if tc.Function.Arguments == "" {
			continue
		}
		s.event("content_block_delta", `{"type":"content_block_delta","index":`)
		s.Out = strconv.AppendInt(s.Out, int64(s.next-1), 10)
		s.Out = append(s.Out, `,"delta":{"type":"input_json_delta","partial_json":`...)
		s.Out = appendString(s.Out, tc.Function.Arguments)
		s.Out = append(s.Out, "}}\n\n"...)
	}
	if ch.FinishReason != "" {
		s.stop = stopReason(ch.FinishReason)
		s.closeBlock()
	}
}

// event starts an event with its name and the start of its data.
func (s *messagesStream) event(name, data string) {
	s.Out = append(s.Out, "event: "...)
	s.Out = append(s.Out, name...)
	s.Out = append(s.Out, "\ndata: "...)
	s.Out = append(s.Out, data...)
}

func (s *messagesStream) start(id, model string) {
	if s.started {
		return
	}
	s.started = true
	if s.model == "" {
		s.model = clip(model)
	}
	s.event("message_start", `{"type":"message_start","message":{"id":`)
	s.Out = appendString(s.Out, clip(messageID(id)))
	s.Out = append(s.Out, `,"type":"message","role":"assistant","model":`...)
	s.Out = appendString(s.Out, s.model)
	s.Out = append(s.Out, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`+"\n\n"...)
}

func (s *messagesStream) openBlock(block string) {
	s.event("content_block_start", `{"type":"content_block_start","index":`)
	s.Out = strconv.AppendInt(s.Out, int64(s.next), 10)
	s.Out = append(s.Out, `,"content_block":`...)
	s.Out = append(s.Out, block...)
	s.Out = append(s.Out, "}\n\n"...)
	s.next++
}

func (s *messagesStream) closeBlock() {
	if s.block == blockNone {
		return
	}
	s.block = blockNone
	s.event("content_block_stop", `{"type":"content_block_stop","index":`)
	s.Out = strconv.AppendInt(s.Out, int64(s.next-1), 10)
	s.Out = append(s.Out, "}\n\n"...)
}

// end closes the message: the open block, message_delta, message_stop.
func (s *messagesStream) end() {
	s.start("", "")
	s.closeBlock()
	if s.stop == "" {
		s.stop = "end_turn"
	}
	s.event("message_delta", `{"type":"message_delta","delta":{"stop_reason":`)
	s.Out = appendString(s.Out, s.stop)
	s.Out = append(s.Out, `,"stop_sequence":null},"usage":`...)
	u, _ := json.Marshal(s.usage)
	s.Out = append(s.Out, u...)
	s.Out = append(s.Out, "}\n\n"...)
	s.event("message_stop", `{"type":"message_stop"}`+"\n\n")
	s.Err = io.EOF
}

// writeError writes an Anthropic error event and ends the stream.
func (s *messagesStream) writeError(typ, msg string) {
	s.event("error", `{"type":"error","error":{"type":`)
	s.Out = appendString(s.Out, typ)
	s.Out = append(s.Out, `,"message":`...)
	s.Out = appendString(s.Out, msg)
	s.Out = append(s.Out, "}}\n\n"...)
	s.Err = io.EOF
}

// anthropicErrorType names an OpenAI-style error as Anthropic would.
func anthropicErrorType(typ string, code json.RawMessage) string {
	var c string
	json.Unmarshal(code, &c)
	for _, v := range []string{c, typ, string(code)} {
		switch v {
		case "rate_limit_exceeded", "rate_limit_error", "429", "tokens", "requests":
			return "rate_limit_error"
		case "overloaded_error", "overloaded", "engine_overloaded", "529", "503":
			return "overloaded_error"
		case "invalid_request_error", "400":
			return "invalid_request_error"
		case "authentication_error", "invalid_api_key", "401":
			return "authentication_error"
		}
	}
	return "api_error"
}
