package geminiapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// chat translates body and decodes the chat body, failing the test on a
// refusal.
func chat(t *testing.T, body string) map[string]any {
	t.Helper()
	out, err := ToChat("m", []byte(body), false)
	if err != nil {
		t.Fatalf("ToChat(%s): %v", body, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("ToChat(%s) wrote invalid JSON %s: %v", body, out, err)
	}
	return m
}

// asJSON is v as compact JSON, for comparisons.
func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestToChatMapping(t *testing.T) {
	const user = `{"role":"user","parts":[{"text":"hi"}]}`
	tests := []struct {
		name, body string
		field      string // a chat field, or messages[i]
		want       string // its JSON
	}{
		{"text", `{"contents":[` + user + `]}`, "messages", `[{"content":"hi","role":"user"}]`},
		{"no role", `{"contents":[{"parts":[{"text":"a"},{"text":"b"}]}]}`, "messages",
			`[{"content":[{"text":"a","type":"text"},{"text":"b","type":"text"}],"role":"user"}]`},
		{"snake case", `{"contents":[` + user + `],"system_instruction":{"parts":[{"text":"s"}]}}`, "messages",
			`[{"content":"s","role":"system"},{"content":"hi","role":"user"}]`},
		{"escaped key", `{"con\u0074ents":[{"parts":[{"te\u0078t":"x\u00e9"}]}]}`, "messages", `[{"content":"xé","role":"user"}]`},
		{"image", `{"contents":[{"parts":[{"inline_data":{"mime_type":"image/png","data":"aGk-_w"}}]}]}`, "messages",
			`[{"content":[{"image_url":{"url":"data:image/png;base64,aGk+/w=="},"type":"image_url"}],"role":"user"}]`},
		{"pdf", `{"contents":[{"parts":[{"inlineData":{"mimeType":"application/pdf","data":"aGk="}}]}]}`, "messages",
			`[{"content":[{"file":{"file_data":"data:application/pdf;base64,aGk=","filename":"document.pdf"},"type":"file"}],"role":"user"}]`},
		{"audio", `{"contents":[{"parts":[{"inlineData":{"mimeType":"audio/mpeg","data":"aGk="}}]}]}`, "messages",
			`[{"content":[{"input_audio":{"data":"aGk=","format":"mp3"},"type":"input_audio"}],"role":"user"}]`},
		{"file uri", `{"contents":[{"parts":[{"fileData":{"fileUri":"https://x/y.png","mimeType":"image/png"}}]}]}`, "messages",
			`[{"content":[{"image_url":{"url":"https://x/y.png"},"type":"image_url"}],"role":"user"}]`},
		{"calls without ids", `{"contents":[` + user + `,{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}}},{"functionCall":{"name":"g"}},{"functionCall":{"name":"f","args":{"a":2}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"r":1}}},{"functionResponse":{"name":"g","response":{}}},{"functionResponse":{"name":"f","response":{"r":2}}},{"text":"next"}]}]}`, "messages",
			`[{"content":"hi","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"call_0","type":"function"},{"function":{"arguments":"{}","name":"g"},"id":"call_1","type":"function"},{"function":{"arguments":"{\"a\":2}","name":"f"},"id":"call_2","type":"function"}]},` +
				`{"content":"{\"r\":1}","role":"tool","tool_call_id":"call_0"},{"content":"{}","role":"tool","tool_call_id":"call_1"},{"content":"{\"r\":2}","role":"tool","tool_call_id":"call_2"},{"content":"next","role":"user"}]`},
		{"call ids", `{"contents":[{"role":"model","parts":[{"text":"a"},{"text":"b"},{"text":"t","thought":true},{"functionCall":{"id":"x1","name":"f","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"id":"x1","name":"f","response":{"ok":true}}}]}]}`, "messages",
			`[{"content":"ab","reasoning_content":"t","role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"x1","type":"function"}]},{"content":"{\"ok\":true}","role":"tool","tool_call_id":"x1"}]`},
		{"schema", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"n":{"type":"INTEGER","minimum":1,"maxLength":"5","example":3},"e":{"type":"STRING","enum":["a","b"],"nullable":true}},"required":["n"],"propertyOrdering":["n","e"]}}]}]}`, "tools",
			`[{"function":{"name":"f","parameters":{"properties":{"e":{"enum":["a","b"],"type":["string","null"]},"n":{"examples":[3],"maxLength":5,"minimum":1,"type":"integer"}},"required":["n"],"type":"object"}},"type":"function"}]`},
		{"json schema", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"name":"f","description":"d","parametersJsonSchema":{"type":"object","additionalProperties":false}}]}]}`, "tools",
			`[{"function":{"description":"d","name":"f","parameters":{"additionalProperties":false,"type":"object"}},"type":"function"}]`},
		{"allowed names", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"g"},{"name":"h"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g","h"]}}}`, "tools",
			`[{"function":{"name":"g"},"type":"function"},{"function":{"name":"h"},"type":"function"}]`},
		{"one allowed name", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"g"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`, "tool_choice",
			`{"function":{"name":"g"},"type":"function"}`},
		{"mode none", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`, "tool_choice", `"none"`},
		{"mode auto", `{"contents":[` + user + `],"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`, "tool_choice", `"auto"`},
		{"candidates", `{"contents":[` + user + `],"generationConfig":{"candidateCount":"2"}}`, "n", `2`},
		{"max tokens", `{"contents":[` + user + `],"generationConfig":{"max_output_tokens":1e2}}`, "max_completion_tokens", `100`},
		{"penalties", `{"contents":[` + user + `],"generationConfig":{"presencePenalty":0.5,"frequencyPenalty":"-1.5"}}`, "frequency_penalty", `-1.5`},
		{"top k dropped", `{"contents":[` + user + `],"generationConfig":{"topK":40,"topP":0.9}}`, "top_k", `null`},
		{"json", `{"contents":[` + user + `],"generationConfig":{"responseMimeType":"application/json"}}`, "response_format", `{"type":"json_object"}`},
		{"json schema out", `{"contents":[` + user + `],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object"}}}`, "response_format",
			`{"json_schema":{"name":"response","schema":{"type":"object"}},"type":"json_schema"}`},
		{"budget 0", `{"contents":[` + user + `],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`, "reasoning_effort", `"none"`},
		{"budget dynamic", `{"contents":[` + user + `],"generationConfig":{"thinkingConfig":{"thinkingBudget":-1,"includeThoughts":true}}}`, "reasoning_effort", `null`},
		{"budget big", `{"contents":[` + user + `],"generationConfig":{"thinkingConfig":{"thinkingBudget":24576}}}`, "reasoning_effort", `"high"`},
		{"level", `{"contents":[` + user + `],"generationConfig":{"thinkingConfig":{"thinkingLevel":"LOW"}}}`, "reasoning_effort", `"low"`},
		{"safety accepted", `{"contents":[` + user + `],"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`, "safety_settings", `null`},
		{"nulls", `{"contents":[` + user + `],"tools":null,"generationConfig":{"temperature":null}}`, "temperature", `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := asJSON(chat(t, tt.body)[tt.field]); got != tt.want {
				t.Errorf("%s:\n got %s\nwant %s", tt.field, got, tt.want)
			}
		})
	}
}

func TestToChatStream(t *testing.T) {
	m, err := ToChat("gemini-x", []byte(`{"contents":[{"parts":[{"text":"hi"}]}]}`), true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"gemini-x","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`
	if string(m) != want {
		t.Errorf("got  %s\nwant %s", m, want)
	}
}

