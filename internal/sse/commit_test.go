package sse

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixtureNames(t testing.TB) []string {
	t.Helper()
	names, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return names
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHasContentFixtures replays real provider streams. want has one
// letter per event: C for content (commits the stream), . for none, D for
// data: [DONE] (no content).
func TestHasContentFixtures(t *testing.T) {
	want := map[string]string{
		"openai_chat.sse":            ".CCCC.D",
		"openai_tool_calls.sse":      "CCCCD",
		"openai_refusal.sse":         ".CCCD",
		"openai_midstream_error.sse": "..",
		"azure_chat.sse":             "..CCC.D",
		"deepseek_reasoner.sse":      ".CCCCD",
		"deepseek_chat.sse":          ".CCD",
		"vllm_chat.sse":              ".CCC.D",
		"vllm_reasoning.sse":         ".CCCD",
		"vllm_error.sse":             "..D",
		"openrouter_chat.sse":        ".CC.D",
		"openrouter_reasoning.sse":   ".CCCD",
		"openrouter_error.sse":       "..",
		"anthropic_text.sse":         "...CC.C.",
		"anthropic_tool_use.sse":     ".C.CC.C.",
		"anthropic_thinking.sse":     "..CC..C.C.",
		"anthropic_overloaded.sse":   "...",
	}
	for _, path := range fixtureNames(t) {
		name := filepath.Base(path)
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no expectation", name)
			continue
		}
		r := NewReader(bytes.NewReader(readFixture(t, path)), Options{})
		var got strings.Builder
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			c := HasContent(ev)
			if c != decodeContent(ev.Name, ev.Data) {
				t.Errorf("%s event %d: HasContent and encoding/json disagree", name, got.Len())
			}
			switch {
			case IsDone(ev):
				got.WriteByte('D')
				if c {
					t.Errorf("%s: [DONE] has content", name)
				}
			case c:
				got.WriteByte('C')
			default:
				got.WriteByte('.')
			}
		}
		if got.String() != w {
			t.Errorf("%s: got %s, want %s", name, got.String(), w)
		}
	}
}

