package sim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fuseboxhq/fusebox/internal/sse"
)

func responsesParams(input string) responses.ResponseNewParams {
	return responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(input)}}
}

func weatherTool(t *testing.T) responses.ToolUnionParam {
	return responses.ToolParamOfFunction("get_weather", params(t, weatherSchema), true)
}

func TestResponsesWithOpenAIClient(t *testing.T) {
	s, ts := start(t, Config{Seed: 3, Output: Output{Tokens: 9}})
	p := responsesParams("0123456789abcdef")   // 4 tokens
	p.Instructions = openai.String("be brief") // a system message: 3 + 2
	got, err := sdk(ts).Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "completed" || !strings.HasPrefix(got.ID, "resp_") || len(got.Output) != 1 || got.Output[0].Type != "message" {
		t.Fatalf("got %s", got.RawJSON())
	}
	if text := got.OutputText(); len(strings.Fields(text)) != 9 || !strings.HasSuffix(text, ".") {
		t.Errorf("output text %q; want 9 words", text)
	}
	if u := got.Usage; u.InputTokens != 15 || u.OutputTokens != 9 || u.TotalTokens != 24 {
		t.Errorf("usage %+v; want 3 + (3+2) + (3+4) = 15 in, 9 out", u)
	}
	if st := s.Stats(); st.APIs["responses"] != 1 || st.Outcomes[OutcomeOK] != 1 || st.BilledOutputTokens != 9 {
		t.Errorf("stats %+v", st)
	}
}

// A function call, then its output sent back: the answer quotes it.
func TestResponsesFunctionCall(t *testing.T) {
	_, ts := start(t, Config{Seed: 5})
	c := sdk(ts)
	p := responsesParams("weather in Paris?")
	p.Tools = []responses.ToolUnionParam{weatherTool(t)}
	got, err := c.Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Output) != 1 || got.Output[0].Type != "function_call" || got.OutputText() != "" {
		t.Fatalf("got %s; want one function_call item", got.RawJSON())
	}
	fc := got.Output[0].AsFunctionCall()
	if fc.Name != "get_weather" || !strings.HasPrefix(fc.CallID, "call_") || !strings.HasPrefix(fc.ID, "fc_") || fc.Status != "completed" {
		t.Errorf("function call %+v", fc)
	}
	checkArgs(t, fc.Arguments, weatherSchema)

	out := responses.ResponseInputItemParamOfFunctionCallOutput("sunny, 21 C")
	out.OfFunctionCallOutput.CallID = param.NewOpt(fc.CallID)
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("weather in Paris?", responses.EasyInputMessageRoleUser),
		{OfFunctionCall: ptrTo(fc.ToParam())},
		out,
	}}
	got, err = c.Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if text := got.OutputText(); !strings.HasPrefix(text, "Tool result: sunny, 21 C. ") {
		t.Errorf("after the output: %q; want text quoting it", text)
	}
}

func ptrTo[T any](v T) *T { return &v }

// eventTypes collects a Responses stream through the official client.
func eventTypes(t *testing.T, stream interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
	Close() error
}) ([]responses.ResponseStreamEventUnion, []string) {
	t.Helper()
	var evs []responses.ResponseStreamEventUnion
	var types []string
	for stream.Next() {
		ev := stream.Current()
		evs = append(evs, ev)
		types = append(types, ev.Type)
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	for i, ev := range evs {
		if ev.SequenceNumber != int64(i) {
			t.Fatalf("event %d (%s) has sequence_number %d", i, ev.Type, ev.SequenceNumber)
		}
	}
	return evs, types
}

// compact squeezes runs of a repeated event type into "type*".
func compact(types []string) string {
	var out []string
	for i, typ := range types {
		if i > 0 && types[i-1] == typ {
			out[len(out)-1] = typ + "*"
			continue
		}
		out = append(out, typ)
	}
	return strings.Join(out, " ")
}

func TestResponsesStreamWithOpenAIClient(t *testing.T) {
	_, ts := start(t, Config{Seed: 7, Output: Output{Tokens: 10, ChunkTokens: 3}})
	evs, types := eventTypes(t, sdk(ts).Responses.NewStreaming(context.Background(), responsesParams("hi")))
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta* response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := compact(types); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	var deltas strings.Builder
	for _, ev := range evs {
		if ev.Type == "response.output_text.delta" {
			deltas.WriteString(ev.Delta)
		}
	}
	if n := slices.Index(types, "response.output_text.done"); evs[n].Text != deltas.String() || n != 8 {
		t.Errorf("done text %q after %d events; deltas %q (want 4 of them)", evs[n].Text, n, deltas.String())
	}
	final := evs[len(evs)-1].Response
	_, ts2 := start(t, Config{Seed: 7, Output: Output{Tokens: 10, ChunkTokens: 3}})
	plain, err := sdk(ts2).Responses.New(context.Background(), responsesParams("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if final.OutputText() != deltas.String() || plain.OutputText() != final.OutputText() || final.Usage.OutputTokens != 10 {
		t.Errorf("completed %q (usage %+v), not streamed %q; want the deltas' text", final.OutputText(), final.Usage, plain.OutputText())
	}
}

func TestResponsesStreamFunctionCall(t *testing.T) {
	_, ts := start(t, Config{Seed: 2, Output: Output{ChunkTokens: 2}})
	p := responsesParams("weather?")
	p.Tools = []responses.ToolUnionParam{weatherTool(t)}
	p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_weather"}}
	evs, types := eventTypes(t, sdk(ts).Responses.NewStreaming(context.Background(), p))
	want := "response.created response.in_progress response.output_item.added response.function_call_arguments.delta* " +
		"response.function_call_arguments.done response.output_item.done response.completed"
	if got := compact(types); got != want {
		t.Fatalf("events %s\nwant %s", got, want)
	}
	var args strings.Builder
	for _, ev := range evs {
		if ev.Type == "response.function_call_arguments.delta" {
			args.WriteString(ev.Delta)
		}
	}
	done := evs[len(evs)-3]
	added := evs[2].Item.AsFunctionCall()
	if done.Arguments != args.String() || added.Name != "get_weather" || added.Arguments != "" || added.Status != "in_progress" {
		t.Errorf("done %q, deltas %q, added %+v", done.Arguments, args.String(), added)
	}
	checkArgs(t, args.String(), weatherSchema)
	if fc := evs[len(evs)-1].Response.Output[0].AsFunctionCall(); fc.Arguments != args.String() || fc.CallID != added.CallID {
		t.Errorf("completed output %+v", fc)
	}
}

func TestResponsesMaxOutputTokensAndFormat(t *testing.T) {
	s, ts := start(t, Config{Seed: 1, Output: Output{Tokens: 40}})
	p := responsesParams("hi")
	p.MaxOutputTokens = openai.Int(16)
	got, err := sdk(ts).Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "incomplete" || got.IncompleteDetails.Reason != "max_output_tokens" || got.Usage.OutputTokens != 16 {
		t.Errorf("got status %s, %+v, usage %+v; want incomplete at 16 tokens", got.Status, got.IncompleteDetails, got.Usage)
	}
	_, types := eventTypes(t, sdk(ts).Responses.NewStreaming(context.Background(), p))
	if types[len(types)-1] != "response.incomplete" {
		t.Errorf("stream ends with %s, want response.incomplete", types[len(types)-1])
	}

	p = responsesParams("a recipe")
	p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
		OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "recipe", Schema: params(t, recipeSchema), Strict: openai.Bool(true)}}}
	got, err = sdk(ts).Responses.New(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkArgs(t, got.OutputText(), recipeSchema)
	if !strings.Contains(got.RawJSON(), `"name":"recipe"`) {
		t.Errorf("response %s does not echo its text format", got.RawJSON())
	}
	if st := s.Stats(); st.APIs["responses"] != 3 {
		t.Errorf("stats %+v", st)
	}
}

func TestResponsesBadRequests(t *testing.T) {
	s, _ := New(Config{Models: []string{"m"}})
	for i, tc := range []struct {
		body        string
		status      int
		param, code string
	}{
		{`{"model":"m"}`, 400, "input", "missing_required_parameter"},
		{`{"model":"m","input":[]}`, 400, "input", "empty_array"},
		{`{"model":"m","input":{"role":"user"}}`, 400, "input", "invalid_type"},
		{`{"input":"hi"}`, 400, "model", ""},
		{`{"model":"other","input":"hi"}`, 404, "model", "model_not_found"},
		{`{"model":"m","input":"hi","max_output_tokens":1}`, 400, "max_output_tokens", "integer_below_min_value"},
		{`{"model":"m","input":"hi","tools":[{"type":"function","name":"a b"}]}`, 400, "tools[0].name", "invalid_value"},
		{`{"model":"m","input":"hi","tools":[{"type":"web_search"}]}`, 400, "tools[0].type", "invalid_value"},
		{`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":7}]}`, 400, "tools[0].parameters", "invalid_function_parameters"},
		{`{"model":"m","input":"hi","tool_choice":{"type":"function","name":"g"},"tools":[{"type":"function","name":"f"}]}`, 400, "tool_choice", "invalid_value"},
		{`{"model":"m","input":"hi","text":{"format":{"type":"yaml"}}}`, 400, "text.format.type", "invalid_value"},
		{`{"model":"m","input":"hi","text":{"format":{"type":"json_schema","schema":{}}}}`, 400, "text.format.name", "missing_required_parameter"},
	} {
		rec := serve(s, "POST", "/v1/responses", tc.body)
		var e struct {
			Error struct {
				Type, Param string
				Code        *string
			}
		}
		json.Unmarshal(rec.Body.Bytes(), &e)
		code := ""
		if e.Error.Code != nil {
			code = *e.Error.Code
		}
		if rec.Code != tc.status || e.Error.Type != "invalid_request_error" || e.Error.Param != tc.param || code != tc.code {
			t.Errorf("case %d: %d %s; want %d, param %s, code %s", i, rec.Code, rec.Body, tc.status, tc.param, tc.code)
		}
	}
	if st := s.Stats(); st.Outcomes[OutcomeBadRequest] != 12 || st.APIs["responses"] != 12 {
		t.Errorf("stats %+v", st)
	}
}

