package responses

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestToChatMapping(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{{
		name: "input as a string",
		body: `{"model":"gpt-4.1","input":"Hello"}`,
		want: `{"model":"gpt-4.1","messages":[{"role":"user","content":"Hello"}]}`,
	}, {
		name: "instructions lead as a system message",
		body: `{"model":"m","instructions":"Be terse.","input":"Hi"}`,
		want: `{"model":"m","messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"Hi"}]}`,
	}, {
		name: "messages of every role, easy and typed",
		body: `{"model":"m","input":[
			{"role":"system","content":"sys"},
			{"role":"developer","content":[{"type":"input_text","text":"dev"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]},
			{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"ans","annotations":[]}]},
			{"role":"assistant","content":"plain"}]}`,
		want: `{"model":"m","messages":[
			{"role":"system","content":"sys"},
			{"role":"system","content":"dev"},
			{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
			{"role":"assistant","content":"ans"},
			{"role":"assistant","content":"plain"}]}`,
	}, {
		name: "images and files in a user message",
		body: `{"model":"m","input":[{"role":"user","content":[
			{"type":"input_text","text":"look"},
			{"type":"input_image","image_url":"https://x/y.png","detail":"high"},
			{"type":"input_image","image_url":"data:image/png;base64,AAAA"},
			{"type":"input_file","file_data":"data:application/pdf;base64,JVBE","filename":"a.pdf"}]}]}`,
		want: `{"model":"m","messages":[{"role":"user","content":[
			{"type":"text","text":"look"},
			{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"high"}},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},
			{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBE","filename":"a.pdf"}}]}]}`,
	}, {
		name: "an assistant refusal",
		body: `{"model":"m","input":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}]}`,
		want: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","refusal":"no"}]}`,
	}, {
		name: "consecutive function calls form one assistant message; outputs are tool messages",
		body: `{"model":"m","input":[
			{"role":"user","content":"weather?"},
			{"type":"function_call","id":"fc_1","call_id":"call_a","name":"get","arguments":"{\"city\":\"Oslo\"}"},
			{"type":"function_call","call_id":"call_b","name":"get","arguments":"{\"city\":\"Rome\"}"},
			{"type":"function_call_output","call_id":"call_a","output":"cold"},
			{"type":"function_call_output","call_id":"call_b","output":[{"type":"input_text","text":"warm"},{"type":"input_text","text":"!"}]}]}`,
		want: `{"model":"m","messages":[
			{"role":"user","content":"weather?"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"call_a","type":"function","function":{"name":"get","arguments":"{\"city\":\"Oslo\"}"}},
				{"id":"call_b","type":"function","function":{"name":"get","arguments":"{\"city\":\"Rome\"}"}}]},
			{"role":"tool","tool_call_id":"call_a","content":"cold"},
			{"role":"tool","tool_call_id":"call_b","content":[{"type":"text","text":"warm"},{"type":"text","text":"!"}]}]}`,
	}, {
		name: "calls right after an assistant message join it",
		body: `{"model":"m","input":[{"role":"user","content":"q"},
			{"role":"assistant","content":"Let me check."},
			{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"ok"}]}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"},
			{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
	}, {
		name: "reasoning items are left out",
		body: `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"xyz"},{"role":"user","content":"q"}]}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}]}`,
	}, {
		name: "function tools, tool_choice and parallel_tool_calls",
		body: `{"model":"m","input":"q","tools":[
			{"type":"function","name":"get","description":"Get it.","parameters":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true},
			{"type":"function","name":"bare"}],
			"tool_choice":{"type":"function","name":"get"},"parallel_tool_calls":false}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}],"tools":[
			{"type":"function","function":{"name":"get","description":"Get it.","parameters":{"type":"object","properties":{"a":{"type":"string"}}},"strict":true}},
			{"type":"function","function":{"name":"bare"}}],
			"tool_choice":{"type":"function","function":{"name":"get"}},"parallel_tool_calls":false}`,
	}, {
		name: "tool_choice modes",
		body: `{"model":"m","input":"q","tools":[{"type":"function","name":"f"}],"tool_choice":"required"}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`,
	}, {
		name: "tool_choice and parallel_tool_calls without tools are dropped",
		body: `{"model":"m","input":"q","tool_choice":"auto","parallel_tool_calls":true,"tools":[]}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}]}`,
	}, {
		name: "structured output",
		body: `{"model":"m","input":"q","text":{"format":{"type":"json_schema","name":"out","description":"d","schema":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},"strict":true},"verbosity":"low"}}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}],"response_format":{"type":"json_schema","json_schema":{"name":"out","description":"d","schema":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false},"strict":true}},"verbosity":"low"}`,
	}, {
		name: "json_object and text formats",
		body: `{"model":"m","input":"q","text":{"format":{"type":"json_object"}}}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}],"response_format":{"type":"json_object"}}`,
	}, {
		name: "text format text says nothing",
		body: `{"model":"m","input":"q","text":{"format":{"type":"text"}}}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}]}`,
	}, {
		name: "sampling, reasoning, identity",
		body: `{"model":"m","input":"q","reasoning":{"effort":"high","summary":"auto"},"max_output_tokens":256,"temperature":0.2,"top_p":0.9,"user":"u1","safety_identifier":"s1","prompt_cache_key":"k"}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}],"reasoning_effort":"high","max_completion_tokens":256,"temperature":0.2,"top_p":0.9,"user":"u1","safety_identifier":"s1","prompt_cache_key":"k"}`,
	}, {
		name: "stream always asks for usage",
		body: `{"model":"m","input":"q","stream":true,"stream_options":{"include_obfuscation":false}}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}],"stream":true,"stream_options":{"include_usage":true}}`,
	}, {
		name: "settings with no chat effect, and nulls, are dropped",
		body: `{"model":"m","input":"q","metadata":{"k":"v"},"store":false,"service_tier":"auto","max_tool_calls":3,"truncation":"disabled","background":false,"top_logprobs":0,"include":["reasoning.encrypted_content"],"prompt_cache_retention":"24h","temperature":null,"tools":null,"conversation":null}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}]}`,
	}, {
		name: "escaped keys are their decoded names",
		body: `{"\u006dodel":"m","in\u0070ut":"q","max_output_tok\u0065ns":5}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}],"max_completion_tokens":5}`,
	}, {
		name: "duplicates inside items too",
		body: `{"model":"m","input":[{"role":"system","role":"user","content":7,"content":"x"}]}`,
		want: `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
	}, {
		name: "a long escaped key is no field",
		body: `{"model":"m","input":"q","\u006d\u006f\u0064\u0065\u006c\u006d\u006f\u0064\u0065\u006c\u006d\u006f\u0064\u0065\u006c\u006d\u006f\u0064\u0065\u006c\u006d\u006f\u0064\u0065\u006c\u006d\u006f\u0064\u0065\u006c\u006d\u006f":"x"}`,
		want: `{"model":"m","messages":[{"role":"user","content":"q"}]}`,
	}, {
		name: "keys match exactly",
		body: `{"model":"m","input":[{"role":"user","Role":"system","content":"x","CONTENT":"y"}]}`,
		want: `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
	}, {
		name: "strings are decoded and written back valid",
		body: "{\"model\":\"m\",\"input\":\"a\\u00e9\\n\\ud83d\\ude00\\\"\xff\"}",
		want: `{"model":"m","messages":[{"role":"user","content":"aé\n😀\"\ufffd"}]}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := chat(t, tt.body)
			if !sameJSON(t, got, []byte(tt.want)) {
				t.Errorf("ToChat:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestToChatRequest(t *testing.T) {
	_, req := chat(t, `{"model":"gpt-x","input":"q","stream":true,"store":false,"metadata":{"a":"1"},"previous_response_id":"resp_ab","zeta":1,"alpha":{"deep":[1]},"zeta":2,"extremely_long_field_name_that_goes_on_and_on_and_on_beyond_sixty_four_bytes_of_text":0}`,
		Item{Type: typeMessage, Role: "user", Content: []Part{{Type: partInputText, Text: "before"}}})
	if req.Model != "gpt-x" || !req.Stream || req.Store || req.PreviousResponseID != "resp_ab" {
		t.Errorf("Request = %+v", req)
	}
	if len(req.Input) != 2 || req.Input[0].Content[0].Text != "before" || req.Input[1].Content[0].Text != "q" {
		t.Errorf("Input = %+v, want the history then the input", req.Input)
	}
	want := []string{"zeta", "alpha", "extremely_long_field_name_that_goes_on_and_on_and_on_beyond_sixt…"}
	if !reflect.DeepEqual(req.Unknown, want) {
		t.Errorf("Unknown = %q, want %q", req.Unknown, want)
	}
	if _, req := chat(t, `{"model":"m","input":"q"}`); !req.Store || req.Stream {
		t.Errorf("defaults: Store %v Stream %v, want true false", req.Store, req.Stream)
	}
}

func TestToChatUnknownFieldsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"model":"m","input":"q"`)
	for i := range 1000 {
		b.WriteString(`,"x` + itoa(i) + `":1`)
	}
	b.WriteString("}")
	_, req := chat(t, b.String())
	if len(req.Unknown) != maxUnknown {
		t.Errorf("%d unknown fields listed, want %d", len(req.Unknown), maxUnknown)
	}
}

func TestToChatErrors(t *testing.T) {
	tests := []struct {
		name, body, param, code string
		unsupported             bool
	}{
		{"not an object", `["model"]`, "", codeInvalidJSON, false},
		{"not JSON", `{"model":"m",`, "", codeInvalidJSON, false},
		{"trailing data", `{"model":"m","input":"q"} {}`, "", codeInvalidJSON, false},
		{"empty body", ``, "", codeInvalidJSON, false},
		{"null body", `null`, "", codeInvalidJSON, false},
		{"too deep", `{"model":"m","input":"q","metadata":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70) + `}`, "", codeInvalidJSON, false},
		{"no model", `{"input":"q"}`, "model", codeMissing, false},
		{"model not a string", `{"model":1,"input":"q"}`, "model", codeInvalidType, false},
		{"empty model", `{"model":"","input":"q"}`, "model", codeInvalidValue, false},
		{"no input", `{"model":"m"}`, "input", codeMissing, false},
		{"input wrong type", `{"model":"m","input":5}`, "input", codeInvalidType, false},
		{"item not an object", `{"model":"m","input":["x"]}`, "input[0]", codeInvalidType, false},
		{"item without type or role", `{"model":"m","input":[{"content":"x"}]}`, "input[0].type", codeMissing, false},
		{"bad role", `{"model":"m","input":[{"role":"robot","content":"x"}]}`, "input[0].role", codeInvalidValue, false},
		{"no content", `{"model":"m","input":[{"role":"user"}]}`, "input[0].content", codeMissing, false},
		{"content wrong type", `{"model":"m","input":[{"role":"user","content":{}}]}`, "input[0].content", codeInvalidType, false},
		{"unknown part", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_video"}]}]}`, "input[0].content[1].type", codeInvalidValue, false},
		{"part text wrong type", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":3}]}]}`, "input[0].content[0].text", codeInvalidType, false},
		{"input_text in an assistant message", `{"model":"m","input":[{"role":"assistant","content":[{"type":"input_text","text":"a"}]}]}`, "input[0].content[0].type", codeInvalidValue, false},
		{"output_text in a user message", `{"model":"m","input":[{"role":"user","content":[{"type":"output_text","text":"a"}]}]}`, "input[0].content[0].type", codeInvalidValue, false},
		{"image file_id", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "input[0].content[0].file_id", codeUnsupportedValue, true},
		{"image without a url", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","detail":"auto"}]}]}`, "input[0].content[0].image_url", codeMissing, false},
		{"file file_id", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`, "input[0].content[0].file_id", codeUnsupportedValue, true},
		{"file url", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://x"}]}]}`, "input[0].content[0].file_url", codeUnsupportedValue, true},
		{"image in a system message", `{"model":"m","input":[{"role":"system","content":[{"type":"input_image","image_url":"https://x"}]}]}`, "input[0].content[0].type", codeUnsupportedValue, true},
		{"image in a tool output", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":""},{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"https://x"}]}]}`, "input[1].output[0].type", codeUnsupportedValue, true},
		{"call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id", codeMissing, false},
		{"call without name", `{"model":"m","input":[{"type":"function_call","call_id":"c","arguments":"{}"}]}`, "input[0].name", codeMissing, false},
		{"call arguments not a string", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":{}}]}`, "input[0].arguments", codeInvalidType, false},
		{"output without output", `{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output", codeMissing, false},
		{"output without its call", `{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call_output","call_id":"c9","output":"x"}]}`, "input[1].call_id", codeInvalidValue, false},
		{"item reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0].type", codeUnsupportedValue, false},
		{"built-in item", `{"model":"m","input":[{"type":"web_search_call","id":"ws_1"}]}`, "input[0].type", codeUnsupportedValue, true},
		{"built-in tool", `{"model":"m","input":"q","tools":[{"type":"function","name":"f"},{"type":"function","name":"g"},{"type":"web_search"}]}`, "tools[2].type", codeUnsupportedValue, true},
		{"file_search", `{"model":"m","input":"q","tools":[{"type":"file_search","vector_store_ids":["v"]}]}`, "tools[0].type", codeUnsupportedValue, true},
		{"mcp", `{"model":"m","input":"q","tools":[{"type":"mcp","server_label":"x"}]}`, "tools[0].type", codeUnsupportedValue, true},
		{"custom tool", `{"model":"m","input":"q","tools":[{"type":"custom","name":"x"}]}`, "tools[0].type", codeUnsupportedValue, true},
		{"tool without type", `{"model":"m","input":"q","tools":[{"name":"x"}]}`, "tools[0].type", codeMissing, false},
		{"tool without name", `{"model":"m","input":"q","tools":[{"type":"function"}]}`, "tools[0].name", codeMissing, false},
		{"tool parameters not an object", `{"model":"m","input":"q","tools":[{"type":"function","name":"f","parameters":[]}]}`, "tools[0].parameters", codeInvalidType, false},
		{"tool strict not a boolean", `{"model":"m","input":"q","tools":[{"type":"function","name":"f","strict":"yes"}]}`, "tools[0].strict", codeInvalidType, false},
		{"tools not an array", `{"model":"m","input":"q","tools":{}}`, "tools", codeInvalidType, false},
		{"tool_choice unknown mode", `{"model":"m","input":"q","tools":[{"type":"function","name":"f"}],"tool_choice":"any"}`, "tool_choice", codeInvalidValue, false},
		{"tool_choice unknown function", `{"model":"m","input":"q","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`, "tool_choice.name", codeInvalidValue, false},
		{"tool_choice required without tools", `{"model":"m","input":"q","tool_choice":"required"}`, "tool_choice", codeInvalidValue, false},
		{"tool_choice built-in", `{"model":"m","input":"q","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"web_search_preview"}}`, "tool_choice.type", codeUnsupportedValue, true},
		{"tool_choice allowed_tools", `{"model":"m","input":"q","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[]}}`, "tool_choice.type", codeUnsupportedValue, true},
		{"format unknown", `{"model":"m","input":"q","text":{"format":{"type":"yaml"}}}`, "text.format.type", codeInvalidValue, false},
		{"json_schema without name", `{"model":"m","input":"q","text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name", codeMissing, false},
		{"json_schema without schema", `{"model":"m","input":"q","text":{"format":{"type":"json_schema","name":"x"}}}`, "text.format.schema", codeMissing, false},
		{"text not an object", `{"model":"m","input":"q","text":"json"}`, "text", codeInvalidType, false},
		{"effort not a string", `{"model":"m","input":"q","reasoning":{"effort":3}}`, "reasoning.effort", codeInvalidType, false},
		{"max_output_tokens zero", `{"model":"m","input":"q","max_output_tokens":0}`, "max_output_tokens", codeInvalidValue, false},
		{"max_output_tokens a fraction", `{"model":"m","input":"q","max_output_tokens":1.5}`, "max_output_tokens", codeInvalidType, false},
		{"max_output_tokens huge", `{"model":"m","input":"q","max_output_tokens":1e400}`, "max_output_tokens", codeInvalidValue, false},
		{"temperature a string", `{"model":"m","input":"q","temperature":"hot"}`, "temperature", codeInvalidType, false},
		{"stream a string", `{"model":"m","input":"q","stream":"true"}`, "stream", codeInvalidType, false},
		{"store a number", `{"model":"m","input":"q","store":1}`, "store", codeInvalidType, false},
		{"metadata not an object", `{"model":"m","input":"q","metadata":[]}`, "metadata", codeInvalidType, false},
		{"user not a string", `{"model":"m","input":"q","user":1}`, "user", codeInvalidType, false},
		{"background", `{"model":"m","input":"q","background":true}`, "background", codeUnsupportedValue, false},
		{"truncation auto", `{"model":"m","input":"q","truncation":"auto"}`, "truncation", codeUnsupportedValue, true},
		{"truncation unknown", `{"model":"m","input":"q","truncation":"some"}`, "truncation", codeInvalidValue, false},
		{"include logprobs", `{"model":"m","input":"q","include":["message.output_text.logprobs"]}`, "include[0]", codeUnsupportedValue, true},
		{"include unknown", `{"model":"m","input":"q","include":["reasoning.encrypted_content","x.y"]}`, "include[1]", codeUnsupportedValue, true},
		{"include not strings", `{"model":"m","input":"q","include":[1]}`, "include[0]", codeInvalidType, false},
		{"top_logprobs", `{"model":"m","input":"q","top_logprobs":3}`, "top_logprobs", codeUnsupportedValue, true},
		{"conversation", `{"model":"m","input":"q","conversation":"conv_1"}`, "conversation", codeUnsupportedParam, false},
		{"prompt", `{"model":"m","prompt":{"id":"pmpt_1"}}`, "input", codeMissing, false},
		{"prompt with input", `{"model":"m","input":"q","prompt":{"id":"pmpt_1"}}`, "prompt", codeUnsupportedParam, false},
		{"a member twice", `{"model":"m","input":"q","conversation":"conv_1","conversation":null}`, "conversation", codeInvalidValue, false},
		{"an escaped member twice", `{"model":"m","input":"q","prompt":null,"pr\u006fmpt":{"id":"pmpt_1"}}`, "prompt", codeInvalidValue, false},
		{"an item's type twice", `{"model":"m","input":[{"type":"item_reference","type":"message","role":"user","content":"x","id":"msg_1"}]}`, "input[0].type", codeInvalidValue, false},
		{"previous response not resolved", `{"model":"m","input":"q","previous_response_id":"resp_1"}`, "previous_response_id", codePreviousNotFound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := refusal(t, tt.body)
			if e.Param != tt.param || e.Code != tt.code {
				t.Errorf("error param %q code %q (%s), want param %q code %q", e.Param, e.Code, e.Message, tt.param, tt.code)
			}
			if got := errors.Is(e, ErrUnsupported); got != tt.unsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", e, got, tt.unsupported)
			}
			if tt.param != "" && !strings.HasPrefix(e.Message, `"`+tt.param+`": `) {
				t.Errorf("message %q does not start with the param", e.Message)
			}
		})
	}
}

func TestToChatErrorNamesTheTool(t *testing.T) {
	e := refusal(t, `{"model":"m","input":"q","tools":[{"type":"code_interpreter","container":{"type":"auto"}}]}`)
	if !strings.Contains(e.Message, `"code_interpreter"`) || !strings.Contains(e.Error(), "responses: ") {
		t.Errorf("message %q (error %q) does not name the tool", e.Message, e.Error())
	}
}

func TestToChatFirstErrorIsStable(t *testing.T) {
	// The same faults in another member order give the same error.
	a := refusal(t, `{"tools":[{"type":"web_search"}],"model":"m","input":"q","background":true}`)
	b := refusal(t, `{"background":true,"input":"q","model":"m","tools":[{"type":"web_search"}]}`)
	if a.Param != b.Param || a.Param != "tools[0].type" {
		t.Errorf("params %q and %q, want tools[0].type for both", a.Param, b.Param)
	}
}

func TestPreviousResponseID(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"model":"m","previous_response_id":"resp_1"}`, "resp_1"},
		{`{"previous_response_id":"resp_1","previous_response_id":"resp_2"}`, ""}, // refused: read two ways
		{`{"previous_\u0072esponse_id":"resp_\u0033"}`, "resp_3"},
		{`{"Previous_response_id":"resp_1"}`, ""},
		{`{"previous_response_id":null}`, ""},
		{`{"previous_response_id":7}`, ""},
		{`{"metadata":{"previous_response_id":"resp_1"}}`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		if got := PreviousResponseID([]byte(tt.body)); got != tt.want {
			t.Errorf("PreviousResponseID(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

// A tool round trip across two turns: the first answer's function call,
// stored, is the history of the second request, which sends the output.
func TestToChatToolRoundTripAcrossTurns(t *testing.T) {
	first := `{"model":"m","instructions":"Use tools.","input":"Weather in Oslo?","tools":[{"type":"function","name":"weather","parameters":{"type":"object"}}]}`
	_, req1 := chat(t, first)
	answer := chatBody(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]}`, "tool_calls")
	resp1, err := FromChat(answer, req1, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStored(req1, resp1, "team-a", created)
	if err != nil {
		t.Fatal(err)
	}
	second := `{"model":"m","previous_response_id":"` + testID + `","input":[{"type":"function_call_output","call_id":"call_9","output":"-3C"}],"tools":[{"type":"function","name":"weather"}]}`
	if PreviousResponseID([]byte(second)) != st.ID {
		t.Fatalf("PreviousResponseID = %q, want %q", PreviousResponseID([]byte(second)), st.ID)
	}
	got, req2 := chat(t, second, st.History()...)
	want := `{"model":"m","messages":[
		{"role":"user","content":"Weather in Oslo?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}}]},
		{"role":"tool","tool_call_id":"call_9","content":"-3C"}],
		"tools":[{"type":"function","function":{"name":"weather"}}]}`
	if !sameJSON(t, got, []byte(want)) {
		t.Errorf("second turn:\n got %s\nwant %s", got, want)
	}
	if len(req2.Input) != 3 {
		t.Errorf("the second request's Input has %d items, want 3 (user, call, output)", len(req2.Input))
	}
}

func TestToChatHugeInputIsLinear(t *testing.T) {
	// 20,000 consecutive calls and their outputs: one assistant message,
	// call ids checked through a map.
	var b strings.Builder
	b.WriteString(`{"model":"m","input":[`)
	const n = 20000
	for i := range n {
		b.WriteString(`{"type":"function_call","call_id":"c` + itoa(i) + `","name":"f","arguments":"{}"},`)
	}
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"type":"function_call_output","call_id":"c` + itoa(i) + `","output":"x"}`)
	}
	b.WriteString(`]}`)
	out, _ := chat(t, b.String())
	msgs := field(decode(t, out), "messages").([]any)
	if len(msgs) != n+1 || len(field(msgs[0], "tool_calls").([]any)) != n {
		t.Errorf("%d messages, want %d", len(msgs), n+1)
	}
}
