package gemini

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/aierr"
)

// sseOf frames each data as a server-sent event, as Gemini's alt=sse does.
func sseOf(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\r\n\r\n")
	}
	return b.String()
}

func translateStream(t *testing.T, upstream string, includeUsage bool) (string, error) {
	t.Helper()
	resp := ChatStream(&http.Response{StatusCode: 200, Header: http.Header{"Content-Length": {"5"}},
		Body: io.NopCloser(strings.NewReader(upstream))}, "gemini-x", includeUsage, 9)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
		t.Errorf("framing: content-type %q, length %d %q", ct, resp.ContentLength, resp.Header.Get("Content-Length"))
	}
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

const chunkHead = `data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":9,"model":"gemini-2.5-flash","choices":[`

func TestChatStreamGolden(t *testing.T) {
	cases := []struct {
		name     string
		upstream string
		usage    bool
		want     []string // chunks after "data: …choices:["
	}{
		{"text and usage", sseOf(
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1","usageMetadata":{"promptTokenCount":4}}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo \"x\""}]},"finishReason":"STOP","index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1","usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"cachedContentTokenCount":1}}`),
			true, []string{
				`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{"content":"lo \"x\""},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
				`],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":0}}}`,
			}},
		{"thoughts and tool calls", sseOf(
			`{"candidates":[{"content":{"parts":[{"text":"Pondering","thought":true}]}}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"}]}}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"weather","args":{"city":"Rome"}}}]},"finishReason":"STOP"}],"modelVersion":"gemini-2.5-flash","responseId":"r1","usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":6,"thoughtsTokenCount":3}}`),
			true, []string{
				`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{"reasoning_content":"Pondering"},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_r1_0","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_r1_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`,
				`],"usage":{"prompt_tokens":4,"completion_tokens":9,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":3}}}`,
			}},
		{"blocked prompt, no usage asked", sseOf(
			`{"promptFeedback":{"blockReason":"SAFETY"},"modelVersion":"gemini-2.5-flash","responseId":"r1","usageMetadata":{"promptTokenCount":4}}`),
			false, []string{
				`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{"content":"Gemini blocked the prompt (SAFETY)","refusal":"Gemini blocked the prompt (SAFETY)"},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{},"logprobs":null,"finish_reason":"content_filter"}]}`,
			}},
		{"two candidates", sseOf(
			`{"candidates":[{"content":{"parts":[{"text":"a"}]},"index":0},{"content":{"parts":[{"text":"b"}]},"index":1}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`,
			`{"candidates":[{"content":{"parts":[]},"finishReason":"STOP","index":0},{"finishReason":"MAX_TOKENS","index":1}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`),
			false, []string{
				`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null}]}`,
				`{"index":1,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
				`{"index":1,"delta":{"content":"b"},"logprobs":null,"finish_reason":null}]}`,
				`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
				`{"index":1,"delta":{},"logprobs":null,"finish_reason":"length"}]}`,
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := translateStream(t, c.upstream, c.usage)
			if err != nil {
				t.Fatalf("read error %v after %s", err, got)
			}
			var want strings.Builder
			for _, w := range c.want {
				want.WriteString(chunkHead + w + "\n\n")
			}
			want.WriteString("data: [DONE]\n\n")
			if got != want.String() {
				t.Errorf("got\n%s\nwant\n%s", got, want.String())
			}
		})
	}
}

// A stream cut before its finishReason, at an event boundary or inside an
// event, is a read error wrapping io.ErrUnexpectedEOF and never ends in
// [DONE]; so is one candidate of two unfinished.
func TestChatStreamTruncated(t *testing.T) {
	whole := sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`, `{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}]}`)
	for _, up := range []string{
		"",
		sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`),
		whole[:len(whole)-3],
		whole[:len(whole)-20],
		sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]},"index":0,"finishReason":"STOP"},{"content":{"parts":[{"text":"b"}]},"index":1}]}`),
	} {
		got, err := translateStream(t, up, true)
		if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(got, "[DONE]") {
			t.Errorf("%q: got %v after %q, want io.ErrUnexpectedEOF and no [DONE]", up, err, got)
		}
	}
}

// Garbage is a read error, not content; an out-of-range candidate too.
func TestChatStreamGarbage(t *testing.T) {
	for _, up := range []string{
		"data: not json\n\n",
		sseOf(`{"candidates":[{"index":12,"finishReason":"STOP"}]}`),
		sseOf(`{"candidates":"x"}`),
	} {
		got, err := translateStream(t, up, false)
		if err == nil || strings.Contains(got, "[DONE]") {
			t.Errorf("%q: got %v after %q, want a read error", up, err, got)
		}
	}
}

// An event over the reader's limit ends the stream with an error: memory
// stays bounded whatever the upstream sends.
func TestChatStreamHugeEventBounded(t *testing.T) {
	up := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"" + strings.Repeat("a", 2<<20) + "\"}]}}]}\n\n"
	got, err := translateStream(t, up, false)
	if err == nil || len(got) > 0 {
		t.Errorf("got %v after %d bytes, want an error and nothing", err, len(got))
	}
}

// An error object in the stream becomes an OpenAI error event that aierr
// classifies as it would Google's error answer; the stream ends without
// [DONE] and without a read error.
func TestChatStreamErrorEvent(t *testing.T) {
	cases := []struct {
		event string
		kind  aierr.Kind
	}{
		{`{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, aierr.Throttle},
		{`{"error":{"code":503,"message":"The model is overloaded","status":"UNAVAILABLE"}}`, aierr.Outage},
		{`{"error":{"code":500,"message":"Internal error"}}`, aierr.Outage},
	}
	for _, c := range cases {
		up := sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"responseId":"r1"}`, c.event)
		got, err := translateStream(t, up, true)
		if err != nil {
			t.Fatalf("read error %v", err)
		}
		if strings.Contains(got, "[DONE]") {
			t.Errorf("an errored stream ended in [DONE]: %s", got)
		}
		events := strings.Split(strings.TrimSpace(got), "\n\n")
		last := strings.TrimPrefix(events[len(events)-1], "data: ")
		if !strings.HasPrefix(last, `{"error":{"message":`) {
			t.Fatalf("last event %s, want an OpenAI error", last)
		}
		if v := aierr.ClassifyEvent("", []byte(last)); v.Kind != c.kind {
			t.Errorf("%s: classified %v, want %v", last, v.Kind, c.kind)
		}
	}
}

// A read error of the upstream body is the stream's read error.
func TestChatStreamUpstreamReadError(t *testing.T) {
	resp := ChatStream(&http.Response{StatusCode: 200, Header: http.Header{},
		Body: io.NopCloser(io.MultiReader(strings.NewReader(sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`)), errReader{}))}, "m", false, 1)
	_, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("got %v, want the upstream's read error", err)
	}
}