// Faults reach the Responses API as they reach chat completions.
func TestResponsesFaults(t *testing.T) {
	body := `{"model":"m","input":"hi","stream":true}`
	t.Run("storm and throttle", func(t *testing.T) {
		_, ts := start(t, Config{Faults: []Fault{{Kind: ErrorStorm, Status: 502}}})
		_, err := sdk(ts).Responses.New(context.Background(), responsesParams("hi"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || apiErr.Type != "server_error" {
			t.Errorf("storm: %v", err)
		}
		_, ts = start(t, Config{Faults: []Fault{{Kind: Throttle, RetryAfter: 4 * time.Second}}})
		_, err = sdk(ts).Responses.New(context.Background(), responsesParams("hi"))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Response.Header.Get("Retry-After") != "4" {
			t.Errorf("throttle: %v", err)
		}
	})
	t.Run("hang", func(t *testing.T) {
		s, ts := start(t, Config{Faults: []Fault{{Kind: Hang}}})
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() {
			resp, err := post(ctx, ts, "/v1/responses", body)
			if err == nil {
				resp.Body.Close()
				err = errors.New("got " + resp.Status)
			}
			errc <- err
		}()
		waitFor(t, "the call", func() bool { return s.Stats().Calls == 1 })
		cancel(context.DeadlineExceeded)
		if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the client's deadline", err)
		}
		waitFor(t, "the hang counted", func() bool { return s.Stats().Outcomes[OutcomeHang] == 1 })
	})
	t.Run("stall", func(t *testing.T) {
		s, ts := start(t, Config{Output: Output{Tokens: 30}, Faults: []Fault{{Kind: Stall, AfterChunks: 2}}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp, err := post(ctx, ts, "/v1/responses", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		evs := eventChan(resp.Body)
		for i := range 6 { // created, in_progress, item, part, two deltas
			if ev := <-evs; ev.err != nil || (i >= 4) != strings.Contains(ev.data, `"response.output_text.delta"`) {
				t.Fatalf("event %d: %q, %v", i, ev.data, ev.err)
			}
		}
		select {
		case ev := <-evs:
			t.Fatalf("after 2 deltas got %q, %v; want nothing", ev.data, ev.err)
		case <-time.After(5 * time.Millisecond):
		}
		cancel()
		waitFor(t, "the stall counted", func() bool { return s.Stats().Outcomes[OutcomeStall] == 1 })
	})
	t.Run("reset", func(t *testing.T) {
		s, ts := start(t, Config{Output: Output{Tokens: 30}, Faults: []Fault{{Kind: Reset, AfterChunks: 1}}})
		resp, err := post(context.Background(), ts, "/v1/responses", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := events(t, resp.Body)
		if err == nil || len(data) != 5 || strings.Contains(strings.Join(data, ""), "response.completed") {
			t.Errorf("%d events, %v; want 4 then a delta, then a cut connection", len(data), err)
		}
		_, err = post(context.Background(), ts, "/v1/responses", `{"model":"m","input":"hi"}`)
		if err == nil || !(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)) {
			t.Errorf("non-stream reset: %v", err)
		}
		waitFor(t, "2 resets", func() bool { return s.Stats().Outcomes[OutcomeReset] == 2 })
	})
	t.Run("stream error", func(t *testing.T) {
		s, ts := start(t, Config{Output: Output{Tokens: 30}, Faults: []Fault{{Kind: StreamError, AfterChunks: 1, Message: "boom"}}})
		evs, types := eventTypes(t, sdk(ts).Responses.NewStreaming(context.Background(), responsesParams("hi")))
		last := evs[len(evs)-1]
		if types[len(types)-1] != "response.failed" || last.Response.Status != "failed" ||
			last.Response.Error.Code != "server_error" || last.Response.Error.Message != "boom" || slices.Contains(types, "response.completed") {
			t.Errorf("events %v, last %s; want response.failed saying boom", types, last.RawJSON())
		}
		if st := s.Stats(); st.Outcomes[OutcomeStreamError] != 1 || st.BilledOutputTokens != 3 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("no done", func(t *testing.T) {
		s, ts := start(t, Config{Output: Output{Tokens: 10}, Faults: []Fault{{Kind: NoDone}}})
		_, types := eventTypes(t, sdk(ts).Responses.NewStreaming(context.Background(), responsesParams("hi")))
		if types[len(types)-1] != "response.output_item.done" || slices.Contains(types, "response.completed") {
			t.Errorf("events %v; want every item done, and no response.completed", types)
		}
		if st := s.Stats(); st.Outcomes[OutcomeNoDone] != 1 || st.BilledOutputTokens != 10 {
			t.Errorf("stats %+v", st)
		}
		if rec := serve(s, "POST", "/v1/responses", `{"model":"m","input":"hi"}`); rec.Code != 200 {
			t.Errorf("a non-stream call: %d", rec.Code)
		}
	})
}

// A Responses call takes the chat timing: Median for a whole answer, on
// the fake clock.
func TestResponsesLatency(t *testing.T) {
	fake := newFake()
	s, err := New(Config{Clock: fake, Latency: Latency{Median: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { done <- serve(s, "POST", "/v1/responses", `{"model":"m","input":"hi"}`).Code }()
	fake.WaitForTimers(1)
	fake.Advance(299 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("answered before the median")
	default:
	}
	fake.Advance(time.Millisecond)
	if code := <-done; code != 200 {
		t.Errorf("status %d", code)
	}
}

func TestResponsesDeterminism(t *testing.T) {
	run := func(seed uint64) string {
		s, _ := New(Config{Seed: seed, Clock: newFake(), Faults: []Fault{{Kind: StreamError, Fraction: 0.5, AfterChunks: 2}}})
		var out strings.Builder
		for i := range 8 {
			body := `{"model":"m","input":"hi","tools":[{"type":"function","name":"lookup","parameters":` + lookupSchema + `}]}`
			if i%2 == 1 {
				body = `{"model":"m","input":"hi","stream":true}`
			}
			rec := serve(s, "POST", "/v1/responses", body)
			out.WriteString(rec.Body.String())
		}
		return out.String()
	}
	if a, b := run(3), run(3); a != b {
		t.Errorf("seed 3 twice:\n%s\n%s", a, b)
	}
	if run(3) == run(4) {
		t.Error("seeds 3 and 4 gave the same answers")
	}
	// The raw stream names every event after its type.
	s, _ := New(Config{})
	r := sse.NewReader(strings.NewReader(serve(s, "POST", "/v1/responses", `{"model":"m","input":"hi","stream":true}`).Body.String()), sse.Options{})
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		var h eventHead
		if json.Unmarshal(ev.Data, &h); h.Type != ev.Name {
			t.Errorf("event %s carries type %s", ev.Name, h.Type)
		}
	}
}
