package gemini

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func answer(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}, "X-Trace": {"t1"}},
		Body: io.NopCloser(strings.NewReader(body))}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	return string(b)
}

func TestChatAnswerGolden(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"text, thoughts, usage",
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me think.","thought":true},{"text":"Hello"},{"text":", world"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":3,"cachedContentTokenCount":4,"totalTokenCount":18},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
			`{"id":"chatcmpl-r1","object":"chat.completion","created":77,"model":"gemini-2.5-flash","choices":[{"index":0,"message":{"role":"assistant","content":"Hello, world","reasoning_content":"Let me think.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":8,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":3}}}`},
		{"function calls",
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"},{"functionCall":{"name":"now"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2}}`,
			`{"id":"chatcmpl-gemini","object":"chat.completion","created":77,"model":"gemini-x","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"},"extra_content":{"google":{"thought_signature":"c2ln"}}},{"id":"call_1","type":"function","function":{"name":"now","arguments":"{}"}}],"refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`},
		{"two candidates, length and safety",
			`{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"MAX_TOKENS","index":0},{"content":{"parts":[]},"finishReason":"SAFETY","index":1}],"responseId":"r2"}`,
			`{"id":"chatcmpl-r2","object":"chat.completion","created":77,"model":"gemini-x","choices":[{"index":0,"message":{"role":"assistant","content":"a","refusal":null},"logprobs":null,"finish_reason":"length"},{"index":1,"message":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":"content_filter"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`},
		{"blocked prompt",
			`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT","blockReasonMessage":"not allowed"},"usageMetadata":{"promptTokenCount":7}}`,
			`{"id":"chatcmpl-gemini","object":"chat.completion","created":77,"model":"gemini-x","choices":[{"index":0,"message":{"role":"assistant","content":"Gemini blocked the prompt (PROHIBITED_CONTENT): not allowed","refusal":"Gemini blocked the prompt (PROHIBITED_CONTENT): not allowed"},"logprobs":null,"finish_reason":"content_filter"}],"usage":{"prompt_tokens":7,"completion_tokens":0,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := ChatAnswer(answer(200, c.in), "gemini-x", 77)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, readAll(t, resp))
			}
			sameJSON(t, []byte(readAll(t, resp)), c.want)
		})
	}
}

func TestFinishReasons(t *testing.T) {
	for in, want := range map[string]string{
		"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter", "RECITATION": "content_filter",
		"BLOCKLIST": "content_filter", "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
		"IMAGE_SAFETY": "content_filter", "OTHER": "stop", "MALFORMED_FUNCTION_CALL": "stop", "NEW_REASON": "stop",
	} {
		if got := finishReason(in, false); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	if got := finishReason("STOP", true); got != "tool_calls" {
		t.Errorf("STOP with calls: got %s, want tool_calls", got)
	}
}

// An answer that cannot be read is a 502 in OpenAI's error shape, keeping
// the upstream's headers, never a 200 with a broken body.
func TestChatAnswerUnreadable(t *testing.T) {
	for _, body := range []string{``, `garbage`, `{"candidates":`, `[]`, `{}`, `{"candidates":[{"index":9}]}`,
		`{"candidates":[{"index":0},{"index":0}]}`, `{"error":{"code":500,"status":"INTERNAL"}}`} {
		resp, err := ChatAnswer(answer(200, body), "m", 1)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, resp)
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(got, `"code":"bad_upstream_response"`) ||
			!strings.Contains(got, `"type":"server_error"`) || resp.Header.Get("X-Trace") != "t1" {
			t.Errorf("%q: got %d %s %v", body, resp.StatusCode, got, resp.Header)
		}
	}
}

// An answer over the limit is a 502, read no further than the limit.
func TestChatAnswerBounded(t *testing.T) {
	defer func(n int) { maxAnswer = n }(maxAnswer)
	maxAnswer = 1 << 10
	src := &countingReader{r: strings.NewReader(`{"candidates":[{"content":{"parts":[{"text":"` + strings.Repeat("a", 1<<20) + `"}]}}]}`)}
	resp, err := ChatAnswer(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(src)}, "m", 1)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("got %d, want 502", resp.StatusCode)
	}
	if src.n > int64(maxAnswer)+4096 {
		t.Errorf("read %d bytes of a %d-byte limit", src.n, maxAnswer)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// A read error of the answer is an error, not an answer.
func TestChatAnswerReadError(t *testing.T) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(io.MultiReader(strings.NewReader(`{"cand`), errReader{}))}
	if _, err := ChatAnswer(resp, "m", 1); err == nil {
		t.Fatal("a failed read gave no error")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }
