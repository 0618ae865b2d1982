package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
	"github.com/fuseboxhq/fusebox/internal/router"
)

const claudeModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

const claudeMessage = `{"id":"msg_bdrk_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
 "content":[{"type":"text","text":"Hi!"}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":2}}`

// claudeStream is an InvokeModelWithResponseStream answer: each Anthropic
// event in a chunk.
func claudeStream(t testing.TB, extra ...frame) []byte {
	frames := []frame{
		chunkFrame(`{"type":"message_start","message":{"id":"msg_bdrk_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}`),
		chunkFrame(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		chunkFrame(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`),
		chunkFrame("{\"type\":\"content_block_delta\",\n \"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}"),
	}
	frames = append(frames, extra...)
	if len(extra) == 0 {
		frames = append(frames,
			chunkFrame(`{"type":"content_block_stop","index":0}`),
			chunkFrame(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`),
			chunkFrame(`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":9,"outputTokenCount":2}}`))
	}
	return encode(t, frames...)
}

func TestClaudeChatGoesToInvokeModelWithTheMessagesBody(t *testing.T) {
	f := newFake(t, jsonAnswer(200, claudeMessage))
	u := newUpstream(t, f, func(c *Config) { c.Header = http.Header{"Anthropic-Beta": {"context-1m-2025-08-07"}} })
	c := chatCall(`{"model":"`+claudeModel+`","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"max_tokens":20,"user":"u1"}`, false)
	c.Header = http.Header{"Anthropic-Beta": {"interleaved-thinking-2025-05-14, context-1m-2025-08-07"}}
	resp := send(t, u, c)
	var got chatCompletion
	json.Unmarshal([]byte(readBody(t, resp)), &got)
	if *got.Choices[0].Message.Content != "Hi!" || got.Usage.PromptTokens != 9 {
		t.Errorf("answer = %+v", got)
	}
	r := f.last(t)
	if r.Path != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke" {
		t.Errorf("path = %q", r.Path)
	}
	if r.Header.Get("Anthropic-Beta") != "" {
		t.Error("anthropic-beta went as a header; Bedrock reads it from the body")
	}
	var body, want map[string]any
	json.Unmarshal(r.Body, &body)
	json.Unmarshal([]byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":20,"system":"Be brief.",
		"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}],
		"anthropic_beta":["context-1m-2025-08-07","interleaved-thinking-2025-05-14"]}`), &want)
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %s", r.Body)
	}
}

func TestClaudeChatStream(t *testing.T) {
	f := newFake(t, streamAnswer(claudeStream(t)))
	u := newUpstream(t, f)
	resp := send(t, u, chatCall(`{"model":"`+claudeModel+`","messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}`, true))
	got := readBody(t, resp)
	if !strings.Contains(got, `"delta":{"content":"Hel"}`) || !strings.Contains(got, `"delta":{"content":"lo"}`) ||
		!strings.Contains(got, `"finish_reason":"stop"`) || !strings.Contains(got, `"completion_tokens":2`) || !strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Errorf("stream = %s", got)
	}
	if r := f.last(t); !strings.HasSuffix(r.Path, "/invoke-with-response-stream") || strings.Contains(string(r.Body), `"stream"`) {
		t.Errorf("sent %s %s; want invoke-with-response-stream and no stream key", r.Path, r.Body)
	}
}

func TestNativeMessagesPassThrough(t *testing.T) {
	f := newFake(t, jsonAnswer(200, claudeMessage))
	u := newUpstream(t, f)
	if !u.SpeaksMessages(claudeModel) || !u.SpeaksMessages("arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.anthropic.claude-opus-4-1") || u.SpeaksMessages("amazon.nova-pro-v1:0") {
		t.Error("SpeaksMessages is wrong about a model")
	}
	// A hostile body: an escaped "stream", case variants, a repeated key.
	native := `{"model":"` + claudeModel + `","str\u0065am":false,"Model":"x","max_tokens":1,"max_tokens":64,` +
		`"messages":[{"role":"user","content":"Hi"}],"anthropic_beta":["b1"],"anthropic_version":"2023-06-01","metadata":{"user_id":"u"}}`
	resp := send(t, u, &router.Call{Path: "/messages", Model: claudeModel, Native: []byte(native),
		Header: http.Header{"Anthropic-Beta": {"b2"}}})
	if got := readBody(t, resp); got != claudeMessage {
		t.Errorf("native answer = %s; want it as Bedrock sent it", got)
	}
	want := `{"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"Hi"}],"anthropic_beta":["b2","b1"]}`
	if got := string(f.last(t).Body); got != want {
		t.Errorf("sent  %s\nwant %s", got, want)
	}
}

