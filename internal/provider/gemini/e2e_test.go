package gemini

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

// fakeGemini answers generateContent with a functionCall when tools are
// offered and the conversation has no functionResponse, text otherwise
// (quoting the function's output); streamed at :streamGenerateContent.
type fakeGemini struct {
	t    *testing.T
	last map[string]any
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Goog-Api-Key") != "g-key" {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Tools    []any
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Response struct{ Output string }
				}
			}
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("upstream got %s: %v", body, err)
	}
	json.Unmarshal(body, &f.last)
	output := ""
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				output = p.FunctionResponse.Response.Output
			}
		}
	}
	call := len(req.Tools) > 0 && output == ""
	usage := `"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":4,"thoughtsTokenCount":6,"cachedContentTokenCount":5}`
	var events []string
	if call {
		events = []string{`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],` + usage + `,"responseId":"resp1"}`}
	} else {
		events = []string{
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"Thinking it over","thought":true}]}}],"responseId":"resp2"}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"It is sunny"}]}}],"responseId":"resp2"}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"` + output + `."}]},"finishReason":"STOP"}],` + usage + `,"responseId":"resp2"}`,
		}
	}
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\r\n\r\n")
			w.(http.Flusher).Flush()
		}
		return
	}
	// The whole answer: the events' parts in one candidate.
	var parts []json.RawMessage
	for _, e := range events {
		var ev struct {
			Candidates []struct {
				Content struct{ Parts []json.RawMessage }
			}
		}
		json.Unmarshal([]byte(e), &ev)
		parts = append(parts, ev.Candidates[0].Content.Parts...)
	}
	p, _ := json.Marshal(parts)
	id := "resp2"
	if call {
		id = "resp1"
	}
	io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":`+string(p)+`},"finishReason":"STOP"}],`+usage+`,"responseId":"`+id+`"}`)
}

// gatewayHandler stands in for the gateway: it hands the client's body to
// the Upstream and copies the answer back, flushing as it goes.
func gatewayHandler(t *testing.T, u router.Upstream) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var head struct{ Stream bool }
		json.Unmarshal(body, &head)
		resp, err := u.Send(r.Context(), &router.Call{
			Path: strings.TrimPrefix(r.URL.Path, "/v1"), Model: "gemini-2.5-flash", Key: "g-key", Body: body, Stream: head.Stream,
		})
		var un *router.Unservable
		if errors.As(err, &un) {
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

func newE2E(t *testing.T) (openai.Client, *fakeGemini) {
	fake := &fakeGemini{t: t}
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	u, err := New(Config{BaseURL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	gw := httptest.NewServer(gatewayHandler(t, u))
	t.Cleanup(gw.Close)
	return openai.NewClient(option.WithBaseURL(gw.URL+"/v1/"), option.WithAPIKey("fusebox-key"), option.WithMaxRetries(0)), fake
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name:        "get_weather",
	Description: openai.String("Weather for a city"),
	Parameters: shared.FunctionParameters{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}},
	},
})

// OpenAI's official client reads the translated answer, usage included.
func TestE2EChat(t *testing.T) {
	client, fake := newE2E(t)
	c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:           "smart",
		Messages:        []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Weather?")},
		MaxTokens:       openai.Int(100),
		ReasoningEffort: shared.ReasoningEffortLow,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != "It is sunny." || c.Choices[0].FinishReason != "stop" {
		t.Errorf("answer %q %q", got, c.Choices[0].FinishReason)
	}
	if rc := c.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw(); rc != `"Thinking it over"` {
		t.Errorf("reasoning_content %s", rc)
	}
	if u := c.Usage; u.PromptTokens != 20 || u.CompletionTokens != 10 || u.TotalTokens != 30 ||
		u.PromptTokensDetails.CachedTokens != 5 || u.CompletionTokensDetails.ReasoningTokens != 6 {
		t.Errorf("usage %+v", u)
	}
	gc, _ := fake.last["generationConfig"].(map[string]any)
	if gc["maxOutputTokens"] != float64(100) || fake.last["systemInstruction"] == nil {
		t.Errorf("upstream request %v", fake.last)
	}
}

// OpenAI's client accumulates the translated stream to the same answer.
func TestE2EStream(t *testing.T) {
	client, _ := newE2E(t)
	s := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         "smart",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather?")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "It is sunny." || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("answer %q %q", got, acc.Choices[0].FinishReason)
	}
	if acc.Usage.PromptTokens != 20 || acc.Usage.CompletionTokens != 10 {
		t.Errorf("usage %+v", acc.Usage)
	}
}

// A tool call goes to the client and its result back to Gemini, named for
// the call, streamed or not.
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
		calls[0].ID != "call_resp1_0" || c.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("tool calls %+v, finish %q", calls, c.Choices[0].FinishReason)
	}
	params.Messages = append(params.Messages, c.Choices[0].Message.ToParam(), openai.ToolMessage("18C", calls[0].ID))
	c, err = client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != "It is sunny18C." {
		t.Errorf("answer %q: the tool result did not reach Gemini", got)
	}
	contents := fake.last["contents"].([]any)
	if len(contents) != 3 || !strings.Contains(mustJSON(contents[2]), `"functionResponse":{"name":"get_weather","response":{"output":"18C"}}`) {
		t.Errorf("upstream contents %s", mustJSON(contents))
	}

	s := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "smart", Messages: params.Messages[:1], Tools: params.Tools})
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
	if len(tcs) != 1 || tcs[0].ID != "call_resp1_0" || tcs[0].Function.Arguments != `{"city":"Paris"}` || acc.Choices[0].FinishReason != "tool_calls" {
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
		Logprobs: openai.Bool(true),
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "logprobs" || apiErr.Code != CodeUnsupportedParameter {
		t.Errorf("got %v", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
