package bedrockapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

const hi = `{"role":"user","content":[{"text":"Hi"}]}`

// refused checks that err is a 400 ValidationException whose message
// names the field.
func refused(t *testing.T, name string, err error, field string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 || e.Type != TypeValidation {
		t.Errorf("%s: err = %v, want a ValidationException", name, err)
		return
	}
	if !strings.Contains(e.Message, field) {
		t.Errorf("%s: %q does not name %q", name, e.Message, field)
	}
}

// Hostile and malformed Converse bodies are refused with a
// ValidationException naming the field, before anything is served.
func TestConverseToChatRefuses(t *testing.T) {
	huge := `{"messages":[{"role":"user","content":[{"text":"` + strings.Repeat("a", MaxRequestSize) + `"}]}]}`
	deep := `{"messages":[` + hi + `],"requestMetadata":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000) + `}`
	cases := []struct{ name, body, field string }{
		{"not JSON", `{"messages":`, "not valid JSON"},
		{"not an object", `[1]`, "want an object"},
		{"duplicate top key", `{"messages":[` + hi + `],"messages":[` + hi + `]}`, `messages: duplicate key "messages"`},
		{"escaped duplicate", `{"messages":[` + hi + `],"m\u0065ssages":[` + hi + `]}`, "duplicate key"},
		{"nested duplicate", `{"messages":[{"role":"user","content":[{"text":"a","text":"b"}]}]}`, "messages[0].content[0].text: duplicate"},
		{"duplicate in schema", `{"messages":[` + hi + `],"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object","type":"string"}}}}]}}`,
			"toolConfig.tools[0].toolSpec.inputSchema.json.type: duplicate"},
		{"empty key", `{"messages":[` + hi + `],"":1}`, "unknown field"},
		{"case variant", `{"Messages":[` + hi + `]}`, "Messages: unknown field"},
		{"unknown field", `{"messages":[` + hi + `],"modelId":"other"}`, "modelId: unknown field"},
		{"hostile key", `{"messages":[` + hi + `],"a\nb` + strings.Repeat("x", 200) + `":1}`, `"a\nb`},
		{"huge", huge, "larger than"},
		{"deep", deep, "not valid JSON"},
		{"no messages", `{}`, "messages: is required"},
		{"empty messages", `{"messages":[]}`, "messages: is required"},
		{"assistant first", `{"messages":[{"role":"assistant","content":[{"text":"a"}]}]}`, "messages[0].role"},
		{"roles repeat", `{"messages":[` + hi + `,` + hi + `]}`, "messages[1].role: a conversation must alternate"},
		{"bad role", `{"messages":[{"role":"system","content":[{"text":"a"}]}]}`, "messages[0].role"},
		{"content string", `{"messages":[{"role":"user","content":"Hi"}]}`, "messages[0].content: want an array, got a string"},
		{"empty text", `{"messages":[{"role":"user","content":[{"text":""}]}]}`, "messages[0].content[0].text: is required"},
		{"two members", `{"messages":[{"role":"user","content":[{"text":"a","image":{}}]}]}`, "messages[0].content[0]: must have exactly one member"},
		{"no member", `{"messages":[{"role":"user","content":[{}]}]}`, "messages[0].content[0]: must have exactly one member"},
		{"wrong type", `{"messages":[` + hi + `],"inferenceConfig":{"maxTokens":"100"}}`, "inferenceConfig.maxTokens: want a number, got a string"},
		{"fraction", `{"messages":[` + hi + `],"inferenceConfig":{"maxTokens":1.5}}`, "inferenceConfig.maxTokens: want an integer"},
		{"zero tokens", `{"messages":[` + hi + `],"inferenceConfig":{"maxTokens":0}}`, "inferenceConfig.maxTokens: must be between 1"},
		{"huge tokens", `{"messages":[` + hi + `],"inferenceConfig":{"maxTokens":1e300}}`, "inferenceConfig.maxTokens"},
		{"hot", `{"messages":[` + hi + `],"inferenceConfig":{"temperature":1.5}}`, "inferenceConfig.temperature: must be between 0 and 1"},
		{"empty stop", `{"messages":[` + hi + `],"inferenceConfig":{"stopSequences":[""]}}`, "inferenceConfig.stopSequences[0]"},
		{"image format", `{"messages":[{"role":"user","content":[{"image":{"format":"bmp","source":{"bytes":"AAAA"}}}]}]}`, "messages[0].content[0].image.format"},
		{"image base64", `{"messages":[{"role":"user","content":[{"image":{"format":"png","source":{"bytes":"not base64!"}}}]}]}`, "messages[0].content[0].image.source.bytes: is not valid base64"},
		{"image s3", `{"messages":[{"role":"user","content":[{"image":{"format":"png","source":{"s3Location":{"uri":"s3://b/k"}}}}]}]}`, "image.source.s3Location"},
		{"document name", `{"messages":[{"role":"user","content":[{"document":{"format":"pdf","source":{"bytes":"AAAA"}}}]}]}`, "document.name: is required"},
		{"video", `{"messages":[{"role":"user","content":[{"video":{"format":"mp4"}}]}]}`, "messages[0].content[0].video: is not supported"},
		{"toolUse in user turn", `{"messages":[{"role":"user","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]}]}`, "toolUse blocks are not allowed in user"},
		{"image in assistant turn", `{"messages":[` + hi + `,{"role":"assistant","content":[{"image":{"format":"png","source":{"bytes":"AAAA"}}}]}]}`, "messages[1].content[0].image"},
		{"toolUse without toolConfig", `{"messages":[` + hi + `,{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]}]}`, "toolConfig: must be defined"},
		{"orphan toolResult", `{"messages":[{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"text":"x"}]}}]}],` + tools + `}`, "messages[0].content[0].toolResult.toolUseId"},
		{"unanswered toolUse", `{"messages":[` + hi + `,{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},` + hi + `],` + tools + `}`,
			`messages[2].content: expected a toolResult block for toolUseId "a"`},
		{"bad tool name", `{"messages":[` + hi + `],"toolConfig":{"tools":[{"toolSpec":{"name":"get weather","inputSchema":{"json":{}}}}]}}`, "toolConfig.tools[0].toolSpec.name"},
		{"duplicate tool", `{"messages":[` + hi + `],"toolConfig":{"tools":[` + spec + `,` + spec + `]}}`, "toolConfig.tools[1].toolSpec.name: duplicate tool name"},
		{"schema not object", `{"messages":[` + hi + `],"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":[]}}}]}}`, "inputSchema.json: want an object"},
		{"no tools", `{"messages":[` + hi + `],"toolConfig":{"tools":[]}}`, "toolConfig.tools: is required"},
		{"choice unknown tool", `{"messages":[` + hi + `],"toolConfig":{"tools":[` + spec + `],"toolChoice":{"tool":{"name":"g"}}}}`, "toolConfig.toolChoice.tool.name"},
		{"choice two", `{"messages":[` + hi + `],"toolConfig":{"tools":[` + spec + `],"toolChoice":{"auto":{},"any":{}}}}`, "toolConfig.toolChoice: must have exactly one member"},
		{"guardrail", `{"messages":[` + hi + `],"guardrailConfig":{"guardrailIdentifier":"g","guardrailVersion":"1"}}`, "guardrailConfig: is not supported"},
		{"model field", `{"messages":[` + hi + `],"additionalModelRequestFields":{"thinking":{"type":"enabled"}}}`, "additionalModelRequestFields.thinking: unknown field"},
		{"latency", `{"messages":[` + hi + `],"performanceConfig":{"latency":"fast"}}`, "performanceConfig.latency"},
		{"metadata type", `{"messages":[` + hi + `],"requestMetadata":{"a":1}}`, "requestMetadata.a: want a string"},
	}
	for _, tc := range cases {
		_, err := ConverseToChat(testModel, []byte(tc.body), false)
		refused(t, tc.name, err, tc.field)
	}
	_, err := ConverseToChat("", []byte(`{"messages":[`+hi+`]}`), false)
	refused(t, "no model id", err, "modelId")
}

