package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// The Responses API with openai-go through the gateway, to each kind of
// target: a native OpenAI-Responses target (the simulator), a Chat
// Completions target and an Anthropic target. Each gets a function-tool
// round trip over previous_response_id, structured output, a stream cut
// before and after its commit, and two text turns.

// respStream is what a client read from a Responses stream.
type respStream struct {
	types []string
	seqs  []int64
	text  string
	final *responses.Response
	err   error
}

func (s respStream) joined() string { return strings.Join(s.types, " ") }

// count is how many events of type typ were read.
func (s respStream) count(typ string) int {
	n := 0
	for _, t := range s.types {
		if t == typ {
			n++
		}
	}
	return n
}

// readStream reads a whole Responses stream with openai-go.
func readStream(t *testing.T, c openai.Client, params responses.ResponseNewParams, opts ...option.RequestOption) respStream {
	t.Helper()
	st := c.Responses.NewStreaming(t.Context(), params, opts...)
	var s respStream
	for st.Next() {
		ev := st.Current()
		s.types = append(s.types, ev.Type)
		s.seqs = append(s.seqs, ev.SequenceNumber)
		switch ev.Type {
		case "response.output_text.delta":
			s.text += ev.Delta
		case "response.completed", "response.failed", "response.incomplete":
			r := ev.Response
			s.final = &r
		}
	}
	s.err = st.Err()
	return s
}

// checkSequence fails unless the events are numbered 0, 1, 2, … in order,
// as one stream's are.
func checkSequence(t *testing.T, s respStream) {
	t.Helper()
	for i, n := range s.seqs {
		if n != int64(i) {
			t.Fatalf("event %d (%s) has sequence_number %d; want one stream numbered from 0: %v", i, s.types[i], n, s.seqs)
		}
	}
}

// abort drops the connection mid-answer, as a reset upstream does.
func abort(w http.ResponseWriter) {
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

// toolOutput is the second turn of a tool round trip: the call's output,
// continuing the response that made the call.
func toolOutput(prev, callID, output string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: "smart", PreviousResponseID: openai.String(prev), Tools: []responses.ToolUnionParam{weatherTool()},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{
			OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: openai.String(callID), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(output)},
			}}}},
	}
}

func weatherSchema() responses.ResponseTextConfigParam {
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "temp": map[string]any{"type": "integer"}},
		"required": []string{"city", "temp"}, "additionalProperties": false}
	return responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
		OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "weather", Schema: schema, Strict: openai.Bool(true)}}}
}

