package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// Regression tests for what FuzzFromMessagesRequest found; each names the
// bug. user wraps content in a one-message request.

func user(content string) string {
	return `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":` + content + `}]}`
}

// translate returns FromMessagesRequest's body decoded, or fails.
func translate(t *testing.T, body string) map[string]any {
	t.Helper()
	out, err := FromMessagesRequest([]byte(body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// refusal returns FromMessagesRequest's RequestError, or fails.
func refusal(t *testing.T, body string) *RequestError {
	t.Helper()
	_, err := FromMessagesRequest([]byte(body))
	var re *RequestError
	if !errors.As(err, &re) {
		t.Fatalf("%.200s: got %v, want a RequestError", body, err)
	}
	return re
}

// Nested keys were read by encoding/json's struct decoding, which matches
// "Text" and "ROLE" as text and role; Anthropic does not.
func TestFromMessagesRequestExactKeys(t *testing.T) {
	m := translate(t, `{"model":"m","max_tokens":1,"messages":[{"role":"user","Role":"assistant","content":[{"type":"text","text":"shown","Text":"smuggled"}]}]}`)
	msg := m["messages"].([]any)[0].(map[string]any)
	if msg["role"] != "user" || msg["content"].([]any)[0].(map[string]any)["text"] != "shown" {
		t.Errorf("case variants were read: %v", msg)
	}
	// Escapes are decoded, and of duplicates the last counts.
	m = translate(t, `{"model":"m","max_tokens":1,"messages":[{"r\u006fle":"user","content":[{"type":"text","text":"one","t\u0065xt":"two"}]}]}`)
	if got := m["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "two" {
		t.Errorf("text %v, want two", got)
	}
}

// model, max_tokens, temperature, top_p and stop_sequences were copied
// raw, so a translation could hold a model object or max_tokens 1e400
// that no chat request decodes.
func TestFromMessagesRequestTypedScalars(t *testing.T) {
	for body, field := range map[string]string{
		`{"model":{"n":1},"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`:                      "model",
		`{"model":"m","max_tokens":"100","messages":[{"role":"user","content":"x"}]}`:                      "max_tokens",
		`{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"x"}]}`:                        "max_tokens",
		`{"model":"m","max_tokens":1e400,"messages":[{"role":"user","content":"x"}]}`:                      "max_tokens",
		`{"model":"m","max_tokens":99999999999999999999,"messages":[{"role":"user","content":"x"}]}`:       "max_tokens",
		`{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`:                          "max_tokens",
		`{"model":"m","max_tokens":1,"temperature":"0.5","messages":[{"role":"user","content":"x"}]}`:      "temperature",
		`{"model":"m","max_tokens":1,"top_p":1e400,"messages":[{"role":"user","content":"x"}]}`:            "top_p",
		`{"model":"m","max_tokens":1,"stop_sequences":["a",1],"messages":[{"role":"user","content":"x"}]}`: "stop_sequences[1]",
		`{"model":"m","max_tokens":1,"stream":"true","messages":[{"role":"user","content":"x"}]}`:          "stream",
	} {
		if re := refusal(t, body); re.Field != field || re.Code != CodeInvalidValue {
			t.Errorf("%s: refused %q (%s), want %q", body, re.Field, re.Message, field)
		}
	}
	m := translate(t, `{"model":"m","max_tokens":1e3,"temperature":0.5,"messages":[{"role":"user","content":"x"}]}`)
	if m["max_tokens"] != 1000.0 || m["temperature"] != 0.5 {
		t.Errorf("max_tokens %v, temperature %v", m["max_tokens"], m["temperature"])
	}
}

// Errors named the array ("messages") for a problem deep inside it, said
// "not valid JSON at offset 0" for a missing content, and let a turn whose
// content was null vanish.
func TestFromMessagesRequestFieldPaths(t *testing.T) {
	for body, want := range map[string]string{
		user(`[{"type":"text","text":5}]`):                          `"messages[0].content[0].text": want a string, got a number`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"user"}]}`: `"messages[0].content": is required`,
		user(`null`):           `"messages[0].content": is required`,
		user(`[null]`):         `"messages[0].content[0]": want an object, got null`,
		user(`[{"text":"x"}]`): `"messages[0].content[0].type": is required`,
		user(`[{"type":"image","source":{"type":"base64","data":"AA"}}]`):                                                 `"messages[0].content[0].source.media_type": is required`,
		user(`[{"type":"image","source":"https://x"}]`):                                                                   `"messages[0].content[0].source": want an object, got a string`,
		user(`[{"type":"tool_result","content":"x"}]`):                                                                    `"messages[0].content[0].tool_use_id": is required`,
		user(`[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}]}]`):                                   `"messages[0].content[0].content[0].type": only text`,
		`{"model":"m","max_tokens":1,"messages":[{"role":1,"content":"x"}]}`:                                              `"messages[0].role": want a string, got a number`,
		`{"model":"m","max_tokens":1,"messages":{"role":"user"}}`:                                                         `"messages": want an array, got an object`,
		`{"model":"m","max_tokens":1,"metadata":{"user_id":7},"messages":[{"role":"user","content":"x"}]}`:                `"metadata.user_id": want a string, got a number`,
		`{"model":"m","max_tokens":1,"tool_choice":{"type":"tool"},"messages":[{"role":"user","content":"x"}]}`:           `"tool_choice.name": is required`,
		`{"model":"m","max_tokens":1,"tools":[{"name":"f","input_schema":5}],"messages":[{"role":"user","content":"x"}]}`: `"tools[0].input_schema": want an object, got a number`,
		`{"model":"m","max_tokens":1,"tools":[{"description":"d"}],"messages":[{"role":"user","content":"x"}]}`:           `"tools[0].name": is required`,
	} {
		re := refusal(t, body)
		if !strings.Contains(re.Message, want) || !strings.Contains(re.Message, `"`+re.Field+`"`) {
			t.Errorf("%s:\n got %s (field %s)\nwant %s", body, re.Message, re.Field, want)
		}
	}
}

// tool_use input was copied whatever it was, so the arguments string of a
// translation could be "[1,2]" or a JSON string instead of an object.
func TestFromMessagesRequestToolInputObject(t *testing.T) {
	for _, input := range []string{`[1,2]`, `"{\"a\":1}"`, `5`} {
		body := `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":` + input + `}]}]}`
		if re := refusal(t, body); re.Field != "messages[0].content[0].input" {
			t.Errorf("input %s: refused %q", input, re.Field)
		}
	}
	m := translate(t, `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":null}]}]}`)
	call := m["messages"].([]any)[0].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if args := call["function"].(map[string]any)["arguments"]; args != "{}" {
		t.Errorf("arguments %v for a null input", args)
	}
}

