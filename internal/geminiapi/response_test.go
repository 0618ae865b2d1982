package geminiapi

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestFromChat(t *testing.T) {
	chat := `{"id":"chatcmpl-9","object":"chat.completion","model":"gpt-x","choices":[
		{"index":0,"message":{"role":"assistant","content":"Hi <b>","reasoning_content":"hmm","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":" {\"a\": [1, 2]} "}}]},"finish_reason":"tool_calls"},
		{"index":1,"message":{"role":"assistant","content":null,"refusal":"no"},"finish_reason":"content_filter"},
		{"index":2,"message":{"role":"assistant","content":"cut"},"finish_reason":"length"}],
		"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":8}}}`
	out, err := FromChat([]byte(chat), "gemini-2.5-pro")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"candidates":[` +
		`{"content":{"parts":[{"text":"hmm","thought":true},{"text":"Hi <b>"},{"functionCall":{"id":"call_1","name":"f","args":{"a":[1,2]}}}],"role":"model"},"finishReason":"STOP","index":0},` +
		`{"content":{"parts":[{"text":"no"}],"role":"model"},"finishReason":"SAFETY","index":1},` +
		`{"content":{"parts":[{"text":"cut"}],"role":"model"},"finishReason":"MAX_TOKENS","index":2}],` +
		`"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":12,"totalTokenCount":30,"cachedContentTokenCount":4,"thoughtsTokenCount":8},` +
		`"modelVersion":"gemini-2.5-pro","responseId":"chatcmpl-9"}`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if out, _ := FromChat([]byte(`{"id":"x","model":"up","choices":[{"index":0,"message":{"content":"a"},"finish_reason":"weird"}]}`), ""); !strings.Contains(string(out), `"finishReason":"OTHER"`) || !strings.Contains(string(out), `"modelVersion":"up"`) {
		t.Errorf("unknown finish, no model: %s", out)
	}
	for _, bad := range []string{`[`, `{"choices":"x"}`, `{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"[1]"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"{\"a\""}}]}}]}`} {
		if _, err := FromChat([]byte(bad), "m"); !errors.Is(err, ErrBadChat) {
			t.Errorf("FromChat(%s) = %v, want ErrBadChat", bad, err)
		}
	}
}

func TestWriteError(t *testing.T) {
	w := httptest.NewRecorder()
	WriteError(w, 429, "", "slow \"down\"", RetryInfo(1500*time.Millisecond), json.RawMessage(`{bad`), json.RawMessage(` {"@type": "x"} `))
	if w.Code != 429 || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("status %d, content type %q", w.Code, w.Header().Get("Content-Type"))
	}
	want := `{"error":{"code":429,"message":"slow \"down\"","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"},{"@type":"x"}]}}`
	if w.Body.String() != want {
		t.Errorf("got  %s\nwant %s", w.Body, want)
	}
	for d, want := range map[time.Duration]string{37 * time.Second: `"37s"`, -time.Second: `"0s"`, 2*time.Second + 1: `"2s"`} {
		if got := string(RetryInfo(d)); !strings.Contains(got, `"retryDelay":`+want) || !json.Valid(RetryInfo(d)) {
			t.Errorf("RetryInfo(%v) = %s", d, got)
		}
	}
	e := &Error{Code: 400, Status: "INVALID_ARGUMENT", Message: "bad"}
	if e.Error() != "geminiapi: 400 INVALID_ARGUMENT: bad" {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestCountTokensFromChat(t *testing.T) {
	out, err := CountTokensFromChat([]byte(`{"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":3}}}`))
	if err != nil || string(out) != `{"totalTokens":9,"cachedContentTokenCount":3}` {
		t.Errorf("got %s, %v", out, err)
	}
	if _, err := CountTokensFromChat([]byte(`{"choices":[]}`)); !errors.Is(err, ErrBadChat) {
		t.Errorf("no usage: %v", err)
	}
}