// TestToChatRefusals feeds hostile and invalid bodies: each gets 400
// INVALID_ARGUMENT naming the field.
func TestToChatRefusals(t *testing.T) {
	const ok = `"contents":[{"parts":[{"text":"hi"}]}]`
	huge := strings.Repeat("x", 1<<20)
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	tests := []struct{ name, body, want string }{
		{"not json", `{"contents":`, "Invalid JSON payload"},
		{"not an object", `[1]`, "Invalid JSON payload"},
		{"trailing", `{` + ok + `} {}`, "Invalid JSON payload"},
		{"no contents", `{}`, "contents is not specified"},
		{"empty contents", `{"contents":[]}`, "contents is not specified"},
		{"null contents", `{"contents":null}`, "contents is not specified"},
		{"contents not array", `{"contents":{}}`, "'contents' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content)"},
		{"duplicate", `{` + ok + `,` + ok + `}`, `Duplicate name "contents"`},
		{"duplicate escaped", `{` + ok + `,"con\u0074ents":[]}`, `Duplicate name "contents"`},
		{"duplicate snake", `{` + ok + `,"generationConfig":{},"generation_config":{}}`, `Duplicate name "generationConfig"`},
		{"duplicate nested", `{"contents":[{"parts":[{"text":"a","text":"b"}]}]}`, `Duplicate name "text" at 'contents[0].parts[0]'`},
		{"unknown", `{` + ok + `,"temperature":1}`, `Unknown name "temperature": Cannot find field`},
		{"unknown nested", `{` + ok + `,"generationConfig":{"Temperature":1}}`, `Unknown name "Temperature" at 'generation_config'`},
		{"huge key", `{` + ok + `,"` + huge + `":1}`, `Unknown name "xxxx`},
		{"empty parts", `{"contents":[{"role":"user","parts":[]}]}`, "contents[0].parts: contents.parts must not be empty"},
		{"bad role", `{"contents":[{"role":"system","parts":[{"text":"a"}]}]}`, "contents[0].role: Please use a valid role"},
		{"text type", `{"contents":[{"parts":[{"text":"a"}]},{"parts":[{"text":"a"},{"text":5}]}]}`, "'contents[1].parts[1].text' (TYPE_STRING), 5"},
		{"two data", `{"contents":[{"parts":[{"text":"a","inlineData":{"mimeType":"image/png","data":"aGk="}}]}]}`, "contents[0].parts[0]: a part must have exactly one data field"},
		{"no data", `{"contents":[{"parts":[{"thought":true}]}]}`, "contents[0].parts[0]: a part must have exactly one data field"},
		{"bad base64", `{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"a$b"}}]}]}`, "'contents[0].parts[0].inline_data.data' (TYPE_BYTES)"},
		{"bad mime", `{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png\";x","data":"aGk="}}]}]}`, "'contents[0].parts[0].inline_data.mime_type'"},
		{"video", `{"contents":[{"parts":[{"inlineData":{"mimeType":"video/mp4","data":"aGk="}}]}]}`, "contents[0].parts[0].inline_data.mime_type: inline data of type \"video/mp4\" is not supported"},
		{"code", `{"contents":[{"parts":[{"executableCode":{"code":"1"}}]}]}`, "contents[0].parts[0].executable_code: code execution is not supported"},
		{"args type", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "'contents[0].parts[0].function_call.args' (google.protobuf.Struct)"},
		{"args deep", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":` + deep + `}}]}]}`, "contents[0].parts[0].function_call.args: the arguments nest deeper than 64 levels"},
		{"orphan response", `{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`, "contents[0].parts[0].function_response.name: the function response \"f\" answers no earlier function call"},
		{"call in user turn", `{"contents":[{"parts":[{"functionCall":{"name":"f"}}]}]}`, "contents[0].parts[0].function_call: a function call belongs in a turn of role model"},
		{"bad function name", `{` + ok + `,"tools":[{"functionDeclarations":[{"name":"a.b"}]}]}`, "tools[0].function_declarations[0].name: the function name \"a.b\""},
		{"search tool", `{` + ok + `,"tools":[{"googleSearch":{}}]}`, "tools[0].google_search: the google_search tool is not supported"},
		{"schema type", `{` + ok + `,"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"TEXT"}}}}]}]}`, "'tools[0].function_declarations[0].parameters.properties[\"a\"].type'"},
		{"schema deep", `{` + ok + `,"tools":[{"functionDeclarations":[{"name":"f","parameters":` + strings.Repeat(`{"items":`, 70) + "{}" + strings.Repeat("}", 70) + `}]}]}`, "tools[0].function_declarations[0].parameters: the schema nests deeper than 64 levels"},
		{"duplicate property", `{` + ok + `,"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{},"\u0061":{}}}}]}]}`, `Duplicate name "a" at 'tools[0].function_declarations[0].parameters.properties'`},
		{"both params", `{` + ok + `,"tools":[{"functionDeclarations":[{"name":"f","parameters":{},"parametersJsonSchema":{}}]}]}`, "mutually exclusive"},
		{"allowed undeclared", `{` + ok + `,"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`, "tool_config.function_calling_config.allowed_function_names: the function \"g\" is not declared"},
		{"bad mode", `{` + ok + `,"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "'tool_config.function_calling_config.mode'"},
		{"temperature type", `{` + ok + `,"generationConfig":{"temperature":"hot"}}`, "'generation_config.temperature' (TYPE_FLOAT), \"hot\""},
		{"tokens fraction", `{` + ok + `,"generationConfig":{"maxOutputTokens":1.5}}`, "'generation_config.max_output_tokens' (TYPE_INT32), 1.5"},
		{"tokens huge", `{` + ok + `,"generationConfig":{"maxOutputTokens":1e400}}`, "'generation_config.max_output_tokens' (TYPE_INT32)"},
		{"tokens negative", `{` + ok + `,"generationConfig":{"maxOutputTokens":-5}}`, "generation_config.max_output_tokens: must be positive"},
		{"stop type", `{` + ok + `,"generationConfig":{"stopSequences":"END"}}`, "'generation_config.stop_sequences' (TYPE_STRING)"},
		{"schema no json", `{` + ok + `,"generationConfig":{"responseSchema":{"type":"OBJECT"}}}`, "generation_config.response_mime_type: a response schema needs"},
		{"mime", `{` + ok + `,"generationConfig":{"responseMimeType":"text/html"}}`, "Unsupported MIME type: text/html"},
		{"image out", `{` + ok + `,"generationConfig":{"responseModalities":["TEXT","IMAGE"]}}`, "generation_config.response_modalities[1]: the response modality \"IMAGE\""},
		{"logprobs", `{` + ok + `,"generationConfig":{"responseLogprobs":true}}`, "generation_config.response_logprobs"},
		{"speech", `{` + ok + `,"generationConfig":{"speechConfig":{}}}`, "generation_config.speech_config"},
		{"thinking both", `{` + ok + `,"generationConfig":{"thinkingConfig":{"thinkingBudget":10,"thinkingLevel":"LOW"}}}`, "generation_config.thinking_config.thinking_level: thinking_budget and thinking_level"},
		{"cached", `{` + ok + `,"cachedContent":"cachedContents/x"}`, "cached_content: cached content is not supported"},
		{"safety type", `{` + ok + `,"safetySettings":[{"category":1}]}`, "'safety_settings[0].category' (TYPE_STRING), 1"},
		{"system media", `{` + ok + `,"systemInstruction":{"parts":[{"inlineData":{"mimeType":"image/png","data":"aGk="}}]}}`, "system_instruction.parts[0].inline_data"},
		{"huge text type", `{"contents":[{"parts":[{"text":[` + strings.Repeat("1,", 1000) + `1]}]}]}`, "'contents[0].parts[0].text' (TYPE_STRING), [1,1,1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ToChat("m", []byte(tt.body), false)
			var ge *Error
			if !errors.As(err, &ge) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if ge.Code != 400 || ge.Status != "INVALID_ARGUMENT" || !strings.Contains(ge.Message, tt.want) {
				t.Errorf("got %d %s %q\nwant a message with %q", ge.Code, ge.Status, ge.Message, tt.want)
			}
			if len(ge.Message) > 400 {
				t.Errorf("message of %d bytes: a client's text must be clipped", len(ge.Message))
			}
		})
	}
}

func TestCountTokensToChat(t *testing.T) {
	out, err := CountTokensToChat("m", []byte(`{"generateContentRequest":{"model":"models/m","contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"temperature":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1}`; string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	for body, want := range map[string]string{
		`{"contents":[{"parts":[{"text":"a"}]}],"generateContentRequest":{}}`: "mutually exclusive",
		`{"generateContentRequest":{"contents":[{"parts":[{"text":5}]}]}}`:    "'generate_content_request.contents[0].parts[0].text'",
		`{"contents":[]}`: "* CountTokensRequest.contents: contents is not specified",
		`{"prompt":"x"}`:  `Unknown name "prompt"`,
	} {
		_, err := CountTokensToChat("m", []byte(body))
		var ge *Error
		if !errors.As(err, &ge) || !strings.Contains(ge.Message, want) {
			t.Errorf("CountTokensToChat(%s) = %v, want a message with %q", body, err, want)
		}
	}
	if got := string(CountTokensResponse(12)); got != `{"totalTokens":12}` {
		t.Errorf("CountTokensResponse = %s", got)
	}
}
