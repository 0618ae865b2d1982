package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// minOutputTokens is the smallest max_output_tokens the Responses API
// takes, as OpenAI's.
const minOutputTokens = 16

// responsesRequest is the part of a Responses API request the sim reads.
type responsesRequest struct {
	Model             string          `json:"model"`
	Input             json.RawMessage `json:"input"`
	Instructions      *string         `json:"instructions"`
	Stream            bool            `json:"stream"`
	MaxOutputTokens   *int            `json:"max_output_tokens"`
	Tools             json.RawMessage `json:"tools"`
	ToolChoice        json.RawMessage `json:"tool_choice"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls"`
	Text              json.RawMessage `json:"text"`
	Metadata          json.RawMessage `json:"metadata"`
}

// inputItem is an item of a Responses API input, as far as it is read.
type inputItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// messages reads the instructions and input as chat messages, for the
// prompt's token count and the turn: message items by role,
// function_call items as assistant messages, function_call_output items
// as tool messages; other items are left out.
func (r *responsesRequest) messages() ([]chatMessage, *requestError) {
	var msgs []chatMessage
	if r.Instructions != nil {
		b, _ := json.Marshal(*r.Instructions)
		msgs = append(msgs, chatMessage{Role: "system", Content: b})
	}
	if len(r.Input) == 0 || string(r.Input) == "null" {
		return nil, missing("input")
	}
	var text string
	if json.Unmarshal(r.Input, &text) == nil {
		return append(msgs, chatMessage{Role: "user", Content: r.Input}), nil
	}
	var items []inputItem
	if json.Unmarshal(r.Input, &items) != nil {
		return nil, &requestError{param: "input", code: "invalid_type",
			msg: "Invalid type for 'input': expected one of a string or array of input items."}
	}
	if len(items) == 0 {
		return nil, &requestError{param: "input", code: "empty_array",
			msg: "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead."}
	}
	for _, it := range items {
		switch it.Type {
		case "", "message":
			msgs = append(msgs, chatMessage{Role: it.Role, Content: it.Content})
		case "function_call":
			b, _ := json.Marshal(it.Arguments)
			msgs = append(msgs, chatMessage{Role: "assistant", Content: b})
		case "function_call_output":
			msgs = append(msgs, chatMessage{Role: "tool", Content: it.Output})
		}
	}
	return msgs, nil
}

// ask reads what shapes the answer: max_output_tokens, tools,
// tool_choice, parallel_tool_calls, text.format and the turn of msgs.
func (r *responsesRequest) ask(msgs []chatMessage) (ask, *requestError) {
	k := ask{n: 1, format: formatText, turn: chatTurn(msgs)}
	if m := r.MaxOutputTokens; m != nil {
		if *m < minOutputTokens {
			return k, &requestError{param: "max_output_tokens", code: "integer_below_min_value",
				msg: "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= " + strconv.Itoa(minOutputTokens) + ", but got " + strconv.Itoa(*m) + " instead."}
		}
		k.limit = *m
	}
	if e := r.readTools(&k.tools); e != nil {
		return k, e
	}
	var text struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	}
	if len(r.Text) > 0 && json.Unmarshal(r.Text, &text) != nil {
		return k, invalidValue("text", "Invalid type for 'text': expected an object.")
	}
	if f := text.Format; f != nil {
		spec := formatSpec{at: "text.format", typ: f.Type, schemaAt: "text.format", name: f.Name, schema: f.Schema}
		if e := readFormat(&k, spec); e != nil {
			return k, e
		}
	}
	return k, nil
}

// readTools reads tools (function tools, flat: type, name, parameters),
// tool_choice and parallel_tool_calls.
func (r *responsesRequest) readTools(ts *toolSpec) *requestError {
	var tools []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if len(r.Tools) > 0 && json.Unmarshal(r.Tools, &tools) != nil {
		return invalidValue("tools", "Invalid type for 'tools': expected an array of tools.")
	}
	if len(tools) > maxTools {
		return tooMany(len(tools))
	}
	for i, t := range tools {
		at := "tools[" + strconv.Itoa(i) + "]"
		tl, e := readTool(at, at, t.Type, t.Name, t.Parameters)
		if e != nil {
			return e
		}
		ts.tools = append(ts.tools, tl)
	}
	ts.parallel = r.ParallelToolCalls == nil || *r.ParallelToolCalls
	return ts.readChoice(r.ToolChoice, func(raw json.RawMessage) (string, bool) {
		var c struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		err := json.Unmarshal(raw, &c)
		return c.Name, err == nil && c.Type == "function" && c.Name != ""
	})
}

// handleResponses serves POST /v1/responses natively: latency, limits,
// faults and stats as for chat completions, one answer (an assistant
// message, or function_call items), streamed as the Responses API's
// semantic events.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	s.serveResponses(w, r, apiResponses)
}

// serveResponses answers a Responses call that came by API a.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request, a api) {
	s.stats.receive(a)
	var req responsesRequest
	if !s.readRequest(w, r, &req) {
		return
	}
	msgs, bad := req.messages()
	if bad != nil {
		s.badRequest(w, http.StatusBadRequest, bad.param, bad.code, bad.msg)
		return
	}
	if !s.checkModel(w, req.Model) {
		return
	}
	k, bad := req.ask(msgs)
	if bad != nil {
		s.badRequest(w, http.StatusBadRequest, bad.param, bad.code, bad.msg)
		return
	}
	prompt := (&chatRequest{Messages: msgs, Tools: req.Tools}).promptTokens()
	s.stats.input.Add(int64(prompt))
	p := s.decide(req.Stream, prompt+s.budget(&k))
	if s.refuse(w, r, &p, req.Stream) {
		return
	}
	rc := &responseCall{req: &req, id: fmt.Sprintf("%016x", p.id), created: p.now.Unix(),
		answers: s.answers(&k, p.seed), prompt: prompt}
	if req.Stream {
		s.stream(w, r, &p, &streamer{s: s, prompt: prompt, answers: rc.answers}, &responsesStream{rc: rc})
		return
	}
	if err := s.sleep(r.Context(), p.wait+p.extra); err != nil {
		s.stats.finish(OutcomeCanceled)
		return
	}
	s.stats.bill(prompt, completionTokens(rc.answers))
	s.stats.finish(OutcomeOK)
	p.limit.headers.set(w.Header())
	writeJSON(w, http.StatusOK, rc.object(rc.status(), rc.items(), true))
}
