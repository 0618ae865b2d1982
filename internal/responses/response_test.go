package responses

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFromChatOutput(t *testing.T) {
	tests := []struct {
		name, message, finish string
		status, reason        string
		output                string // the expected output array
	}{{
		name:    "text",
		message: `{"role":"assistant","content":"Hello there"}`, finish: "stop",
		status: "completed",
		output: `[{"id":"msg_0123456789abcdef0000","type":"message","status":"completed","role":"assistant",
			"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello there"}]}]`,
	}, {
		name:    "text and tool calls",
		message: `{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"b","arguments":"{\"x\":1}"}}]}`,
		finish:  "tool_calls", status: "completed",
		output: `[{"id":"msg_0123456789abcdef0000","type":"message","status":"completed","role":"assistant",
			"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Checking."}]},
			{"id":"fc_0123456789abcdef0001","type":"function_call","status":"completed","arguments":"{}","call_id":"call_1","name":"a"},
			{"id":"fc_0123456789abcdef0002","type":"function_call","status":"completed","arguments":"{\"x\":1}","call_id":"call_2","name":"b"}]`,
	}, {
		name:    "tool calls only, one without an id",
		message: `{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"a","arguments":"{}"}}]}`,
		finish:  "tool_calls", status: "completed",
		output: `[{"id":"fc_0123456789abcdef0000","type":"function_call","status":"completed","arguments":"{}","call_id":"call_0123456789abcdef0000","name":"a"}]`,
	}, {
		name:    "refusal",
		message: `{"role":"assistant","content":null,"refusal":"I can't help with that."}`, finish: "stop",
		status: "completed",
		output: `[{"id":"msg_0123456789abcdef0000","type":"message","status":"completed","role":"assistant",
			"content":[{"type":"refusal","refusal":"I can't help with that."}]}]`,
	}, {
		name:    "cut by the token limit",
		message: `{"role":"assistant","content":"Once upon"}`, finish: "length",
		status: "incomplete", reason: "max_output_tokens",
		output: `[{"id":"msg_0123456789abcdef0000","type":"message","status":"incomplete","role":"assistant",
			"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Once upon"}]}]`,
	}, {
		name:    "content filter",
		message: `{"role":"assistant","content":""}`, finish: "content_filter",
		status: "incomplete", reason: "content_filter",
		output: `[{"id":"msg_0123456789abcdef0000","type":"message","status":"incomplete","role":"assistant",
			"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":""}]}]`,
	}, {
		name:    "content as parts, reasoning left out",
		message: `{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"hm"},{"type":"text","text":"b"}],"reasoning_content":"thoughts"}`,
		finish:  "stop", status: "completed",
		output: `[{"id":"msg_0123456789abcdef0000","type":"message","status":"completed","role":"assistant",
			"content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"ab"}]}]`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := FromChat(chatBody(tt.message, tt.finish), Request{Model: "asked"}, testID, created)
			if err != nil {
				t.Fatal(err)
			}
			v := decode(t, out)
			if got := str(field(v, "status")); got != tt.status {
				t.Errorf("status %q, want %q", got, tt.status)
			}
			if got := str(field(v, "incomplete_details", "reason")); got != tt.reason {
				t.Errorf("incomplete_details.reason %q, want %q", got, tt.reason)
			}
			want := decode(t, []byte(tt.output))
			if got := field(v, "output"); !equalValues(got, want) {
				t.Errorf("output:\n got %s\nwant %s", mustJSON(got), mustJSON(want))
			}
		})
	}
}

