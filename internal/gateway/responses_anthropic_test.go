package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// The Responses API through the gateway to an Anthropic target (the
// ladder's first, an OpenAI one second): translated to chat at the door,
// to Messages by the adapter, and back.

// claudeEvents writes Anthropic stream events, flushing each.
func claudeEvents(w http.ResponseWriter, evs ...string) {
	for _, ev := range evs {
		name, _, _ := strings.Cut(strings.TrimPrefix(ev, `{"type":"`), `"`)
		io.WriteString(w, "event: "+name+"\ndata: "+ev+"\n\n")
		w.(http.Flusher).Flush()
	}
}

const (
	claudeStart     = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`
	claudeTextStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
)

// claudeToolOrText answers a Messages request with tools and no tool
// result with a tool_use of weather, else with text quoting the last
// tool result; streamed or not.
func claudeToolOrText(w http.ResponseWriter, r *http.Request, n int) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	streamed := strings.Contains(body, `"stream":true`)
	if !strings.Contains(body, `"tools"`) || strings.Contains(body, `"tool_result"`) {
		anthropicOK("the tool said -3C")(w, r, n)
		return
	}
	if streamed {
		w.Header().Set("Content-Type", "text/event-stream")
		claudeEvents(w, claudeStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Oslo\"}"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}`,
			`{"type":"message_stop"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Oslo"}}],`+
		`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":9}}`)
}

// A function-tool round trip through Claude: its tool_use is a
// function_call, and the function_call_output of the next turn reaches it
// as a tool_result after its own tool_use.
func TestAnthropicResponsesToolRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			claude := newUpstream(t, claudeToolOrText)
			oai := newUpstream(t, chatOK("openai"))
			_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
			c := newClient(gw.URL)
			first := respond(t, c, stream, responses.ResponseNewParams{Model: "smart", Input: textInput("weather in Oslo?"),
				Tools: []responses.ToolUnionParam{weatherTool()}})
			if len(first.Output) != 1 || first.Output[0].Type != "function_call" {
				t.Fatalf("first turn: %s", first.RawJSON())
			}
			call := first.Output[0].AsFunctionCall()
			if call.Name != "weather" || call.CallID != "toolu_1" || call.Arguments != `{"city":"Oslo"}` {
				t.Fatalf("the call: %+v", call)
			}
			second := respond(t, c, stream, toolOutput(first.ID, call.CallID, "-3C and snow"))
			if second.OutputText() != "the tool said -3C" {
				t.Errorf("second turn: %s", second.RawJSON())
			}
			sent := claude.body(1)
			for _, want := range []string{"weather in Oslo?", `"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Oslo"}`,
				`"type":"tool_result","tool_use_id":"toolu_1"`, "-3C and snow", `"input_schema"`} {
				if !strings.Contains(sent, want) {
					t.Errorf("Claude was sent %s; want %s in it", sent, want)
				}
			}
			if oai.calls() != 0 {
				t.Errorf("the OpenAI target was called %d times", oai.calls())
			}
		})
	}
}

// Structured output cannot be translated to Messages: the walk passes
// Claude over, naming why, and the OpenAI target serves it as
// response_format.
func TestAnthropicResponsesStructuredOutputGoesToTheNext(t *testing.T) {
	for _, stream := range []bool{false, true} {
		claude := newUpstream(t, anthropicOK("claude"))
		oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if r.Header.Get("Accept") == "text/event-stream" {
				streamOf([]string{`{"city":"Oslo",`, `"temp":-3}`}, nil)(w, r, n)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"city\":\"Oslo\",\"temp\":-3}"},"finish_reason":"stop"}]}`)
		})
		_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
		c := newClient(gw.URL)
		var resp *http.Response
		p := responses.ResponseNewParams{Model: "smart", Input: textInput("weather?"), Text: weatherSchema()}
		var text string
		if stream {
			s := readStream(t, c, p, option.WithResponseInto(&resp))
			if s.err != nil || s.count("response.completed") != 1 {
				t.Fatalf("%s: %v", s.joined(), s.err)
			}
			text = s.final.OutputText()
		} else {
			r, err := c.Responses.New(t.Context(), p, option.WithResponseInto(&resp))
			if err != nil {
				t.Fatal(err)
			}
			text = r.OutputText()
		}
		checkWeatherJSON(t, text)
		if tried := resp.Header.Get("X-Fusebox-Tried"); !strings.Contains(tried, "claude/claude-opus-4-7: cannot serve response_format") ||
			resp.Header.Get("X-Fusebox-Target") != "openai/gpt-4.1" {
			t.Errorf("stream %v: served by %q, tried %q", stream, resp.Header.Get("X-Fusebox-Target"), tried)
		}
		if claude.calls() != 0 || !strings.Contains(oai.body(0), `"response_format":{"type":"json_schema"`) {
			t.Errorf("stream %v: Claude %d calls; OpenAI sent %s", stream, claude.calls(), oai.body(0))
		}
	}
}

// Two text turns through Claude: the second carries the first's question
// and answer as turns.
func TestAnthropicResponsesTwoTurns(t *testing.T) {
	claude := newUpstream(t, anthropicOK("hello Ada"))
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	first := respond(t, c, true, responses.ResponseNewParams{Model: "smart", Input: textInput("my name is Ada")})
	second := respond(t, c, false, responses.ResponseNewParams{Model: "smart", Input: textInput("what is my name?"), PreviousResponseID: openai.String(first.ID)})
	if second.OutputText() != "hello Ada" || second.PreviousResponseID != first.ID {
		t.Fatalf("second turn: %s", second.RawJSON())
	}
	want := `"messages":[{"role":"user","content":[{"type":"text","text":"my name is Ada"}]},{"role":"assistant","content":[{"type":"text","text":"hello Ada"}]},{"role":"user","content":[{"type":"text","text":"what is my name?"}]}]`
	if sent := claude.body(1); !strings.Contains(sent, want) {
		t.Errorf("Claude was sent %s; want %s", sent, want)
	}
}

// A Claude stream that opens (200, message_start) and then drops or sends
// an error event before any content is replaced unseen by the OpenAI
// target.
func TestAnthropicResponsesStreamCutBeforeCommit(t *testing.T) {
	for name, cut := range map[string]func(w http.ResponseWriter){
		"reset": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			claudeEvents(w, claudeStart, claudeTextStart)
			abort(w)
		},
		"error event": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			claudeEvents(w, claudeStart, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { cut(w) })
			oai := newUpstream(t, streamOf([]string{"from ", "openai"}, nil))
			_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
			s := readStream(t, newClient(gw.URL), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
			if s.err != nil || s.text != "from openai" || s.count("response.created") != 1 || s.count("response.completed") != 1 {
				t.Fatalf("%s (err %v, text %q); want the OpenAI target's answer alone", s.joined(), s.err, s.text)
			}
			checkSequence(t, s)
			if claude.calls() == 0 || oai.calls() != 1 {
				t.Errorf("claude %d, openai %d calls", claude.calls(), oai.calls())
			}
		})
	}
}

// A Claude stream that breaks after its first text delta ends the
// client's with response.failed, never a completion, and the OpenAI
// target is not asked.
func TestAnthropicResponsesStreamCutAfterCommit(t *testing.T) {
	delta := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`
	for name, cut := range map[string]func(w http.ResponseWriter){
		"reset": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			claudeEvents(w, claudeStart, claudeTextStart, delta)
			abort(w)
		},
		"error event": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			claudeEvents(w, claudeStart, claudeTextStart, delta, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		},
		"ends early": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			claudeEvents(w, claudeStart, claudeTextStart, delta)
		},
	} {
		t.Run(name, func(t *testing.T) {
			claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) { cut(w) })
			oai := newUpstream(t, streamOf([]string{"from ", "openai"}, nil))
			_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
			s := readStream(t, newClient(gw.URL), responses.ResponseNewParams{Model: "smart", Input: textInput("hi")})
			if s.text != "Hel" || s.count("response.completed") != 0 || s.types[len(s.types)-1] != "response.failed" {
				t.Fatalf("%s (err %v, text %q); want Hel, then response.failed, no completion", s.joined(), s.err, s.text)
			}
			if s.final == nil || s.final.Status != "failed" || s.final.Error.Code == "" {
				t.Errorf("the failed response: %+v", s.final)
			}
			checkSequence(t, s)
			if oai.calls() != 0 || claude.calls() != 1 {
				t.Errorf("claude %d, openai %d calls; want 1 and 0", claude.calls(), oai.calls())
			}
		})
	}
}

// reasoning.effort reaches Claude as extended thinking, through the
// Responses translation and through chat's reasoning_effort alike.
func TestReasoningEffortReachesClaudeAsThinking(t *testing.T) {
	claude := newUpstream(t, anthropicOK("thought"))
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	r, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", Input: textInput("think"),
		Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortHigh}, MaxOutputTokens: openai.Int(20000)})
	if err != nil || r.OutputText() != "thought" || r.Reasoning.Effort != "high" {
		t.Fatalf("%v %v", r, err)
	}
	if sent := claude.body(0); !strings.Contains(sent, `"thinking":{"type":"enabled","budget_tokens":8192}`) || !strings.Contains(sent, `"max_tokens":20000`) {
		t.Errorf("Claude was sent %s; want thinking with the high budget under the client's max_tokens", sent)
	}
	if _, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "smart", ReasoningEffort: shared.ReasoningEffortLow,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("think")}}); err != nil {
		t.Fatal(err)
	}
	if sent := claude.body(1); !strings.Contains(sent, `"thinking":{"type":"enabled","budget_tokens":2048}`) {
		t.Errorf("Claude was sent %s; want thinking with the low budget", sent)
	}
	if oai.calls() != 0 {
		t.Errorf("the OpenAI target was called")
	}
	// An effort Claude has no budget for is the next target's to judge.
	resp, err := http.Post(gw.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"smart","input":"think","reasoning":{"effort":"turbo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Fusebox-Target") != "openai/gpt-4.1" || !strings.Contains(resp.Header.Get("X-Fusebox-Tried"), "cannot serve reasoning_effort") || claude.calls() != 2 {
		t.Errorf("an unknown effort: %d from %q, tried %q, Claude %d calls", resp.StatusCode, resp.Header.Get("X-Fusebox-Target"), resp.Header.Get("X-Fusebox-Tried"), claude.calls())
	}
}
