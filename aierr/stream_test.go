package aierr

import (
	"bytes"
	"strings"
	"testing"
)

func TestClassifyEvent(t *testing.T) {
	tests := []struct {
		name, event, data string
		kind              Kind
		sub               SubKind
		status            int
	}{
		{"done", "", "[DONE]", Success, NoSub, 0},
		{"empty", "", "", Success, NoSub, 0},
		{"comment-like", "", ": keep-alive", Success, NoSub, 0},
		{"content", "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"an error occurred in the story"}}`, Success, NoSub, 0},
		{"stop", "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, Success, NoSub, 0},
		{"refusal", "message_delta", `{"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null}}`, ClientError, ContentFilter, 0},
		{"anthropic error without event name", "", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, Outage, NoSub, 0},
		{"anthropic rate limit in stream", "error", `{"type":"error","error":{"type":"rate_limit_error","message":"try again in 3s"}}`, Throttle, NoSub, 0},
		{"error event with text", "error", `upstream went away`, Outage, NoSub, 0},
		{"error event empty", "error", ``, Outage, NoSub, 0},
		{"openrouter 429 chunk", "", `{"error":{"code":429,"message":"Rate limit exceeded","metadata":{"provider_name":"X"}}}`, Throttle, NoSub, 429},
		{"openrouter finish error only", "", `{"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}`, Outage, NoSub, 0},
		{"gemini error chunk", "", `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`, Outage, NoSub, 503},
		{"gemini recitation", "", `{"candidates":[{"finishReason":"RECITATION"}]}`, ClientError, ContentFilter, 0},
		{"gemini stop", "", `{"candidates":[{"finishReason":"STOP"}]}`, Success, NoSub, 0},
	}
	for _, tt := range tests {
		v := ClassifyEvent(tt.event, []byte(tt.data))
		if v.Kind != tt.kind || v.Sub != tt.sub || v.Status != tt.status {
			t.Errorf("%s: got %v/%v status %d; want %v/%v status %d", tt.name, v.Kind, v.Sub, v.Status, tt.kind, tt.sub, tt.status)
		}
	}
	if v := ClassifyEvent("error", []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"try again in 3s"}}`)); v.Wait.Seconds() != 3 {
		t.Errorf("stream wait = %v; want 3s", v.Wait)
	}
}

func TestClassifyFinish(t *testing.T) {
	tests := []struct {
		name, body string
		kind       Kind
		sub        SubKind
	}{
		{"stop", `{"choices":[{"finish_reason":"stop"}]}`, Success, NoSub},
		{"length", `{"choices":[{"finish_reason":"length"}]}`, Success, NoSub},
		{"second choice filtered", `{"choices":[{"finish_reason":"stop"},{"finish_reason":"content_filter"}]}`, ClientError, ContentFilter},
		{"anthropic refusal", `{"type":"message","stop_reason":"refusal","content":[]}`, ClientError, ContentFilter},
		{"anthropic end_turn", `{"type":"message","stop_reason":"end_turn","content":[{"type":"text","text":"error"}]}`, Success, NoSub},
		{"error in a 200", `{"error":{"message":"Internal error","code":500}}`, Outage, NoSub},
		{"not json", `hello`, Success, NoSub},
		{"empty", ``, Success, NoSub},
	}
	for _, tt := range tests {
		v := ClassifyFinish([]byte(tt.body))
		if v.Kind != tt.kind || v.Sub != tt.sub {
			t.Errorf("%s: got %v/%v; want %v/%v", tt.name, v.Kind, v.Sub, tt.kind, tt.sub)
		}
	}
	// A content-filter finish may fail over; the caller decides per alias.
	if v := ClassifyFinish([]byte(`{"choices":[{"finish_reason":"content_filter"}]}`)); !v.OtherTarget || v.SameTarget || v.Breaker() != BreakerIgnore {
		t.Errorf("content filter policy: %+v", v)
	}
}

func TestJSONWalkerLimits(t *testing.T) {
	// Deep nesting stops the walk but keeps what came before.
	deep := `{"error":{"code":"queue_full","x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}`
	if v := Classify(503, nil, []byte(deep)); v.Kind != Capacity {
		t.Errorf("deep body: %v", v)
	}
	// A path longer than the buffer matches nothing, and the walk recovers
	// when it shrinks.
	longKey := strings.Repeat("k", 300)
	body := `{"` + longKey + `":{"error":{"code":"queue_full"}},"error":{"code":"insufficient_quota"}}`
	if v := Classify(500, nil, []byte(body)); v.Kind != Quota {
		t.Errorf("long path body: %v", v)
	}
	// Bytes past MaxBody are not read.
	big := `{"pad":"` + strings.Repeat("x", MaxBody) + `","error":{"code":"queue_full"}}`
	if v := Classify(500, nil, []byte(big)); v.Kind != Outage || v.Code != "" {
		t.Errorf("field past MaxBody was read: %v", v)
	}
	// Escaped quotes inside strings do not end them.
	esc := `{"error":{"message":"say \"code\": \"queue_full\"","code":"rate_limit_exceeded"}}`
	if v := Classify(429, nil, []byte(esc)); v.Kind != Throttle || v.Message != `say "code": "queue_full"` {
		t.Errorf("escaped body: %v %q", v, v.Message)
	}
}

// The shortcut for chunks whose only reasons are null never passes over a
// chunk the full reading would not call a Success: whatever the data,
// when onlyNullReasons lets it through (and neither "rror" nor an escape
// is in it), classifyBody says Success too.
func FuzzOnlyNullReasonsIsSuccess(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{},"finish_reason" : null }]}`,
		`{"choices":[{"delta":{},"finish_reason":"content_filter"}]}`,
		`{"choices":[{"delta":{"content":"a reason"},"finish_reason":null}]}`,
		`{"candidates":[{"finishReason":null}],"promptFeedback":{"blockReason":"SAFETY"}}`,
		`{"candidates":[{"finishReason":"SAFETY"}]}`,
		`{"type":"message_delta","delta":{"stop_reason":"refusal"}}`,
		`{"stopReason":"guardrail_intervened"}`,
		`{"finish_reason":nullx,"finish_reason":"content_filter"}`,
		`{"finish_reason":null,"finish_reason":"content_filter"}`,
		`[{"finish_reason":null}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		if len(data) == 0 || data[0] != '{' && data[0] != '[' || len(data) > MaxBody {
			return
		}
		if bytes.Contains(data, []byte("rror")) || bytes.Contains(data, []byte(`\u`)) || !onlyNullReasons(data) {
			return
		}
		var c Classifier
		if v := c.classifyBody(0, data); v.Kind != Success {
			t.Fatalf("%q: the shortcut says Success, the full reading %v", data, v.Kind)
		}
	})
}

func TestOnlyNullReasons(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"choices":[{"delta":{"content":"x"}}]}`, true},
		{`{"choices":[{"delta":{"content":"x"},"finish_reason":null}]}`, true},
		{`{"finish_reason" :` + "\n\t" + ` null}`, true},
		{`{"finish_reason":"stop"}`, false},
		{`{"finish_reason":"content_filter"}`, false},
		{`{"content":"the reason is"}`, false},
		{`{"content":"\"finish_reason\":null"}`, false},
		{`{"finish_reason":nullx}`, false},
		{`{"finish_reason":null,"stop_reason":"refusal"}`, false},
		{`{"finish_reason":null`, true},
	} {
		if got := onlyNullReasons([]byte(tc.in)); got != tc.want {
			t.Errorf("onlyNullReasons(%s) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