// checkWeatherJSON fails unless text is an object with the schema's
// required members.
func checkWeatherJSON(t *testing.T, text string) {
	t.Helper()
	var out struct {
		City *string `json:"city"`
		Temp *int    `json:"temp"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil || out.City == nil || out.Temp == nil {
		t.Errorf("structured output %q: %v", text, err)
	}
}

// nativeMatrix: the simulator serving the Responses API before a chat
// target.
const nativeMatrix = `
providers:
  oai: {type: openai, base_url: "%s", keys: [k], responses: true}
  chat: {type: openai, base_url: "%s", keys: [k]}
defaults:
  timeouts: {ttfb: 2s, idle: 5s, total: 60s}
models:
  - name: smart
    targets: [{provider: oai, model: sim-large}, {provider: chat, model: m}]
    breaker: {consecutive: 3}
    retry: {attempts: 1}
`

// simUpstream is the simulator behind a recording upstream, so a test
// sees what it was sent.
func simUpstream(t *testing.T) *upstream {
	_, hs := simServer(t)
	h := hs.Config.Handler
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { h.ServeHTTP(w, r) })
}

// pathsOf lists the paths an upstream was sent, in order.
func (u *upstream) paths() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var p []string
	for _, r := range u.reqs {
		p = append(p, r.URL.Path)
	}
	return p
}

func (u *upstream) body(i int) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[i]
}

// Native target: the first turn goes as it is and yields a function_call;
// the second, continuing it, is translated (the target does not know the
// gateway's store) and its chat request carries the call and its output.
func TestNativeResponsesToolRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			oai, chat := simUpstream(t), newUpstream(t, toolOrText)
			_, gw := gateway(t, nil, nativeMatrix, oai, chat)
			c := newClient(gw.URL)
			first := respond(t, c, stream, responses.ResponseNewParams{Model: "smart", Input: textInput("weather in Oslo?"),
				Tools: []responses.ToolUnionParam{weatherTool()}})
			if len(first.Output) != 1 || first.Output[0].Type != "function_call" {
				t.Fatalf("first turn: %s", first.RawJSON())
			}
			call := first.Output[0].AsFunctionCall()
			if call.Name != "weather" || call.CallID == "" || !json.Valid([]byte(call.Arguments)) {
				t.Fatalf("the call: %+v", call)
			}
			if p := oai.paths(); len(p) != 1 || p[0] != "/v1/responses" || !strings.Contains(oai.body(0), `"type":"function"`) {
				t.Fatalf("the native target was sent %v: %s", p, oai.body(0))
			}
			second := respond(t, c, stream, toolOutput(first.ID, call.CallID, "-3C and snow"))
			if !strings.Contains(second.OutputText(), "-3C") {
				t.Errorf("second turn: %s", second.RawJSON())
			}
			p := oai.paths()
			if len(p) != 2 || p[1] != "/v1/chat/completions" || chat.calls() != 0 {
				t.Fatalf("the second turn went to %v (chat target %d calls); want the native target's chat API", p, chat.calls())
			}
			sent := oai.body(1)
			for _, want := range []string{"weather in Oslo?", `"tool_calls"`, `"role":"tool"`, `"tool_call_id":"` + call.CallID + `"`, "-3C and snow", `"name":"weather"`} {
				if !strings.Contains(sent, want) {
					t.Errorf("the target was sent %s; want %s in it", sent, want)
				}
			}
		})
	}
}

// Native target: text.format json_schema goes to it as it is, and the
// answer is the schema's JSON.
func TestNativeResponsesStructuredOutput(t *testing.T) {
	for _, stream := range []bool{false, true} {
		oai, chat := simUpstream(t), newUpstream(t, chatOK("chat"))
		_, gw := gateway(t, nil, nativeMatrix, oai, chat)
		r := respond(t, newClient(gw.URL), stream, responses.ResponseNewParams{Model: "smart", Input: textInput("weather?"), Text: weatherSchema()})
		checkWeatherJSON(t, r.OutputText())
		if b := oai.body(0); oai.paths()[0] != "/v1/responses" || !strings.Contains(b, `"format":{`) || !strings.Contains(b, `"type":"json_schema"`) || strings.Contains(b, "response_format") {
			t.Errorf("stream %v: the native target was sent %s; want text.format as given", stream, b)
		}
		if chat.calls() != 0 {
			t.Errorf("stream %v: the chat target was called", stream)
		}
	}
}

// Native target: two text turns; the second is given the first's question
// and answer as history.
func TestNativeResponsesTwoTurns(t *testing.T) {
	oai, chat := simUpstream(t), newUpstream(t, chatOK("chat"))
	_, gw := gateway(t, nil, nativeMatrix, oai, chat)
	c := newClient(gw.URL)
	first := respond(t, c, true, responses.ResponseNewParams{Model: "smart", Input: textInput("my name is Ada")})
	if !strings.HasPrefix(first.ID, "resp_") || first.OutputText() == "" {
		t.Fatalf("first turn: %s", first.RawJSON())
	}
	second := respond(t, c, false, responses.ResponseNewParams{Model: "smart", Input: textInput("what is my name?"), PreviousResponseID: openai.String(first.ID)})
	if second.OutputText() == "" || second.PreviousResponseID != first.ID {
		t.Fatalf("second turn: %s", second.RawJSON())
	}
	sent := oai.body(1)
	answer, _ := json.Marshal(first.OutputText())
	for _, want := range []string{"my name is Ada", string(answer[1 : len(answer)-1]), "what is my name?", `"role":"assistant"`} {
		if !strings.Contains(sent, want) {
			t.Errorf("the second turn was sent %s; want %s in it", sent, want)
		}
	}
	// An id the gateway does not hold is refused, not passed to the native
	// target, which would find any client's response under the gateway's
	// key.
	_, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", Input: textInput("and now?"), PreviousResponseID: openai.String("resp_0123abcd")})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "previous_response_not_found" || oai.calls() != 2 {
		t.Errorf("an unknown previous_response_id: %v (native target %d calls)", err, oai.calls())
	}
}

// preamble is what a native Responses stream sends before any content.
func preamble(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_0a\",\"object\":\"response\",\"created_at\":1,\"status\":\"in_progress\",\"model\":\"gpt-x\",\"output\":[]}}\n\n")
	io.WriteString(w, "event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\"sequence_number\":1,\"response\":{\"id\":\"resp_0a\",\"object\":\"response\",\"created_at\":1,\"status\":\"in_progress\",\"model\":\"gpt-x\",\"output\":[]}}\n\n")
	w.(http.Flusher).Flush()
}

// firstDelta is a native stream's events up to its first text delta.
func firstDelta(w http.ResponseWriter) {
	preamble(w)
	io.WriteString(w, "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":2,\"output_index\":0,\"item\":{\"id\":\"msg_0a\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n")
	io.WriteString(w, "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"sequence_number\":3,\"item_id\":\"msg_0a\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}}\n\n")
	io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":4,\"item_id\":\"msg_0a\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hel\"}\n\n")
	w.(http.Flusher).Flush()
}

// A native stream that opens (200, response.created) and then drops or
// sends an error event before any content is replaced unseen by the next
// target: one response.created, one numbering.
func TestNativeResponsesStreamCutBeforeCommit(t *testing.T) {
	for name, cut := range map[string]func(w http.ResponseWriter){
		"reset": func(w http.ResponseWriter) { preamble(w); abort(w) },
		"error event": func(w http.ResponseWriter) {
			preamble(w)
			io.WriteString(w, "event: error\ndata: {\"type\":\"error\",\"sequence_number\":2,\"code\":\"server_error\",\"message\":\"boom\",\"param\":null}\n\n")
		},
		"response.failed": func(w http.ResponseWriter) {
			preamble(w)
			io.WriteString(w, "event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_0a\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { cut(w) })
			chat := newUpstream(t, streamOf([]string{"from ", "chat"}, nil))
			_, gw := gateway(t, nil, nativeMatrix, oai, chat)
			s := readStream(t, newClient(gw.URL), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
			if s.err != nil || s.text != "from chat" || s.count("response.created") != 1 || s.count("response.completed") != 1 {
				t.Fatalf("%s (err %v, text %q); want the chat target's answer alone", s.joined(), s.err, s.text)
			}
			checkSequence(t, s)
			if oai.calls() == 0 || chat.calls() != 1 {
				t.Errorf("native %d, chat %d calls", oai.calls(), chat.calls())
			}
		})
	}
}

// A native stream that breaks after its first text delta (a reset, an
// error event) ends the client's with an error event: never a completion,
// and no second target is asked.
func TestNativeResponsesStreamCutAfterCommit(t *testing.T) {
	for name, cut := range map[string]func(w http.ResponseWriter){
		"reset": func(w http.ResponseWriter) { firstDelta(w); abort(w) },
		"ends early": func(w http.ResponseWriter) {
			firstDelta(w)
		},
	} {
		t.Run(name, func(t *testing.T) {
			oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { cut(w) })
			chat := newUpstream(t, streamOf([]string{"from ", "chat"}, nil))
			_, gw := gateway(t, nil, nativeMatrix, oai, chat)
			s := readStream(t, newClient(gw.URL), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
			if s.text != "Hel" || s.count("response.completed") != 0 || s.types[len(s.types)-1] != "error" {
				t.Fatalf("%s (err %v, text %q); want Hel, then an error event, no completion", s.joined(), s.err, s.text)
			}
			if chat.calls() != 0 || oai.calls() != 1 {
				t.Errorf("native %d, chat %d calls; want 1 and 0", oai.calls(), chat.calls())
			}
		})
	}
}

// A chat stream that opens (200, a role-only chunk) and then drops, or
// sends an error chunk, before any content is replaced unseen: the client
// reads one Responses stream, from the next target.
func TestChatTargetResponsesStreamCutBeforeCommit(t *testing.T) {
	for name, cut := range map[string]func(w http.ResponseWriter){
		"reset": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
			abort(w)
		},
		"error chunk": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
			io.WriteString(w, "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"code\":\"overloaded\"}}\n\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { cut(w) })
			s := newUpstream(t, streamOf([]string{"hello ", "world"}, nil))
			_, gw := gateway(t, nil, twoTargets, p, s)
			got := readStream(t, newClient(gw.URL), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
			if got.err != nil || got.text != "hello world" || got.count("response.created") != 1 || got.count("response.completed") != 1 {
				t.Fatalf("%s (err %v, text %q); want the second target's answer alone", got.joined(), got.err, got.text)
			}
			checkSequence(t, got)
			if p.calls() == 0 || s.calls() != 1 {
				t.Errorf("first %d, second %d calls", p.calls(), s.calls())
			}
		})
	}
}

// A native stream that stalls after its first text delta is cut by the
// idle watchdog (on the injected clock) and ends with an error event.
func TestNativeResponsesStallAfterCommit(t *testing.T) {
	clk := clocktest.New(time.Time{})
	stall := make(chan struct{})
	defer close(stall)
	oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		firstDelta(w)
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	})
	chat := newUpstream(t, streamOf([]string{"from ", "chat"}, nil))
	srv, gw := gateway(t, clk, nativeMatrix, oai, chat)
	c := newClient(gw.URL)
	st := c.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
	stopClock := make(chan struct{})
	defer close(stopClock)
	var s respStream
	for st.Next() {
		ev := st.Current()
		s.types = append(s.types, ev.Type)
		if ev.Type == "response.output_text.delta" {
			s.text += ev.Delta
			go advanceUntil(clk, 5*time.Second, stopClock)
		}
	}
	if s.text != "Hel" || s.count("response.completed") != 0 || s.types[len(s.types)-1] != "error" || chat.calls() != 0 {
		t.Fatalf("%s (err %v, text %q, chat calls %d); want Hel, then an error event, no completion, no second target", s.joined(), st.Err(), s.text, chat.calls())
	}
	for _, tg := range srv.Router().Targets() {
		if tot := tg.Breaker().Snapshot().Totals; tg.Name == "oai/sim-large" && tot.Failed != 1 {
			t.Errorf("the stall was not counted against the target: %+v", tot)
		}
	}
}

// A chat stream reset after its first content ends the client's
// Responses stream with response.failed, and no second target is asked.
func TestChatTargetResponsesStreamResetAfterCommit(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		io.WriteString(w, chunk(`{"content":"Hel"}`))
		abort(w)
	})
	s := newUpstream(t, streamOf([]string{"hello ", "world"}, nil))
	_, gw := gateway(t, nil, twoTargets, p, s)
	got := readStream(t, newClient(gw.URL), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
	if got.text != "Hel" || got.count("response.completed") != 0 || got.types[len(got.types)-1] != "response.failed" || s.calls() != 0 {
		t.Fatalf("%s (err %v, text %q, second target %d calls); want Hel, then response.failed", got.joined(), got.err, got.text, s.calls())
	}
	checkSequence(t, got)
}