func TestHasContentRules(t *testing.T) {
	tests := []struct {
		name, event, data string
		want              bool
	}{
		// OpenAI-style chunks.
		{"role only", "", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, false},
		{"content null", "", `{"choices":[{"delta":{"content":null,"refusal":null}}]}`, false},
		{"content", "", `{"choices":[{"delta":{"content":"a"}}]}`, true},
		{"content escaped", "", `{"choices":[{"delta":{"content":"\n"}}]}`, true},
		{"content parts", "", `{"choices":[{"delta":{"content":[{"type":"text","text":"a"}]}}]}`, true},
		{"content empty parts", "", `{"choices":[{"delta":{"content":[ ]}}]}`, false},
		{"content number", "", `{"choices":[{"delta":{"content":1}}]}`, false},
		{"refusal", "", `{"choices":[{"delta":{"refusal":"no"}}]}`, true},
		{"refusal empty", "", `{"choices":[{"delta":{"refusal":""}}]}`, false},
		{"reasoning_content", "", `{"choices":[{"delta":{"reasoning_content":"hm"}}]}`, true},
		{"reasoning", "", `{"choices":[{"delta":{"reasoning":"hm"}}]}`, true},
		{"reasoning_details", "", `{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.encrypted"}]}}]}`, true},
		{"tool_calls", "", `{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}`, true},
		{"tool_calls empty", "", `{"choices":[{"delta":{"tool_calls":[]}}]}`, false},
		{"function_call", "", `{"choices":[{"delta":{"function_call":{"name":"f"}}}]}`, true},
		{"audio", "", `{"choices":[{"delta":{"audio":{"id":"a","transcript":"hi"}}}]}`, true},
		{"finish stop", "", `{"choices":[{"delta":{},"finish_reason":"stop"}]}`, true},
		{"finish length", "", `{"choices":[{"delta":{},"finish_reason":"length"}]}`, true},
		{"finish content_filter", "", `{"choices":[{"delta":{},"finish_reason":"content_filter"}]}`, true},
		{"finish error", "", `{"choices":[{"delta":{"content":""},"finish_reason":"error"}]}`, false},
		{"finish empty", "", `{"choices":[{"delta":{},"finish_reason":""}]}`, false},
		{"completions text", "", `{"object":"text_completion","choices":[{"text":"hi","index":0}]}`, true},
		{"second choice", "", `{"choices":[{"delta":{}},{"delta":{"content":"b"}}]}`, true},
		{"choice not object", "", `{"choices":[1,"x",null,{"delta":{"content":"b"}}]}`, true},
		{"choices null", "", `{"choices":null,"type":"content_block_delta"}`, false},
		{"empty choices", "", `{"choices":[],"usage":{"prompt_tokens":1}}`, false},
		{"error member", "", `{"error":{"message":"boom"},"choices":[{"delta":{"content":"a"}}]}`, false},
		{"error null", "", `{"error":null,"choices":[{"delta":{"content":"a"}}]}`, true},
		{"last duplicate wins", "", `{"choices":[{"delta":{"content":"a","content":""}}]}`, false},
		{"escaped key", "", `{"choices":[{"delta":{"con\u0074ent":"a"}}]}`, true},
		{"escaped finish", "", `{"choices":[{"finish_reason":"\u0065rror"}]}`, false},
		{"keys are exact", "", `{"choices":[{"delta":{"Content":"a"}}]}`, false},
		{"white space", "", " \n{ \"choices\" : [ { \"delta\" : { \"content\" : \"a\" } } ] }\r\n", true},
		// Not JSON objects.
		{"done", "", `[DONE]`, false},
		{"empty", "", ``, false},
		{"array", "", `[{"choices":[{"delta":{"content":"a"}}]}]`, false},
		{"invalid", "", `{"choices":[{"delta":{"content":"a"}}]`, false},
		{"trailing", "", `{"choices":[{"delta":{"content":"a"}}]} x`, false},
		{"invalid elsewhere", "", `{"choices":[{"delta":{"content":"a"}}],"x":01}`, false},
		{"control char", "", "{\"choices\":[{\"delta\":{\"content\":\"a\x01\"}}]}", false},
		{"deep", "", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `,"type":"content_block_delta"}`, true},
		{"as deep as encoding/json goes", "", `{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"type":"content_block_delta"}`, true},
		{"deeper than encoding/json goes", "", `{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"type":"content_block_delta"}`, false},
		// Keys as encoding/json reads them: decoded, the last duplicate
		// winning, whatever its type.
		{"escaped keys", "", `{"ch\u006fices":[{"d\u0065lta":{"c\u006fntent":"a"}}]}`, true},
		{"escaped error", "", `{"\u0065rror":{"message":"boom"},"choices":[{"delta":{"content":"a"}}]}`, false},
		{"escaped null", "", `{"error":n\u0075ll,"choices":[{"delta":{"content":"a"}}]}`, false},
		{"escaped type", "", `{"type":"content_block_d\u0065lta"}`, true},
		{"escaped block type", "content_block_start", `{"content_block":{"typ\u0065":"t\u0065xt","t\u0065xt":""}}`, false},
		{"escaped stop_reason", "message_delta", `{"delta":{"stop_r\u0065ason":"end_turn"}}`, true},
		{"key with invalid UTF-8", "", "{\"choices\":[{\"delta\":{\"content\xff\":\"a\"}}]}", false},
		{"key with U+FFFD", "", `{"choices":[{"delta":{"content\ufffd":"a"}}]}`, false},
		{"last error wins", "", `{"error":{"message":"boom"},"error":null,"choices":[{"delta":{"content":"a"}}]}`, true},
		{"last error wins, not null", "", `{"error":null,"error":0,"choices":[{"delta":{"content":"a"}}]}`, false},
		{"last choices win", "", `{"choices":[{"delta":{"content":"a"}}],"choices":[]}`, false},
		{"last choices win, with content", "", `{"choices":[],"choices":[{"delta":{"content":"a"}}]}`, true},
		{"last choices win, null", "", `{"choices":[{"delta":{"content":"a"}}],"choices":null,"type":"content_block_delta"}`, false},
		{"last delta wins", "", `{"choices":[{"delta":{"content":"a"},"delta":{}}]}`, false},
		{"last content wins, not a string", "", `{"choices":[{"delta":{"content":"a","content":7}}]}`, false},
		{"last finish_reason wins", "", `{"choices":[{"finish_reason":"stop","finish_reason":"error"}]}`, false},
		{"last type wins", "", `{"type":"content_block_delta","type":1}`, false},
		{"last content_block wins", "content_block_start", `{"content_block":{"type":"tool_use"},"content_block":{"type":"text","text":""}}`, false},
		{"last stop_reason wins", "message_delta", `{"delta":{"stop_reason":"end_turn","stop_reason":null}}`, false},
		{"invalid escape elsewhere", "", `{"choices":[{"delta":{"content":"a"}}],"x":"\q"}`, false},
		{"invalid value skipped", "", `{"choices":[{"delta":{"content":"a"},"logprobs":[1,]}]}`, false},
		// Anthropic events.
		{"message_start", "message_start", `{"type":"message_start","message":{"content":[]}}`, false},
		{"ping", "ping", `{"type": "ping"}`, false},
		{"text start empty", "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, false},
		{"text start", "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}`, true},
		{"thinking start", "content_block_start", `{"type":"content_block_start","content_block":{"type":"thinking","thinking":"","signature":""}}`, false},
		{"tool_use start", "content_block_start", `{"type":"content_block_start","content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`, true},
		{"redacted thinking start", "content_block_start", `{"type":"content_block_start","content_block":{"type":"redacted_thinking","data":"x"}}`, true},
		{"block without type", "content_block_start", `{"type":"content_block_start","content_block":{}}`, false},
		{"delta", "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, true},
		{"delta by type", "", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, true},
		{"block stop", "content_block_stop", `{"type":"content_block_stop","index":0}`, false},
		{"message_delta", "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, true},
		{"message_delta null", "message_delta", `{"type":"message_delta","delta":{"stop_reason":null},"usage":{}}`, false},
		{"message_stop", "message_stop", `{"type":"message_stop"}`, false},
		{"error event", "error", `{"type":"error","error":{"type":"overloaded_error"}}`, false},
		{"error event with content shape", "error", `{"choices":[{"delta":{"content":"a"}}]}`, false},
		{"name beats type", "ping", `{"type":"content_block_delta"}`, false},
		{"unknown", "", `{"type":"something_new","text":"a"}`, false},
	}
	for _, tt := range tests {
		ev := Event{Name: tt.event, Data: []byte(tt.data)}
		if got := HasContent(ev); got != tt.want {
			t.Errorf("%s: HasContent = %v, want %v", tt.name, got, tt.want)
		}
		if got := decodeContent(tt.event, []byte(tt.data)); got != tt.want {
			t.Errorf("%s: decodeContent = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestIsDone(t *testing.T) {
	for data, want := range map[string]bool{"[DONE]": true, "[DONE] ": false, "": false, `{"done":true}`: false} {
		if got := IsDone(Event{Data: []byte(data)}); got != want {
			t.Errorf("IsDone(%q) = %v", data, got)
		}
	}
}

func TestHasContentAllocs(t *testing.T) {
	for _, data := range []string{
		`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}],"usage":null}`,
		`{"ch\u006fices":[{"d\u0065lta":{"c\u006fntent":"\u00e9","content":"\ud83d\ude00"}}]}`,
		`{"type":"content_block_start","content_block":{"type":"thinking","thinking":"` + strings.Repeat(`\"`, 100) + `"}}`,
		`{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `,"type":"content_block_delta"}`,
	} {
		ev := Event{Data: []byte(data)}
		if n := testing.AllocsPerRun(20, func() { HasContent(ev) }); n != 0 {
			t.Errorf("%.40s…: %v allocations", data, n)
		}
	}
}
