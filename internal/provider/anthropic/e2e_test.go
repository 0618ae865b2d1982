package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// fakeAnthropic answers Messages requests with canned answers: a tool_use
// when tools are offered and no tool result is in the conversation, text
// otherwise; streamed when asked. It records the last request body.
type fakeAnthropic struct {
	t    *testing.T
	last map[string]any
}

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "sk-ant" || r.Header.Get("Anthropic-Version") == "" {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"bad key"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Stream   bool `json:"stream"`
		Tools    []any
		Messages []struct {
			Content []struct {
				Type      string
				ToolUseID string `json:"tool_use_id"`
			}
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("upstream got %s: %v", body, err)
	}
	json.Unmarshal(body, &f.last)
	toolResult := ""
	for _, m := range req.Messages {
		for _, c := range m.Content {
			if c.Type == "tool_result" {
				toolResult = c.ToolUseID
			}
		}
	}
	useTool := len(req.Tools) > 0 && toolResult == ""
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		if useTool {
			io.WriteString(w, `{"id":"msg_t","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","usage":{"input_tokens":20,"output_tokens":9}}`)
			return
		}
		io.WriteString(w, `{"id":"msg_e","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"It is sunny`+toolResult+`."}],"stop_reason":"end_turn","usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":4}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(name, data string) {
		io.WriteString(w, "event: "+name+"\ndata: "+data+"\n\n")
		fl.Flush()
	}
	send("message_start", `{"type":"message_start","message":{"id":"msg_s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":20,"output_tokens":1}}}`)
	send("ping", `{"type":"ping"}`)
	if useTool {
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{}}}`)
		for _, p := range []string{`{\"ci`, `ty\": \"Pa`, `ris\"}`} {
			send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"`+p+`"}}`)
		}
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}`)
	} else {
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for _, p := range []string{"It is ", "sunny."} {
			send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+p+`"}}`)
		}
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`)
	}
	send("message_stop", `{"type":"message_stop"}`)
}

// gatewayHandler stands in for the gateway: it hands the client's body to
// the Upstream and copies the answer back, flushing as it goes.
func gatewayHandler(t *testing.T, u router.Upstream) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var head struct{ Stream bool }
		json.Unmarshal(body, &head)
		resp, err := u.Send(r.Context(), &router.Call{
			Path: strings.TrimPrefix(r.URL.Path, "/v1"), Model: "claude-sonnet-4-5", Key: "sk-ant",
			Body: body, Stream: head.Stream,
		})
		var un *router.Unservable
		if errors.As(err, &un) { // as the gateway answers when no target can serve
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": un.Message, "type": "invalid_request_error", "param": un.Param, "code": un.Code}})
			return
		}
		if err != nil {
			t.Errorf("Send: %v", err)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 512)
		for {
			n, err := resp.Body.Read(buf)
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}
}

func newE2E(t *testing.T) (openai.Client, *fakeAnthropic) {
	fake := &fakeAnthropic{t: t}
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	u, err := New(Config{BaseURL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	gw := httptest.NewServer(gatewayHandler(t, u))
	t.Cleanup(gw.Close)
	client := openai.NewClient(option.WithBaseURL(gw.URL+"/v1/"), option.WithAPIKey("fusebox-key"), option.WithMaxRetries(0))
	return client, fake
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("Weather for a city"),
	Parameters: shared.FunctionParameters{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}},
	},
})

func TestE2EChat(t *testing.T) {
	client, fake := newE2E(t)
	c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "smart",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Be brief."),
			openai.UserMessage("Weather?"),
		},
		MaxTokens: openai.Int(100),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != "It is sunny." || c.Choices[0].FinishReason != "stop" {
		t.Errorf("answer %q %q", got, c.Choices[0].FinishReason)
	}
	if c.Usage.PromptTokens != 25 || c.Usage.PromptTokensDetails.CachedTokens != 5 || c.Usage.TotalTokens != 29 {
		t.Errorf("usage %+v", c.Usage)
	}
	if fake.last["system"] != "Be brief." || fake.last["max_tokens"] != float64(100) {
		t.Errorf("upstream request %v", fake.last)
	}
}

func TestE2EStream(t *testing.T) {
	client, _ := newE2E(t)
	s := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "smart",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather?")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for s.Next() {
		acc.AddChunk(s.Current())
		chunks++
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "It is sunny." || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("answer %q %q after %d chunks", got, acc.Choices[0].FinishReason, chunks)
	}
	if acc.Usage.PromptTokens != 20 || acc.Usage.CompletionTokens != 3 {
		t.Errorf("usage %+v", acc.Usage)
	}
}

func TestE2EToolUse(t *testing.T) {
	client, fake := newE2E(t)
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "smart",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weatherTool},
	}
	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	calls := c.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris"}` ||
		c.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("tool calls %+v, finish %q", calls, c.Choices[0].FinishReason)
	}
	params.Messages = append(params.Messages, c.Choices[0].Message.ToParam(), openai.ToolMessage("18C", calls[0].ID))
	c, err = client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != "It is sunnytoolu_9." {
		t.Errorf("answer %q: the tool result did not reach the upstream paired with its call", got)
	}
	msgs := fake.last["messages"].([]any)
	if len(msgs) != 3 {
		t.Errorf("upstream messages %v", msgs)
	}

	// The same first turn, streamed: arguments arrive in fragments.
	s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "smart", Messages: params.Messages[:1], Tools: params.Tools,
	})
	var acc openai.ChatCompletionAccumulator
	var finished []openai.FinishedChatCompletionToolCall
	for s.Next() {
		acc.AddChunk(s.Current())
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	tcs := acc.Choices[0].Message.ToolCalls
	if len(tcs) != 1 || tcs[0].ID != "toolu_9" || tcs[0].Function.Arguments != `{"city": "Paris"}` || acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("streamed tool calls %+v finish %q", tcs, acc.Choices[0].FinishReason)
	}
	if len(finished) != 1 || finished[0].Name != "get_weather" {
		t.Errorf("finished tool calls %+v", finished)
	}
}

// A refused field reaches the client as a 400 naming the field.
func TestE2ERefusal(t *testing.T) {
	client, _ := newE2E(t)
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "smart",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
		N:        openai.Int(2),
	})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" || apiErr.Code != CodeUnsupportedValue {
		t.Errorf("got %v", err)
	}
}