const (
	spec  = `{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}`
	tools = `"toolConfig":{"tools":[` + spec + `]}`
)

// A Converse request with every translated field becomes the chat body
// the package documentation describes.
func TestConverseToChatMapping(t *testing.T) {
	body := `{
		"system":[{"text":"Be brief."},{"cachePoint":{"type":"default"}},{"text":"Use <b>."}],
		"messages":[
			{"role":"user","content":[
				{"text":"Look:"},
				{"image":{"format":"png","source":{"bytes":"iVBORw=="}}},
				{"document":{"format":"pdf","name":"report","source":{"bytes":"JVBERi0="}}},
				{"document":{"format":"txt","name":"notes","source":{"text":"plain notes"}}}]},
			{"role":"assistant","content":[
				{"reasoningContent":{"reasoningText":{"text":"hmm","signature":"sig"}}},
				{"text":"Calling."},
				{"toolUse":{"toolUseId":"tooluse_1","name":"f","input":{"q":"x"}}}]},
			{"role":"user","content":[
				{"text":"Here."},
				{"toolResult":{"toolUseId":"tooluse_1","status":"error","content":[{"json":{"ok":false}}]}}]}],
		"inferenceConfig":{"maxTokens":64,"temperature":0,"topP":1,"stopSequences":["a","b"]},
		"toolConfig":{"tools":[{"toolSpec":{"name":"f","description":"Find","inputSchema":{"json":{"type":"object"}},"strict":true}},{"cachePoint":{"type":"default"}}],
			"toolChoice":{"tool":{"name":"f"}}},
		"additionalModelRequestFields":{"top_k":5},
		"additionalModelResponseFieldPaths":["/stop_sequence"],
		"requestMetadata":{"team":"a"},
		"performanceConfig":{"latency":"standard"},
		"serviceTier":{"type":"default"}
	}`
	out, err := ConverseToChat(testModel, []byte(body), true)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"` + testModel + `","messages":[
		{"role":"system","content":[{"type":"text","text":"Be brief."},{"type":"text","text":"Use <b>."}]},
		{"role":"user","content":[{"type":"text","text":"Look:"},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw=="}},
			{"type":"file","file":{"filename":"report.pdf","file_data":"data:application/pdf;base64,JVBERi0="}},
			{"type":"text","text":"plain notes"}]},
		{"role":"assistant","content":"Calling.","tool_calls":[{"id":"tooluse_1","type":"function","function":{"name":"f","arguments":"{\"q\":\"x\"}"}}]},
		{"role":"tool","content":[{"type":"text","text":"{\"ok\":false}"}],"tool_call_id":"tooluse_1"},
		{"role":"user","content":[{"type":"text","text":"Here."}]}],
		"max_tokens":64,"temperature":0,"top_p":1,"top_k":5,"stop":["a","b"],
		"tools":[{"type":"function","function":{"name":"f","description":"Find","parameters":{"type":"object"},"strict":true}}],
		"tool_choice":{"function":{"name":"f"},"type":"function"},
		"stream":true,"stream_options":{"include_usage":true}}`
	var got, exp any
	json.Unmarshal(out, &got)
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("chat body\n got %s\nwant %s", out, compactJSON(want))
	}
	if !bytes.Contains(out, []byte("Use <b>.")) {
		t.Errorf("HTML escaped: %s", out)
	}
}

func compactJSON(s string) string {
	var b bytes.Buffer
	json.Compact(&b, []byte(s))
	return b.String()
}

// Chat answers become Converse responses: each finish_reason its
// stopReason, reasoning before text, ids made valid; unreadable answers
// are InternalServerExceptions.
func TestChatToConverse(t *testing.T) {
	for finish, want := range map[string]string{
		"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
		"content_filter": "content_filtered", "stop_sequence": "stop_sequence", "other": "end_turn",
	} {
		out, err := ChatToConverse([]byte(`{"choices":[{"message":{"content":"x"},"finish_reason":"` + finish + `"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ StopReason string }
		json.Unmarshal(out, &r)
		if r.StopReason != want {
			t.Errorf("finish_reason %s: stopReason %s, want %s", finish, r.StopReason, want)
		}
	}
	out, err := ChatToConverse([]byte(`{"choices":[{"message":{"content":null,"reasoning_content":"why",
		"tool_calls":[{"id":"call.1/x","function":{"name":"f","arguments":""}}]},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"why"}}},` +
		`{"toolUse":{"toolUseId":"call_1_x","name":"f","input":{}}}]}},"stopReason":"tool_use",` +
		`"usage":{"inputTokens":3,"outputTokens":2,"totalTokens":5},"metrics":{"latencyMs":0}}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	for _, bad := range []string{`nope`, `{"choices":[]}`, `{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}}]}`} {
		var e *Error
		if _, err := ChatToConverse([]byte(bad)); !errors.As(err, &e) || e.Type != TypeInternal || e.Status != 500 {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

// InvokeModel bodies: Bedrock's rules for Claude (anthropic_version,
// required keys, no model or stream) and the strict reading, refused
// through the official client as its typed ValidationException.
func TestSDKInvokeModelRefuses(t *testing.T) {
	_, srv := newBedrock(t)
	c := client(srv, testKeyID, testSecret)
	cases := []struct{ name, body, field string }{
		{"no version", `{"max_tokens":5,"messages":[]}`, "required key [anthropic_version]"},
		{"other version", `{"anthropic_version":"2023-06-01","max_tokens":5,"messages":[]}`, "anthropic_version"},
		{"no max_tokens", `{"anthropic_version":"bedrock-2023-05-31","messages":[]}`, "required key [max_tokens]"},
		{"model", string(invokeBody(`"model":"claude-opus",`)), "extraneous key [model]"},
		{"escaped model", string(invokeBody(`"mod\u0065l":"claude-opus",`)), "extraneous key [model]"},
		{"stream", string(invokeBody(`"stream":false,`)), "extraneous key [stream]"},
		{"duplicate", string(invokeBody(`"max_tokens":9,`)), "max_tokens: duplicate key"},
		{"nested duplicate", `{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"messages":[{"role":"user","role":"assistant","content":"x"}]}`, "messages[0].role: duplicate"},
		{"beta type", string(invokeBody(`"anthropic_beta":"x",`)), "anthropic_beta: want an array"},
		{"not JSON", `{"anthropic_version":`, "not valid JSON"},
	}
	for _, tc := range cases {
		_, err := c.InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{
			ModelId: aws.String(testModel), ContentType: aws.String("application/json"), Body: []byte(tc.body),
		})
		var v *types.ValidationException
		if !errors.As(err, &v) || !strings.Contains(v.ErrorMessage(), tc.field) {
			t.Errorf("%s: err = %v, want a ValidationException naming %q", tc.name, err, tc.field)
		}
	}
	out, err := InvokeToMessages("m", invokeBody(`"anthropic_beta":["b"],"z":1,`), true)
	want := `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"Hi"}],"z":1,"stream":true}`
	if err != nil || string(out) != want {
		t.Errorf("InvokeToMessages = %s, %v; want %s", out, err, want)
	}
}

// The official client's own hostile inputs reach the translation as
// Bedrock would see them: a huge text is served, a Converse body with a
// bad field is refused as the SDK's typed ValidationException.
func TestSDKConverseRefuses(t *testing.T) {
	b, srv := newBedrock(t)
	c := client(srv, testKeyID, testSecret)
	big := strings.Repeat("tricky \"quotes\" \\ and \u2028 ", 40000)
	if _, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: []types.Message{userText(big)},
	}); err != nil {
		t.Fatal(err)
	}
	got := b.engine.last()["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if got != big {
		t.Errorf("the huge text changed on the way")
	}
	_, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:         aws.String(testModel),
		Messages:        []types.Message{userText("Hi")},
		InferenceConfig: &types.InferenceConfiguration{Temperature: aws.Float32(3)},
	})
	var v *types.ValidationException
	if !errors.As(err, &v) || !strings.Contains(v.ErrorMessage(), "inferenceConfig.temperature") {
		t.Errorf("err = %v", err)
	}
}
