package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
)

// handleMessages serves Anthropic's Messages API (POST /v1/messages) by
// translating the request to a chat completion, answering it as the chat
// endpoint would — latency, faults, stats and all — and translating the
// answer back: JSON, stream or error. Tools become function tools and
// tool_result blocks tool messages, so tool calls come back as tool_use
// blocks (ids toolu_…, stop_reason tool_use; streamed as input_json_delta
// events). Faults apply as for chat, resets and hangs included.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	body, bad := readBody(w, r)
	if bad != 0 {
		writeAnthropicError(w, bad, anthropic.ErrorType(bad), "Could not read the request body.")
		return
	}
	rl, model, err := s.relayMessages(r, body, apiMessages)
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	answerMessages(w, rl, model)
}

// answerMessages writes a relayed Messages answer as /v1/messages answers:
// the Messages response or stream, or the error in Anthropic's shape; a
// cut answer cuts the client's connection.
func answerMessages(w http.ResponseWriter, rl *relayed, model string) {
	defer rl.body.Close()
	switch {
	case rl.status == 0:
		cutConnection(w)
	case rl.status != http.StatusOK:
		rl.copyHeaders(w.Header())
		writeMessagesError(w, rl.readError())
	case rl.streaming():
		rl.copyHeaders(w.Header())
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rl.pump(w, anthropic.NewMessagesStream(rl.in, model))
		if rl.cut() {
			rl.endCut(w, garbageMessages)
		}
	default:
		out, err := rl.messagesJSON(model)
		if err != nil {
			writeAnthropicError(w, http.StatusInternalServerError, "api_error", "simulator: "+err.Error())
			return
		}
		rl.copyHeaders(w.Header())
		writeRaw(w, http.StatusOK, out)
	}
}

// relayMessages runs a Messages request through the chat engine as a call
// of API a; it returns the request's model, or the error that makes the
// request one the translation refuses (a 400).
func (s *Server) relayMessages(r *http.Request, body []byte, a api) (*relayed, string, error) {
	model := aireq.Scan(body).ModelName()
	chat, err := anthropic.FromMessagesRequest(body)
	if err != nil {
		return nil, model, err
	}
	return s.relay(r, chat, a), model, nil
}

// messagesJSON reads a relayed non-streamed answer as a Messages response.
func (rl *relayed) messagesJSON(model string) ([]byte, error) {
	b, err := io.ReadAll(rl.body)
	if err != nil {
		return nil, err
	}
	return anthropic.ToMessagesResponse(b, model)
}

// garbageMessages is what a Garbage fault leaves of a Messages stream's
// next event.
var garbageMessages = []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tru")

// writeMessagesError writes an engine error in Anthropic's shape.
func writeMessagesError(w http.ResponseWriter, e engineError) {
	typ := anthropic.ErrorType(e.status)
	if e.anthropic {
		typ = e.typ
	}
	writeAnthropicError(w, e.status, typ, e.msg)
}

// writeRaw writes body, already JSON, with its length.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// pipeWriter is the ResponseWriter the chat engine writes into when it
// serves a translated call: headers are kept, the status is announced
// once, the body goes into a pipe read by the translator. It cannot be
// hijacked: a reset panics with http.ErrAbortHandler, which relay turns
// into a cut of the client's own connection.
type pipeWriter struct {
	header  http.Header
	pw      *io.PipeWriter
	started chan int
	sent    bool
	garbled atomic.Bool // a Garbage fault cut the stream
}

func (p *pipeWriter) Header() http.Header { return p.header }

func (p *pipeWriter) start(status int) {
	if !p.sent {
		p.sent = true
		p.started <- status
	}
}

func (p *pipeWriter) WriteHeader(status int) { p.start(status) }

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.start(http.StatusOK)
	return p.pw.Write(b)
}

// Flush is a no-op: every Write already reaches the translator.
func (p *pipeWriter) Flush() {}

// handleCountTokens serves POST /v1/messages/count_tokens: the prompt
// tokens the Messages request in the body would be billed, counted as for
// the chat completion it translates to, as {"input_tokens": N}. It has no
// latency, faults or limits, and Stats do not count it.
func (s *Server) handleCountTokens(w http.ResponseWriter, r *http.Request) {
	body, bad := readBody(w, r)
	if bad != 0 {
		writeAnthropicError(w, bad, anthropic.ErrorType(bad), "Could not read the request body.")
		return
	}
	chat, err := anthropic.FromMessagesRequest(body)
	var req chatRequest
	if err == nil {
		err = json.Unmarshal(chat, &req)
	}
	switch {
	case err != nil:
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
	case req.Model == "":
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", "model: Field required")
	case s.models != nil && !s.models[req.Model]:
		writeAnthropicError(w, http.StatusNotFound, "not_found_error", "model: "+req.Model)
	default:
		writeJSON(w, http.StatusOK, struct {
			InputTokens int `json:"input_tokens"`
		}{req.promptTokens()})
	}
}
