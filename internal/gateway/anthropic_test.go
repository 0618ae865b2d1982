package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// anthropicOK answers a Messages request in Anthropic's shape, streamed or
// not.
func anthropicOK(text string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("X-Api-Key") == "" || r.Header.Get("Anthropic-Version") == "" {
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request shape"}}`)
			return
		}
		if r.Header.Get("Accept") == "text/event-stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
				`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`event: ping` + "\n" + `data: {"type":"ping"}`,
				`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}`,
				`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
				`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
				`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
			} {
				io.WriteString(w, ev+"\n\n")
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"`+text+`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":3}}`)
	}
}

const anthropicLadder = `
providers:
  claude: {type: anthropic, base_url: "%s", keys: [ak1]}
  openai: {type: openai, base_url: "%s", keys: [ok1]}
models:
  - name: smart
    targets:
      - {provider: claude, model: claude-opus-4-7}
      - {provider: openai, model: gpt-4.1}
    breaker: {consecutive: 3}
    retry: {attempts: 1}
`

// The official OpenAI client, through the gateway, to an Anthropic target:
// requests are translated to Messages and answers back, streams included.
func TestOpenAIClientToAnthropicTarget(t *testing.T) {
	claude := newUpstream(t, anthropicOK("hello from claude"))
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from claude" {
		t.Fatalf("%q, %v", text(got), err)
	}
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	var b strings.Builder
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 {
			b.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if st.Err() != nil || b.String() != "hello from claude" {
		t.Fatalf("stream %q, %v", b.String(), st.Err())
	}
	if oai.calls() != 0 {
		t.Fatal("the OpenAI target was called")
	}
}

// A 529 overload from the Anthropic target fails over to the OpenAI one.
func TestAnthropicOverloadFailsOver(t *testing.T) {
	claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	})
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from openai" {
		t.Fatalf("%q, %v", text(got), err)
	}
}