func TestNativeStreamIsAnthropicSSE(t *testing.T) {
	f := newFake(t, streamAnswer(claudeStream(t)))
	u := newUpstream(t, f)
	resp := send(t, u, &router.Call{Path: "/messages", Model: claudeModel, Stream: true,
		Native: []byte(`{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"Hi"}]}`)})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	got := readBody(t, resp)
	wantLines := []string{
		"event: message_start\ndata: {\"type\":\"message_start\"",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"",
	}
	for _, w := range wantLines {
		if !strings.Contains(got, w) {
			t.Errorf("stream lacks %q:\n%s", w, got)
		}
	}
}

func TestStreamExceptionsBecomeErrorEvents(t *testing.T) {
	for exc, kind := range map[string]aierr.Kind{
		"throttlingException":         aierr.Throttle,
		"serviceUnavailableException": aierr.Outage,
		"internalServerException":     aierr.Outage,
		"modelStreamErrorException":   aierr.Outage,
		"modelTimeoutException":       aierr.Outage,
		"validationException":         aierr.ClientError,
	} {
		t.Run(exc, func(t *testing.T) {
			f := newFake(t, streamAnswer(claudeStream(t, exceptionFrame(exc, "it broke"))))
			u := newUpstream(t, f)
			resp := send(t, u, &router.Call{Path: "/messages", Model: claudeModel, Stream: true, Native: []byte(`{"max_tokens":5,"messages":[]}`)})
			got := readBody(t, resp)
			i := strings.Index(got, "event: error\ndata: ")
			if i < 0 {
				t.Fatalf("no error event in %s", got)
			}
			data := strings.TrimSpace(got[i+len("event: error\ndata: "):])
			if v := aierr.ClassifyEvent("error", []byte(data)); v.Kind != kind {
				t.Errorf("%s: verdict %v; want %v", data, v, kind)
			}
			// The chat translation ends without [DONE], as an error.
			resp = send(t, u, chatCall(`{"model":"`+claudeModel+`","messages":[{"role":"user","content":"Hi"}]}`, true))
			chat := readBody(t, resp)
			if strings.Contains(chat, "[DONE]") || !strings.Contains(chat, `data: {"error":`) {
				t.Errorf("chat stream = %s; want an error event and no [DONE]", chat)
			}
		})
	}
}

func TestClaudeStreamCutBeforeMessageStopIsAnError(t *testing.T) {
	f := newFake(t, streamAnswer(claudeStream(t, chunkFrame(`{"type":"ping"}`))))
	u := newUpstream(t, f)
	resp := send(t, u, &router.Call{Path: "/messages", Model: claudeModel, Stream: true, Native: []byte(`{"max_tokens":5,"messages":[]}`)})
	_, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error %v; want io.ErrUnexpectedEOF", err)
	}
}

func TestCountTokensIsRefused(t *testing.T) {
	f := newFake(t, jsonAnswer(200, `{}`))
	u := newUpstream(t, f)
	_, err := u.Send(context.Background(), &router.Call{Path: "/messages/count_tokens", Model: claudeModel, Native: []byte(`{}`)})
	var un *router.Unservable
	if !errors.As(err, &un) || un.Code != CodeUnsupportedOperation {
		t.Errorf("err = %v; want unsupported_operation", err)
	}
}

func TestClaudeDefaultMaxTokensFollowTheModelName(t *testing.T) {
	if got, want := claudeMaxTokens("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), anthropic.DefaultMaxTokens("claude-sonnet-4-5"); got != want || got == anthropic.FallbackMaxTokens {
		t.Errorf("claudeMaxTokens = %d; want the table's %d for claude-sonnet-", got, want)
	}
	f := newFake(t, jsonAnswer(200, claudeMessage))
	u := newUpstream(t, f)
	send(t, u, chatCall(`{"model":"anthropic.claude-3-haiku-20240307-v1:0","messages":[{"role":"user","content":"Hi"}]}`, false))
	var body struct {
		MaxTokens int `json:"max_tokens"`
	}
	json.Unmarshal(f.last(t).Body, &body)
	if body.MaxTokens != anthropic.DefaultMaxTokens("claude-3-haiku") {
		t.Errorf("max_tokens %d", body.MaxTokens)
	}
}
