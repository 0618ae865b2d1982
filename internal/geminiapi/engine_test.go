package geminiapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// engine is a tiny chat completions engine for tests: it answers a chat
// body with fixed text (streamed in chunks), a tool call when tools are
// given and the last message is not a tool result, JSON when a
// response_format asks for it, reasoning when reasoning_effort is set,
// and usage. A user text containing "FAIL" makes a stream fail after its
// first chunk; "CUT" makes it end without a finish_reason.
type engine struct {
	mu   sync.Mutex
	last map[string]any // the last chat body received
}

// chatReq is what the engine reads of a chat body.
type chatReq struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	ReasoningEffort string `json:"reasoning_effort"`
	N               int    `json:"n"`
}

// reply is the engine's answer to a chat body.
type reply struct {
	text, reasoning string
	tool            string // the name of a function to call
	args            string
	fail, cut       bool
	prompt          int
}

func (e *engine) read(t testing.TB, body []byte) reply {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Errorf("the chat body is not JSON: %v\n%s", err, body)
	}
	e.mu.Lock()
	e.last = m
	e.mu.Unlock()
	var req chatReq
	json.Unmarshal(body, &req)
	r := reply{text: "Hello from the engine.", prompt: len(body) / 4}
	last := req.Messages[len(req.Messages)-1]
	if strings.Contains(string(last.Content), "FAIL") {
		r.fail = true
	}
	if strings.Contains(string(last.Content), "CUT") {
		r.cut = true
	}
	switch {
	case len(req.Tools) > 0 && last.Role != "tool":
		r.tool, r.args, r.text = req.Tools[0].Function.Name, `{"city":"Paris"}`, ""
	case last.Role == "tool":
		var s string
		json.Unmarshal(last.Content, &s)
		r.text = "The tool said " + s
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "text":
		r.text = `{"answer":42}`
	case req.Messages[0].Role == "system":
		var s string
		json.Unmarshal(req.Messages[0].Content, &s)
		r.text = "System: " + s
	}
	if req.ReasoningEffort != "" && req.ReasoningEffort != "none" {
		r.reasoning = "Let me think (" + req.ReasoningEffort + ")."
	}
	return r
}

// lastBody returns the last chat body the engine received.
func (e *engine) lastBody() map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last
}

// completion returns the chat.completion answering r.
func (r reply) completion() []byte {
	msg := map[string]any{"role": "assistant", "content": r.text}
	finish := "stop"
	if r.reasoning != "" {
		msg["reasoning_content"] = r.reasoning
	}
	if r.tool != "" {
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{"id": "call_abc", "type": "function",
			"function": map[string]any{"name": r.tool, "arguments": r.args}}}
		finish = "tool_calls"
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "engine-1",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   r.usage(),
	})
	return b
}

func (r reply) usage() map[string]any {
	reasoning := 0
	if r.reasoning != "" {
		reasoning = 5
	}
	return map[string]any{"prompt_tokens": r.prompt, "completion_tokens": 7 + reasoning,
		"total_tokens":              r.prompt + 7 + reasoning,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 2},
		"completion_tokens_details": map[string]any{"reasoning_tokens": reasoning}}
}

// stream returns the chat.completion.chunk stream answering r.
func (r reply) stream() []byte {
	var b bytes.Buffer
	chunk := func(delta map[string]any, finish any) {
		c, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk",
			"model": "engine-1", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if r.reasoning != "" {
		chunk(map[string]any{"reasoning_content": r.reasoning}, nil)
	}
	for text := r.text; text != ""; {
		n := min(len(text), 5)
		chunk(map[string]any{"content": text[:n]}, nil)
		text = text[n:]
		if r.fail {
			b.WriteString(`data: {"error":{"message":"the engine is overloaded","type":"server_error","code":"overloaded"}}` + "\n\n")
			return b.Bytes()
		}
	}
	if r.cut {
		return b.Bytes()
	}
	finish := "stop"
	if r.tool != "" {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_abc", "type": "function",
			"function": map[string]any{"name": r.tool, "arguments": ""}}}}, nil)
		for _, frag := range []string{r.args[:4], r.args[4:]} {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": frag}}}}, nil)
		}
		finish = "tool_calls"
	}
	chunk(map[string]any{}, finish)
	u, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{}, "usage": r.usage()})
	fmt.Fprintf(&b, "data: %s\n\ndata: [DONE]\n\n", u)
	return b.Bytes()
}

// server is a Gemini API server for tests: the package over the engine.
func server(t testing.TB, e *engine) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model, method, _, ok := ParsePath(r.URL.Path)
		if !ok {
			WriteError(w, 404, "NOT_FOUND", "no such path "+r.URL.Path)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var err error
		switch method {
		case "generateContent":
			err = generate(t, w, e, model, body)
		case "streamGenerateContent":
			err = streamGenerate(t, w, e, model, body, r.URL.Query().Get("alt") == "sse")
		case "countTokens":
			var chat []byte
			if chat, err = CountTokensToChat(model, body); err == nil {
				var out []byte
				out, err = CountTokensFromChat(e.read(t, chat).completion())
				w.Write(out)
			}
		default:
			WriteError(w, 404, "NOT_FOUND", "no such method")
			return
		}
		var ge *Error
		if errors.As(err, &ge) {
			WriteError(w, ge.Code, ge.Status, ge.Message)
		} else if err != nil {
			t.Errorf("%s: %v", method, err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func generate(t testing.TB, w http.ResponseWriter, e *engine, model string, body []byte) error {
	chat, err := ToChat(model, body, false)
	if err != nil {
		return err
	}
	out, err := FromChatWith(e.read(t, chat).completion(), model, OptionsFor(body))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
	return nil
}

func streamGenerate(t testing.TB, w http.ResponseWriter, e *engine, model string, body []byte, sse bool) error {
	chat, err := ToChat(model, body, true)
	if err != nil {
		return err
	}
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	s := NewStreamWith(bytes.NewReader(e.read(t, chat).stream()), model, sse, OptionsFor(body))
	if _, err := io.Copy(w, s); err != nil {
		panic(http.ErrAbortHandler) // a cut answer must not end cleanly
	}
	return nil
}
