package gateway

import (
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

// toolOrText answers a chat request with a call of its first tool, or,
// once the conversation has a tool result, with text naming it; streamed
// or not.
func toolOrText(w http.ResponseWriter, r *http.Request, n int) {
	b, _ := io.ReadAll(r.Body)
	body := string(b)
	streamed := strings.Contains(body, `"stream":true`)
	if strings.Contains(body, `"tools"`) && !strings.Contains(body, `"role":"tool"`) {
		if streamed {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":""}}]}`))
			io.WriteString(w, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`))
			io.WriteString(w, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}`))
			io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
			io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"total_tokens\":13}}\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,`+
			`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}],`+
			`"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`)
		return
	}
	if streamed {
		streamOf([]string{"it is ", "-3C"}, nil)(w, r, n)
		return
	}
	chatOK("the tool: -3C")(w, r, n)
}

func weatherTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:       "weather",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	}}
}

// The Responses API through the gateway to a chat target, with openai-go:
// text, a function-tool round trip over previous_response_id, streamed and
// not, and the stored response read back; only its own client finds it.
func TestResponsesAPIThroughAChatTarget(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			up := newUpstream(t, toolOrText)
			_, gw := gateway(t, nil, `
clients:
  - {name: a, key: key-a}
  - {name: b, key: key-b}
providers:
  up: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: smart
    targets: [{provider: up, model: m}]
`, up)
			c := newClient(gw.URL, option.WithAPIKey("key-a"))
			first := respond(t, c, stream, responses.ResponseNewParams{
				Model: "smart", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather in Oslo?")},
				Tools: []responses.ToolUnionParam{weatherTool()},
			})
			if len(first.Output) != 1 || first.Output[0].Type != "function_call" {
				t.Fatalf("first turn: %s", first.RawJSON())
			}
			call := first.Output[0].AsFunctionCall()
			if call.Name != "weather" || call.Arguments != `{"city":"Oslo"}` || call.CallID != "call_1" {
				t.Fatalf("the call: %+v", call)
			}
			second := respond(t, c, stream, responses.ResponseNewParams{
				Model: "smart", PreviousResponseID: openai.String(first.ID), Tools: []responses.ToolUnionParam{weatherTool()},
				Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{{
					OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
						CallID: openai.String(call.CallID), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("-3C")},
					}}}},
			})
			if !strings.Contains(second.OutputText(), "-3C") || (!stream && second.Usage.TotalTokens == 0) { // the test stream has no usage chunk
				t.Errorf("second turn: %s", second.RawJSON())
			}
			if sent := up.bodies[1]; !strings.Contains(sent, `"role":"tool"`) || !strings.Contains(sent, `"call_1"`) || !strings.Contains(sent, "weather in Oslo?") {
				t.Errorf("the target was not sent the whole conversation: %s", sent)
			}
			got, err := c.Responses.Get(t.Context(), second.ID, responses.ResponseGetParams{})
			if err != nil || got.OutputText() != second.OutputText() {
				t.Fatalf("Get: %v %v", got, err)
			}
			other := newClient(gw.URL, option.WithAPIKey("key-b"))
			if _, err := other.Responses.Get(t.Context(), second.ID, responses.ResponseGetParams{}); err == nil || !strings.Contains(err.Error(), "404") {
				t.Errorf("another client read the response: %v", err)
			}
			// Another client cannot continue the conversation either: the
			// earlier turn is unknown to it.
			_, err = other.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", PreviousResponseID: openai.String(first.ID),
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("what did I ask?")}})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "previous_response_not_found" {
				t.Errorf("another client's previous_response_id: %v", err)
			}
			if err := c.Responses.Delete(t.Context(), second.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Responses.Get(t.Context(), second.ID, responses.ResponseGetParams{}); err == nil {
				t.Error("found after delete")
			}
		})
	}
}