func TestFromChatObject(t *testing.T) {
	_, req := chat(t, `{"model":"alias","instructions":"Be kind.","input":"hi","tools":[{"type":"function","name":"f","parameters":{ "type" : "object" }}],
		"tool_choice":"required","parallel_tool_calls":false,"temperature":0.5,"top_p":0.8,"max_output_tokens":99,"max_tool_calls":2,
		"text":{"format":{"type":"json_object"},"verbosity":"high"},"reasoning":{"effort":"low","summary":"concise"},
		"metadata":{"k":"v"},"store":false,"user":"u","safety_identifier":"s","prompt_cache_key":"p","service_tier":"flex","truncation":"disabled"}`)
	out, err := FromChat(chatBody(`{"role":"assistant","content":"ok"}`, "stop"), req, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"resp_0123456789abcdef","object":"response","created_at":1767323045,"status":"completed","background":false,
		"error":null,"incomplete_details":null,"instructions":"Be kind.","max_output_tokens":99,"max_tool_calls":2,"model":"up-model",
		"output":[{"id":"msg_0123456789abcdef0000","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"ok"}]}],
		"parallel_tool_calls":false,"previous_response_id":null,"prompt_cache_key":"p","reasoning":{"effort":"low","summary":"concise"},
		"safety_identifier":"s","service_tier":"flex","store":false,"temperature":0.5,"text":{"format":{"type":"json_object"},"verbosity":"high"},
		"tool_choice":"required","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"top_logprobs":0,"top_p":0.8,
		"truncation":"disabled","usage":{"input_tokens":11,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,
		"output_tokens_details":{"reasoning_tokens":2},"total_tokens":18},"user":"u","metadata":{"k":"v"}}`
	if !sameJSON(t, out, []byte(want)) {
		t.Errorf("response:\n got %s\nwant %s", out, want)
	}
	if strings.Contains(string(out), `"output_text":`) {
		t.Errorf("the response has an output_text member; SDKs compute it: %s", out)
	}
}

func TestFromChatDefaults(t *testing.T) {
	// A request with nothing set echoes the API's defaults.
	_, req := chat(t, `{"model":"m","input":"q"}`)
	out, err := FromChat([]byte(`{"choices":[{"message":{"content":"x"}}]}`), req, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	v := decode(t, out)
	checks := map[string]string{
		"model": `"m"`, "instructions": "null", "max_output_tokens": "null", "parallel_tool_calls": "true",
		"previous_response_id": "null", "reasoning": `{"effort":null,"summary":null}`, "store": "true",
		"temperature": "1", "top_p": "1", "text": `{"format":{"type":"text"},"verbosity":"medium"}`,
		"tool_choice": `"auto"`, "tools": "[]", "truncation": `"disabled"`, "usage": "null", "metadata": "{}",
		"user": "null", "error": "null", "incomplete_details": "null",
	}
	for k, want := range checks {
		if got := field(v, k); !equalValues(got, decode(t, []byte(want))) {
			t.Errorf("%s = %s, want %s", k, mustJSON(got), want)
		}
	}
}

func TestFromChatTakesChoiceZero(t *testing.T) {
	answer := []byte(`{"model":"m","choices":[{"index":1,"message":{"content":"second"},"finish_reason":"stop"},{"index":0,"message":{"content":"first"},"finish_reason":"stop"}]}`)
	out, err := FromChat(answer, Request{}, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	if got := str(field(decode(t, out), "output", 0, "content", 0, "text")); got != "first" {
		t.Errorf("output text %q, want choice 0's", got)
	}
}

func TestFromChatBadAnswers(t *testing.T) {
	for _, answer := range []string{
		``, `null`, `[]`, `{"choices":`, `{"choices":[]}`, `{"choices":[{"index":0}]}`,
		`{"error":{"message":"overloaded","type":"server_error"}}`,
		`{"choices":[{"message":"text"}]}`,
		`{"choices":[{"message":{"content":"x","tool_calls":["x"]}}]}`,
		`{"choices":[{"message":{"content":"x"}}]} trailing`,
		`{"choices":[{"message":{"content":"x"},"finish_reason":"error"}]}`,
	} {
		_, err := FromChat([]byte(answer), Request{}, testID, created)
		if !errors.Is(err, ErrBadChat) {
			t.Errorf("FromChat(%s) error %v, want ErrBadChat", answer, err)
		}
	}
}

func TestFromChatUsage(t *testing.T) {
	answer := []byte(`{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":"many"}}`)
	out, err := FromChat(answer, Request{}, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":5}`
	if got := field(decode(t, out), "usage"); !equalValues(got, decode(t, []byte(want))) {
		t.Errorf("usage %s, want %s", mustJSON(got), want)
	}
}

// Echoed client values are written on one line, as valid UTF-8, whatever
// their spacing and bytes.
func TestFromChatEchoIsCompactAndValid(t *testing.T) {
	body := "{\"model\":\"m\",\"input\":\"q\",\"metadata\":{ \"k\" :\n\t\"v \xff w\" ,\"e\":\"a\\\"b\\\\\"},\r\n" +
		"\"tools\":[ {\"type\":\"function\",\"name\":\"f\",\"parameters\":{\"type\" : \"object\"} } ]}"
	_, req := chat(t, body)
	out, err := FromChat(chatBody(`{"content":"x"}`, "stop"), req, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(string(out), "\n\r\t") || !utf8.Valid(out) {
		t.Fatalf("response not one valid line: %q", out)
	}
	v := decode(t, out)
	if k, e := str(field(v, "metadata", "k")), str(field(v, "metadata", "e")); k != "v \ufffd w" || e != `a"b\` {
		t.Errorf("metadata %s", mustJSON(field(v, "metadata")))
	}
	if got := mustJSON(field(v, "tools")); got != `[{"name":"f","parameters":{"type":"object"},"type":"function"}]` {
		t.Errorf("tools %s", got)
	}
}
