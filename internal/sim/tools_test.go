package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

// weatherSchema is the parameters schema of the tests' get_weather tool.
const weatherSchema = `{"type":"object","properties":{
	"city":{"type":"string","description":"the city"},
	"unit":{"type":"string","enum":["celsius","fahrenheit"]},
	"days":{"type":"integer","minimum":1,"maximum":7},
	"detail":{"type":"object","properties":{"hourly":{"type":"boolean"},"fields":{"type":"array","items":{"type":"string"}}},"required":["hourly","fields"]}},
	"required":["city","unit","detail"],"additionalProperties":false}`

// lookupSchema is the parameters schema of the tests' lookup tool.
const lookupSchema = `{"type":"object","properties":{"query":{"type":"string","minLength":3}},"required":["query"]}`

// toolsJSON is the chat tools array with get_weather and lookup.
const toolsJSON = `[{"type":"function","function":{"name":"get_weather","parameters":` + weatherSchema + `}},` +
	`{"type":"function","function":{"name":"lookup","parameters":` + lookupSchema + `}}]`

func params(t *testing.T, schema string) shared.FunctionParameters {
	t.Helper()
	var p shared.FunctionParameters
	if err := json.Unmarshal([]byte(schema), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkArgs fails unless args is a JSON object valid against schema.
func checkArgs(t *testing.T, args, schema string) {
	t.Helper()
	if err, supported := validate([]byte(args), mustSchema(t, schema)); err != nil || !supported || !strings.HasPrefix(args, "{") {
		t.Errorf("arguments %s: %v (supported %v); want an object valid against %s", args, err, supported, schema)
	}
}

// chatWith returns a chat completion body with the extra fields (JSON,
// without braces) and messages.
func chatWith(extra string, messages ...string) string {
	if len(messages) == 0 {
		messages = []string{`{"role":"user","content":"What is the weather in Paris?"}`}
	}
	if extra != "" {
		extra = "," + extra
	}
	return `{"model":"m","messages":[` + strings.Join(messages, ",") + `]` + extra + `}`
}

// completionOf decodes a non-streamed answer.
func completionOf(t *testing.T, body []byte) completion {
	t.Helper()
	var c completion
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return c
}

// A tool call through the official client, then its result sent back: the
// second answer is text that quotes the result.
func TestToolCallWithOpenAIClient(t *testing.T) {
	s, ts := start(t, Config{Seed: 1})
	c := sdk(ts)
	req := openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: params(t, weatherSchema)})},
	}
	got, err := c.Chat.Completions.New(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ch := got.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || !strings.Contains(got.RawJSON(), `"content":null`) {
		t.Fatalf("got %s; want one tool call, content null, finish_reason tool_calls", got.RawJSON())
	}
	tc := ch.Message.ToolCalls[0]
	if !strings.HasPrefix(tc.ID, "call_") || len(tc.ID) != 29 || tc.Type != "function" || tc.Function.Name != "get_weather" {
		t.Errorf("tool call %+v; want id call_ and 24 characters, a get_weather function", tc)
	}
	checkArgs(t, tc.Function.Arguments, weatherSchema)
	if want := int64((len(tc.Function.Arguments) + 3) / 4); got.Usage.CompletionTokens != want {
		t.Errorf("completion tokens %d, want %d (a token per 4 bytes of arguments)", got.Usage.CompletionTokens, want)
	}

	req.Messages = append(req.Messages, ch.Message.ToParam(), openai.ToolMessage(`{"temp_c": 21, "sky": "clear"}`, tc.ID))
	got, err = c.Chat.Completions.New(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if ch := got.Choices[0]; ch.FinishReason != "stop" || len(ch.Message.ToolCalls) != 0 ||
		!strings.HasPrefix(ch.Message.Content, `Tool result: {"temp_c": 21, "sky": "clear"}. `) {
		t.Errorf("after the result: %s; want text quoting it", got.RawJSON())
	}
	if st := s.Stats(); st.Outcomes[OutcomeOK] != 2 || st.APIs["chat.completions"] != 2 {
		t.Errorf("stats %+v", st)
	}
}

// A streamed tool call, accumulated by the official client, is the call a
// non-streamed request of the same seed gets.
func TestToolCallStreamWithAccumulator(t *testing.T) {
	params := params(t, weatherSchema)
	req := openai.ChatCompletionNewParams{
		Model:         "m",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
		Tools:         []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather", Parameters: params})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	_, ts := start(t, Config{Seed: 8})
	stream := sdk(ts).Chat.Completions.NewStreaming(context.Background(), req)
	var acc openai.ChatCompletionAccumulator
	var finished []openai.FinishedChatCompletionToolCall
	for stream.Next() {
		acc.AddChunk(stream.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	_, ts2 := start(t, Config{Seed: 8})
	want, err := sdk(ts2).Chat.Completions.New(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := acc.Choices[0]
	if len(got.Message.ToolCalls) != 1 || got.FinishReason != "tool_calls" || len(finished) != 1 {
		t.Fatalf("accumulated %+v, %d finished calls; want one tool call", got, len(finished))
	}
	g, w := got.Message.ToolCalls[0], want.Choices[0].Message.ToolCalls[0]
	if g.ID != w.ID || g.Function.Name != w.Function.Name || g.Function.Arguments != w.Function.Arguments {
		t.Errorf("streamed %+v, not streamed %+v; want the same call", g, w)
	}
	checkArgs(t, g.Function.Arguments, weatherSchema)
	if acc.Usage.CompletionTokens != want.Usage.CompletionTokens || acc.Usage.PromptTokens != want.Usage.PromptTokens {
		t.Errorf("streamed usage %+v, not streamed %+v", acc.Usage, want.Usage)
	}
}

// The raw stream of a tool call: a role chunk, a chunk with the id, type,
// name and empty arguments, argument fragments in several chunks, the
// finish chunk, the usage chunk, [DONE].
func TestToolCallStreamShape(t *testing.T) {
	s, _ := New(Config{Seed: 2, Output: Output{ChunkTokens: 2}})
	rec := serve(s, "POST", "/v1/chat/completions", chatWith(`"stream":true,"stream_options":{"include_usage":true},"tool_choice":{"type":"function","function":{"name":"get_weather"}},"tools":`+toolsJSON))
	data, err := events(t, rec.Body)
	if err != nil || rec.Code != 200 {
		t.Fatalf("%d %v", rec.Code, err)
	}
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("last event %s, want [DONE]", data[len(data)-1])
	}
	var chunks []chunk
	for _, d := range data[:len(data)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	n := len(chunks)
	role, first := chunks[0].Choices[0].Delta, chunks[1].Choices[0].Delta
	if role.Role != "assistant" || role.Content != nil || len(role.ToolCalls) != 0 {
		t.Errorf("role chunk %s", data[0])
	}
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].ID == "" || first.ToolCalls[0].Type != "function" ||
		first.ToolCalls[0].Function.Name != "get_weather" || !strings.Contains(data[1], `"arguments":""`) {
		t.Errorf("first tool chunk %s; want id, type, name and empty arguments", data[1])
	}
	var args strings.Builder
	for i, c := range chunks[2 : n-2] {
		d := c.Choices[0].Delta
		if len(d.ToolCalls) != 1 || d.ToolCalls[0].Index != 0 || d.ToolCalls[0].ID != "" || d.ToolCalls[0].Function.Name != "" {
			t.Errorf("fragment %d: %s; want arguments only, index 0", i, data[i+2])
		}
		args.WriteString(d.ToolCalls[0].Function.Arguments)
	}
	if n-4 < 3 {
		t.Errorf("%d argument chunks, want several", n-4)
	}
	checkArgs(t, args.String(), weatherSchema)
	if f := chunks[n-2].Choices[0].FinishReason; f == nil || *f != "tool_calls" {
		t.Errorf("finish chunk %s", data[n-2])
	}
	if u := chunks[n-1].Usage; u == nil || u.CompletionTokens != (args.Len()+3)/4 || len(chunks[n-1].Choices) != 0 {
		t.Errorf("usage chunk %s; want %d completion tokens", data[n-1], (args.Len()+3)/4)
	}
	if st := s.Stats(); st.BilledOutputTokens != int64((args.Len()+3)/4) {
		t.Errorf("billed %d", st.BilledOutputTokens)
	}
}

// answerKind is "text", or the names of an answer's tool calls.
func answerKind(t *testing.T, body []byte) string {
	t.Helper()
	c := completionOf(t, body)
	m := c.Choices[0].Message
	if len(m.ToolCalls) == 0 {
		if m.Content == nil || c.Choices[0].FinishReason != "stop" {
			t.Fatalf("neither text nor tool calls: %s", body)
		}
		return "text"
	}
	var names []string
	for _, tc := range m.ToolCalls {
		names = append(names, tc.Function.Name)
	}
	return strings.Join(names, "+")
}

func TestToolChoice(t *testing.T) {
	const (
		user       = `{"role":"user","content":"weather?"}`
		system     = `{"role":"system","content":"be brief"}`
		assistant  = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]}`
		toolResult = `{"role":"tool","tool_call_id":"call_1","content":"sunny"}`
		lookupOnly = `"tools":[{"type":"function","function":{"name":"lookup","parameters":` + lookupSchema + `}}]`
	)
	s, _ := New(Config{Seed: 3})
	for i, tc := range []struct {
		extra    string
		messages []string
		want     string
	}{
		{lookupOnly, []string{user}, "lookup"},
		{lookupOnly + `,"tool_choice":"auto"`, []string{user}, "lookup"},
		{lookupOnly + `,"tool_choice":"none"`, []string{user}, "text"},
		{lookupOnly, []string{user, assistant, toolResult}, "text"},
		{lookupOnly, []string{user, system}, "text"},
		{lookupOnly + `,"tool_choice":"required"`, []string{user, assistant, toolResult}, "lookup"},
		{`"tool_choice":{"type":"function","function":{"name":"get_weather"}},"tools":` + toolsJSON, []string{user, assistant, toolResult}, "get_weather"},
		{`"tool_choice":"none"`, []string{user}, "text"}, // none without tools means no choice
	} {
		rec := serve(s, "POST", "/v1/chat/completions", chatWith(tc.extra, tc.messages...))
		if rec.Code != 200 {
			t.Fatalf("case %d: %d %s", i, rec.Code, rec.Body)
		}
		if got := answerKind(t, rec.Body.Bytes()); got != tc.want {
			t.Errorf("case %d: answer %s, want %s", i, got, tc.want)
		}
	}
	// A named tool is called alone, even with parallel calls allowed.
	for range 20 {
		body := chatWith(`"tool_choice":{"type":"function","function":{"name":"lookup"}},"tools":` + toolsJSON)
		if got := answerKind(t, serve(s, "POST", "/v1/chat/completions", body).Body.Bytes()); got != "lookup" {
			t.Fatalf("named lookup: got %s", got)
		}
	}
}

// Parallel calls: with two tools, some answers call both (never more, never
// the same twice); with parallel_tool_calls false, one each.
func TestParallelToolCalls(t *testing.T) {
	s, _ := New(Config{Seed: 4})
	kinds := map[string]int{}
	for range 40 {
		rec := serve(s, "POST", "/v1/chat/completions", chatWith(`"tools":`+toolsJSON))
		c := completionOf(t, rec.Body.Bytes())
		calls := c.Choices[0].Message.ToolCalls
		if len(calls) == 2 && (calls[0].Function.Name == calls[1].Function.Name || calls[0].ID == calls[1].ID) {
			t.Fatalf("two calls of one tool or one id: %s", rec.Body)
		}
		for _, tc := range calls {
			schema := lookupSchema
			if tc.Function.Name == "get_weather" {
				schema = weatherSchema
			}
			checkArgs(t, tc.Function.Arguments, schema)
		}
		kinds[answerKind(t, rec.Body.Bytes())]++
	}
	single := kinds["get_weather"] + kinds["lookup"]
	if both := kinds["get_weather+lookup"] + kinds["lookup+get_weather"]; both == 0 || single == 0 || both+single != 40 {
		t.Errorf("answers %v; want single and parallel calls, at most two", kinds)
	}
	for range 20 {
		body := chatWith(`"parallel_tool_calls":false,"tools":` + toolsJSON)
		if got := answerKind(t, serve(s, "POST", "/v1/chat/completions", body).Body.Bytes()); strings.Contains(got, "+") {
			t.Fatalf("parallel_tool_calls false: got %s", got)
		}
	}
}

// Requests the sim cannot take get a 400 in OpenAI's shape naming the
// parameter; odd but valid ones get a sane answer. Nothing panics.
func TestHostileToolRequests(t *testing.T) {
	tool := func(name, params string) string {
		return `"tools":[{"type":"function","function":{"name":` + name + `,"parameters":` + params + `}}]`
	}
	many := make([]string, 129)
	for i := range many {
		many[i] = fmt.Sprintf(`{"type":"function","function":{"name":"f%d"}}`, i)
	}
	s, _ := New(Config{})
	for i, tc := range []struct {
		extra       string
		param, code string
	}{
		{tool(`"get weather"`, `{}`), "tools[0].function.name", "invalid_value"},
		{tool(`"wetter_☀"`, `{}`), "tools[0].function.name", "invalid_value"},
		{tool(`"`+strings.Repeat("a", 65)+`"`, `{}`), "tools[0].function.name", "string_above_max_length"},
		{tool(`""`, `{}`), "tools[0].function.name", "missing_required_parameter"},
		{tool(`"f\u0000"`, `{}`), "tools[0].function.name", "invalid_value"},
		{tool(`"f"`, `"garbage"`), "tools[0].function.parameters", "invalid_function_parameters"},
		{tool(`"f"`, `[1,2]`), "tools[0].function.parameters", "invalid_function_parameters"},
		{tool(`"f"`, `{"type":"string"}`), "tools[0].function.parameters", "invalid_function_parameters"},
		{`"tools":[{"type":"code_interpreter"}]`, "tools[0].type", "invalid_value"},
		{`"tools":[{"type":"function"}]`, "tools[0].function", "missing_required_parameter"},
		{`"tools":{"type":"function"}`, "tools", "invalid_value"},
		{`"tools":[` + strings.Join(many, ",") + `]`, "tools", "array_above_max_length"},
		{`"tool_choice":"sometimes","tools":` + toolsJSON, "tool_choice", "invalid_value"},
		{`"tool_choice":{"type":"function","function":{"name":"nope"}},"tools":` + toolsJSON, "tool_choice", "invalid_value"},
		{`"tool_choice":{"type":"allowed_tools"},"tools":` + toolsJSON, "tool_choice", "invalid_value"},
		{`"tool_choice":"required"`, "tool_choice", "invalid_value"},
		{`"n":0`, "n", "integer_below_min_value"},
		{`"n":9`, "n", "integer_above_max_value"},
		{`"n":1000000000`, "n", "integer_above_max_value"},
		{`"response_format":{"type":"xml"}`, "response_format.type", "invalid_value"},
		{`"response_format":{"type":"json_schema"}`, "response_format.json_schema", "missing_required_parameter"},
		{`"response_format":{"type":"json_schema","json_schema":{"name":"a b","schema":{}}}`, "response_format.json_schema.name", "invalid_value"},
		{`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":"nope"}}`, "response_format.json_schema.schema", "invalid_value"},
	} {
		rec := serve(s, "POST", "/v1/chat/completions", chatWith(tc.extra))
		var e struct {
			Error struct{ Type, Param, Code, Message string }
		}
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != 400 || e.Error.Type != "invalid_request_error" || e.Error.Param != tc.param || e.Error.Code != tc.code || e.Error.Message == "" {
			t.Errorf("case %d: %d %s; want 400 with param %s and code %s", i, rec.Code, rec.Body, tc.param, tc.code)
		}
	}
	// Through the official client, the error reads as OpenAI's.
	_, ts := start(t, Config{})
	_, err := sdk(ts).Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, N: openai.Int(99)})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "n" {
		t.Errorf("n 99: %v; want a 400 for n", err)
	}

	for name, schema := range map[string]string{
		"deep":          deep(3000),
		"garbage props": `{"type":"object","properties":{"a":5,"b":{"type":"strang"},"c":{"$ref":"#/nowhere"}},"required":["a","b","c","d"]}`,
		"recursive":     `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"required":["next"]}},"$ref":"#/$defs/n"}`,
		"no type":       `{"properties":{"x":{"type":"integer"}},"required":["x"]}`,
		"huge":          `{"type":"object","properties":{"a":{"type":"array","minItems":1e15,"items":{"type":"string","minLength":1e15}}},"required":["a"]}`,
	} {
		rec := serve(s, "POST", "/v1/chat/completions", chatWith(`"tool_choice":"required",`+tool(`"odd-name_1"`, schema)))
		c := completionOf(t, rec.Body.Bytes())
		if rec.Code != 200 || len(c.Choices[0].Message.ToolCalls) != 1 {
			t.Fatalf("%s: %d %.300s; want a tool call", name, rec.Code, rec.Body)
		}
		if args := c.Choices[0].Message.ToolCalls[0].Function.Arguments; !json.Valid([]byte(args)) || args[0] != '{' || len(args) > 1<<20 {
			t.Errorf("%s: arguments %.300s; want a small JSON object", name, args)
		}
	}
}

// The same seed and requests give the same tool calls, ids included;
// another seed, others.
func TestToolDeterminism(t *testing.T) {
	run := func(seed uint64) string {
		s, _ := New(Config{Seed: seed, Clock: newFake()})
		var out strings.Builder
		for i := range 6 {
			body := chatWith(`"tools":` + toolsJSON)
			if i%2 == 1 {
				body = chatWith(`"stream":true,"tools":` + toolsJSON)
			}
			out.WriteString(serve(s, "POST", "/v1/chat/completions", body).Body.String())
		}
		return out.String()
	}
	if a, b := run(5), run(5); a != b {
		t.Errorf("seed 5 twice:\n%s\n%s", a, b)
	}
	if run(5) == run(6) {
		t.Error("seeds 5 and 6 gave the same answers")
	}
}