// respond sends params, streamed or not, and returns the final response.
func respond(t *testing.T, c openai.Client, stream bool, params responses.ResponseNewParams) *responses.Response {
	t.Helper()
	if !stream {
		r, err := c.Responses.New(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	s := c.Responses.NewStreaming(t.Context(), params)
	var final *responses.Response
	for s.Next() {
		if ev := s.Current(); ev.Type == "response.completed" {
			r := ev.AsResponseCompleted().Response
			final = &r
		}
	}
	if s.Err() != nil || final == nil {
		t.Fatalf("stream: %v, completed %v", s.Err(), final != nil)
	}
	return final
}

// A stream that fails before its first content is replaced unseen by the
// next target; one that stalls after it is cut by the idle watchdog (on
// the injected clock) and ends with response.failed, never a completion.
// (responses_matrix_test.go cuts real streams before and after commit.)
func TestResponsesStreamCommitPoint(t *testing.T) {
	stall := make(chan struct{})
	defer close(stall)
	p := newUpstream(t, status(http.StatusServiceUnavailable, "overloaded_error"))
	s := newUpstream(t, streamOf([]string{"hello ", "world"}, nil))
	_, gw := gateway(t, nil, twoTargets, p, s)
	c := newClient(gw.URL)
	r := respond(t, c, true, responses.ResponseNewParams{Model: "smart", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	if r.OutputText() != "hello world" {
		t.Fatalf("failed over before content: %q", r.OutputText())
	}

	p.set(streamOf([]string{"cut ", "here"}, stall)) // content, then nothing
	clk := clocktest.New(time.Time{})
	_, gw2 := gateway(t, clk, twoTargets, p, s)
	c2 := newClient(gw2.URL)
	stopClock := make(chan struct{})
	defer close(stopClock)
	st := c2.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: "smart", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	var types []string
	for st.Next() {
		typ := st.Current().Type
		if typ == "response.output_text.delta" && !strings.Contains(strings.Join(types, " "), typ) {
			go advanceUntil(clk, 5*time.Second, stopClock) // the idle watchdog's time passes
		}
		types = append(types, typ)
	}
	joined := strings.Join(types, " ")
	if !strings.Contains(joined, "response.output_text.delta") || !strings.HasSuffix(joined, "response.failed") || strings.Contains(joined, "response.completed") || s.calls() != 1 {
		t.Errorf("a stream broken after content: %s (err %v, second target %d calls); want deltas, then response.failed, no completion", joined, st.Err(), s.calls())
	}
}

// What cannot be translated is refused with a 400 naming it.
func TestResponsesRefusesWhatChatCannotServe(t *testing.T) {
	up := newUpstream(t, chatOK("up"))
	_, gw := gateway(t, nil, twoTargets, up, up)
	c := newClient(gw.URL)
	_, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("q")},
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "tools[0].type" {
		t.Errorf("a built-in tool: %v", err)
	}
	if up.calls() != 0 {
		t.Error("a refused request reached the upstream")
	}
	for _, body := range []string{`{"model":"smart","input":"a","input":"b","\u006dodel":"x"}`, `[1,2]`, `{"model":"smart","input":{"nested":` + strings.Repeat("[", 100) + `}}`} {
		resp, err := http.Post(gw.URL+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"type":"invalid_request_error"`) {
			t.Errorf("%.60s: %d %s", body, resp.StatusCode, b)
		}
	}
}

// The Responses API to an Anthropic target: translated to chat at the
// door, to Messages by the adapter, and back.
func TestResponsesAPIToAnAnthropicTarget(t *testing.T) {
	claude := newUpstream(t, anthropicOK("hello from claude"))
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	for _, stream := range []bool{false, true} {
		r := respond(t, c, stream, responses.ResponseNewParams{Model: "smart", Instructions: openai.String("Be brief."),
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		if r.OutputText() != "hello from claude" || r.Usage.OutputTokens != 3 {
			t.Errorf("stream %v: %s", stream, r.RawJSON())
		}
	}
	if sent := claude.bodies[0]; !strings.Contains(sent, `"system"`) || !strings.Contains(sent, "Be brief.") {
		t.Errorf("Anthropic was sent %s; want the instructions as its system prompt", sent)
	}
	if oai.calls() != 0 {
		t.Error("the OpenAI target was called")
	}
}

// An Idempotency-Key resent on the Responses API replays the response
// byte for byte, stream or not, with one upstream call; a target whose
// stream turns to garbage after its first content ends the client's with
// response.failed, never a completion.
func TestResponsesIdempotentReplayAndGarbageAfterCommit(t *testing.T) {
	up := newUpstream(t, counting)
	_, gw := gateway(t, nil, twoTargets, up, up)
	send := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", gw.URL+"/v1/responses", strings.NewReader(body))
		req.Header.Set("Idempotency-Key", "k-"+fmt.Sprint(len(body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, body := range []string{`{"model":"smart","input":"hi"}`, `{"model":"smart","input":"hi","stream":true}`} {
		c1, b1 := send(body)
		c2, b2 := send(body)
		if c1 != 200 || c2 != 200 || b1 != b2 || !strings.Contains(b1, "resp_") {
			t.Errorf("%s: %d %d; replay equal %v\n%s", body, c1, c2, b1 == b2, b1)
		}
	}
	if n := up.calls(); n != 2 {
		t.Errorf("%d upstream calls; want one per key", n)
	}

	garbage := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":"half an answer"}`))
		io.WriteString(w, "data: {not json at all\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})
	_, gw2 := gateway(t, nil, twoTargets, garbage, garbage)
	c := newClient(gw2.URL)
	st := c.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: "smart", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	var types []string
	for st.Next() {
		types = append(types, st.Current().Type)
	}
	joined := strings.Join(types, " ")
	if strings.Contains(joined, "response.completed") || !strings.Contains(joined, "response.failed") {
		t.Errorf("garbage after commit: %s (err %v); want response.failed and no completion", joined, st.Err())
	}
}
