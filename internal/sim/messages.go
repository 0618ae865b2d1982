package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fuseboxhq/fusebox/aireq"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
)

// handleMessages serves Anthropic's Messages API (POST /v1/messages) by
// translating the request to a chat completion, answering it as the chat
// endpoint would — latency, faults, stats and all — and translating the
// answer back: JSON, stream or error. Tools become function tools and
// tool_result blocks tool messages, so tool calls come back as tool_use
// blocks (ids toolu_…, stop_reason tool_use; streamed as input_json_delta
// events). Faults apply as for chat; a reset cannot cut the connection
// through the translation and ends the answer early instead.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	model := aireq.Scan(body).ModelName()
	chat, err := anthropic.FromMessagesRequest(body)
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	inner := r.Clone(r.Context())
	inner.URL.Path = "/v1/chat/completions"
	inner.Body, inner.ContentLength = io.NopCloser(bytes.NewReader(chat)), int64(len(chat))
	pr, pw := io.Pipe()
	pipe := &pipeWriter{header: http.Header{}, pw: pw, started: make(chan int, 1)}
	go func() {
		s.serveChat(pipe, inner, apiMessages)
		pipe.start(http.StatusOK)
		pw.Close()
	}()
	defer pr.Close()
	status := <-pipe.started
	for k, v := range pipe.header {
		if k != "Content-Length" && k != "Content-Type" {
			w.Header()[k] = v
		}
	}
	switch {
	case status != http.StatusOK:
		b, _ := io.ReadAll(pr)
		if bytes.Contains(b, []byte(`"type":"error"`)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(b)
			return
		}
		var e struct {
			Error struct {
				Type, Message string
			}
		}
		json.Unmarshal(b, &e)
		writeAnthropicError(w, status, anthropic.ErrorType(status), e.Error.Message)
	case strings.HasPrefix(pipe.header.Get("Content-Type"), "text/event-stream"):
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		rd := anthropic.NewMessagesStream(pr, model)
		buf := make([]byte, 8<<10)
		for {
			n, err := rd.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				rc.Flush()
			}
			if err != nil {
				return
			}
		}
	default:
		b, _ := io.ReadAll(pr)
		out, err := anthropic.ToMessagesResponse(b, model)
		if err != nil {
			writeAnthropicError(w, http.StatusInternalServerError, "api_error", "simulator: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	}
}

// pipeWriter is the ResponseWriter the chat handler writes into when it
// serves a Messages request: headers are kept, the status is announced
// once, the body goes into a pipe read by the translator.
type pipeWriter struct {
	header  http.Header
	pw      *io.PipeWriter
	started chan int
	sent    bool
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

// Hijack is refused: a reset ends the translated answer early instead.
func (p *pipeWriter) Hijack() (any, any, error) {
	return nil, nil, errors.New("sim: no connection to hijack behind /v1/messages")
}

// handleCountTokens serves POST /v1/messages/count_tokens: the prompt
// tokens the Messages request in the body would be billed, counted as for
// the chat completion it translates to, as {"input_tokens": N}. It has no
// latency, faults or limits, and Stats do not count it.
func (s *Server) handleCountTokens(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		status := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			status = http.StatusRequestEntityTooLarge
		}
		writeAnthropicError(w, status, anthropic.ErrorType(status), "Could not read the request body.")
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