// A tool_result with empty content became a tool message with content
// [], which chat APIs refuse.
func TestFromMessagesRequestEmptyToolResult(t *testing.T) {
	m := translate(t, user(`[{"type":"tool_result","tool_use_id":"t","content":[]}]`))
	if got := m["messages"].([]any)[0].(map[string]any)["content"]; got != "" {
		t.Errorf("content %#v, want \"\"", got)
	}
}

// Empty content passed (a user turn vanished; messages [] beside a system
// prompt gave a chat request with only the system message).
func TestFromMessagesRequestEmptyContent(t *testing.T) {
	for body, field := range map[string]string{
		user(`[]`): "messages[0].content",
		`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[]},{"role":"user","content":"x"}]}`: "messages[0].content",
		`{"model":"m","max_tokens":1,"system":"s","messages":[]}`:                                                   "messages",
	} {
		if re := refusal(t, body); re.Field != field {
			t.Errorf("%s: refused %q (%s), want %q", body, re.Field, re.Message, field)
		}
	}
	// A final assistant turn may be empty: a prefill.
	translate(t, `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[]}]}`)
}

// tools [] and stop_sequences [] became "tools":null and "stop":[].
func TestFromMessagesRequestEmptyLists(t *testing.T) {
	m := translate(t, `{"model":"m","max_tokens":1,"tools":[],"stop_sequences":[],"messages":[{"role":"user","content":"x"}]}`)
	if _, ok := m["tools"]; ok {
		t.Errorf("tools %v", m["tools"])
	}
	if _, ok := m["stop"]; ok {
		t.Errorf("stop %v", m["stop"])
	}
}

// input_schema was copied raw, invalid UTF-8 and all, so the translation
// was not valid UTF-8 JSON.
func TestFromMessagesRequestInvalidUTF8(t *testing.T) {
	body := "{\"model\":\"m\xff\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"x\xc3\"}],\"tools\":[{\"name\":\"f\",\"input_schema\":{\"description\":\"\xff\xfe\"}}]}"
	out, err := FromMessagesRequest([]byte(body))
	if err != nil || !utf8.Valid(out) || !json.Valid(out) {
		t.Errorf("%v: %q", err, out)
	}
}

// Refusals said "not supported by Anthropic targets", the forward
// direction's words, and quoted a client's key or type however long.
func TestFromMessagesRequestRefusalWording(t *testing.T) {
	long := strings.Repeat("x", 5000)
	re := refusal(t, `{"model":"m","max_tokens":1,"`+long+`":1,"messages":[{"role":"user","content":"x"}]}`)
	if !strings.Contains(re.Message, "not supported for OpenAI-compatible targets") || len(re.Message) > 200 || len(re.Field) > 100 {
		t.Errorf("field %d bytes, message %q", len(re.Field), re.Message)
	}
	re = refusal(t, user(`[{"type":"`+long+`"}]`))
	if re.Field != "messages[0].content[0].type" || len(re.Message) > 200 {
		t.Errorf("field %q, message %q", re.Field, re.Message)
	}
}
