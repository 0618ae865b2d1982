package sim

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// The official Anthropic client against the simulator's Messages API:
// plain, streamed, and a fault in Anthropic's error shape.
func TestMessagesAPI(t *testing.T) {
	s, err := New(Config{Seed: 1, Output: Output{Tokens: 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "claude-opus-4-7", MaxTokens: 50,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello there"))}}
	msg, err := c.Messages.New(t.Context(), params)
	if err != nil || len(msg.Content) == 0 || msg.Content[0].Text == "" || msg.Usage.OutputTokens == 0 || msg.Model != "claude-opus-4-7" {
		t.Fatalf("message %+v, %v", msg, err)
	}
	st := c.Messages.NewStreaming(t.Context(), params)
	var b strings.Builder
	for st.Next() {
		if ev := st.Current(); ev.Type == "content_block_delta" {
			b.WriteString(ev.Delta.Text)
		}
	}
	if st.Err() != nil || b.String() == "" {
		t.Fatalf("stream %q, %v", b.String(), st.Err())
	}
	if err := s.SetFaults([]Fault{{Kind: ErrorStorm, Status: 529}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Messages.New(t.Context(), params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.RawJSON(), "overloaded_error") {
		t.Fatalf("529 fault: %v", err)
	}
	if got := s.Stats().Calls; got != 3 {
		t.Fatalf("stats count %d calls; want 3", got)
	}
}

// Messages streams have no [DONE]: a no_done fault leaves them complete.
func TestMessagesNoDone(t *testing.T) {
	s, err := New(Config{Seed: 1, Output: Output{Tokens: 6}, Faults: []Fault{{Kind: NoDone}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	st := c.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{Model: "claude-opus-4-7", MaxTokens: 50,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello there"))}})
	var stop bool
	for st.Next() {
		stop = stop || st.Current().Type == "message_stop"
	}
	if st.Err() != nil || !stop || s.Stats().Outcomes[OutcomeNoDone] != 1 {
		t.Fatalf("stream: message_stop %v, %v, stats %+v; want a complete stream", stop, st.Err(), s.Stats())
	}
}

// inputSchema makes an Anthropic input schema of an object schema.
func inputSchema(t *testing.T, schema string) anthropic.ToolInputSchemaParam {
	t.Helper()
	var s struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	return anthropic.ToolInputSchemaParam{Properties: s.Properties, Required: s.Required,
		ExtraFields: map[string]any{"additionalProperties": false}}
}

func anthropicSDK(ts *httptest.Server) *anthropic.Client {
	c := anthropic.NewClient(option.WithBaseURL(ts.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	return &c
}

// Tools through the official Anthropic client: a tool_use block, its
// result sent back as a tool_result block, the same call streamed, and
// count_tokens agreeing with the usage.
func TestMessagesToolUse(t *testing.T) {
	s, ts := start(t, Config{Seed: 2})
	c := anthropicSDK(ts)
	user := anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))
	params := anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 200, Messages: []anthropic.MessageParam{user},
		Tools: []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(inputSchema(t, weatherSchema), "get_weather")}}
	msg, err := c.Messages.New(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" {
		t.Fatalf("message %s; want one tool_use block", msg.RawJSON())
	}
	use := msg.Content[0]
	if !strings.HasPrefix(use.ID, "toolu_01") || len(use.ID) != 30 || use.Name != "get_weather" {
		t.Errorf("tool_use %+v; want id toolu_01 and 22 characters", use)
	}
	checkArgs(t, string(use.Input), weatherSchema)

	next := params
	next.Messages = []anthropic.MessageParam{user, msg.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "sunny, 21 C", false))}
	reply, err := c.Messages.New(t.Context(), next)
	if err != nil {
		t.Fatal(err)
	}
	if reply.StopReason != "end_turn" || len(reply.Content) != 1 || !strings.HasPrefix(reply.Content[0].Text, "Tool result: sunny, 21 C. ") {
		t.Errorf("after the result: %s; want text quoting it", reply.RawJSON())
	}

	_, ts2 := start(t, Config{Seed: 2, Output: Output{ChunkTokens: 2}})
	stream := anthropicSDK(ts2).Messages.NewStreaming(t.Context(), params)
	var acc anthropic.Message
	var starts, deltas int
	for stream.Next() {
		ev := stream.Current()
		if err := acc.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Type == "content_block_start" && ev.ContentBlock.Type == "tool_use":
			starts++
		case ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta":
			deltas++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if starts != 1 || deltas < 3 || acc.StopReason != "tool_use" || acc.Content[0].ID != use.ID || string(acc.Content[0].Input) != string(use.Input) {
		t.Errorf("stream: %d tool_use starts, %d input_json_deltas, %s; want the non-streamed call %s", starts, deltas, acc.RawJSON(), msg.RawJSON())
	}

	count, err := c.Messages.CountTokens(t.Context(), anthropic.MessageCountTokensParams{Model: params.Model, Messages: params.Messages,
		Tools: []anthropic.MessageCountTokensToolUnionParam{anthropic.MessageCountTokensToolParamOfTool(inputSchema(t, weatherSchema), "get_weather")}})
	if err != nil || count.InputTokens != msg.Usage.InputTokens {
		t.Errorf("count_tokens %v, %v; want the message's %d input tokens", count, err, msg.Usage.InputTokens)
	}
	if st := s.Stats(); st.APIs["messages"] != 2 || st.Calls != 2 {
		t.Errorf("stats %+v; want 2 messages calls (count_tokens is not one)", st)
	}
}

// Hostile Messages requests get Anthropic's error shape, never a panic.
func TestMessagesBadRequests(t *testing.T) {
	s, _ := New(Config{Models: []string{"c"}})
	for i, tc := range []struct {
		path, body string
		status     int
		typ        string
	}{
		{"/v1/messages", `{"model":"c","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"get weather","input_schema":{"type":"object"}}]}`, 400, "invalid_request_error"},
		{"/v1/messages", `{"model":"c","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"string"}}]}`, 400, "invalid_request_error"},
		{"/v1/messages", `{"model":"c","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"tool","name":"g"},"tools":[{"name":"f","input_schema":{"type":"object"}}]}`, 400, "invalid_request_error"},
		{"/v1/messages/count_tokens", `{"model":"c","messages":"x"}`, 400, "invalid_request_error"},
		{"/v1/messages/count_tokens", `{"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error"},
		{"/v1/messages/count_tokens", `{"model":"d","messages":[{"role":"user","content":"x"}]}`, 404, "not_found_error"},
		{"/v1/messages/count_tokens", `[`, 400, "invalid_request_error"},
	} {
		rec := serve(s, "POST", tc.path, tc.body)
		var e struct {
			Type  string
			Error struct{ Type, Message string }
		}
		json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != tc.status || e.Type != "error" || e.Error.Type != tc.typ || e.Error.Message == "" {
			t.Errorf("case %d: %d %s; want %d %s", i, rec.Code, rec.Body, tc.status, tc.typ)
		}
	}
}
