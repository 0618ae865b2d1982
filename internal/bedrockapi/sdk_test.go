package bedrockapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

func userText(s string) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: s}}}
}

func weatherTool() *types.ToolConfiguration {
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}
	return &types.ToolConfiguration{
		Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
			Name: aws.String("get_weather"), Description: aws.String("Weather by city"),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
		}}},
		ToolChoice: &types.ToolChoiceMemberAuto{},
	}
}

// The official client's Converse reads the translated answer: text,
// stopReason, usage (cache reads apart) and latency; and the chat request
// the engine got carries the system blocks and inference settings.
func TestSDKConverse(t *testing.T) {
	b, srv := newBedrock(t)
	c := client(srv, testKeyID, testSecret)
	out, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:  aws.String(testModel),
		Messages: []types.Message{userText("Hi")},
		System:   []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}},
		InferenceConfig: &types.InferenceConfiguration{
			MaxTokens: aws.Int32(100), Temperature: aws.Float32(0.5), TopP: aws.Float32(0.9),
			StopSequences: []string{"END"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	if msg.Role != types.ConversationRoleAssistant || len(msg.Content) != 1 {
		t.Fatalf("message = %+v", msg)
	}
	if got := msg.Content[0].(*types.ContentBlockMemberText).Value; got != fakeText {
		t.Errorf("text = %q", got)
	}
	if out.StopReason != types.StopReasonEndTurn {
		t.Errorf("stopReason = %q", out.StopReason)
	}
	u := out.Usage
	if *u.InputTokens != 8 || *u.OutputTokens != 7 || *u.TotalTokens != 19 || aws.ToInt32(u.CacheReadInputTokens) != 4 {
		t.Errorf("usage = in %d out %d total %d cached %d", *u.InputTokens, *u.OutputTokens, *u.TotalTokens, aws.ToInt32(u.CacheReadInputTokens))
	}
	if *out.Metrics.LatencyMs != 42 {
		t.Errorf("latencyMs = %d", *out.Metrics.LatencyMs)
	}
	chat := b.engine.last()
	want := map[string]any{
		"model": testModel, "max_tokens": 100.0, "temperature": 0.5, "stop": []any{"END"},
		"messages": []any{
			map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": "Be brief."}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hi"}}},
		},
	}
	topP := chat["top_p"].(float64)
	delete(chat, "top_p")
	if !reflect.DeepEqual(chat, want) || topP < 0.89 || topP > 0.91 {
		t.Errorf("chat request = %v (top_p %v), want %v", chat, topP, want)
	}
}

// A tool round trip through the official client: the tool call comes back
// as a toolUse block with its input, and the tool result sent after it
// reaches the engine as a tool message answering the call.
func TestSDKConverseTools(t *testing.T) {
	b, srv := newBedrock(t)
	c := client(srv, testKeyID, testSecret)
	in := &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: []types.Message{userText("Weather in Paris?")}, ToolConfig: weatherTool(),
	}
	out, err := c.Converse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if out.StopReason != types.StopReasonToolUse {
		t.Errorf("stopReason = %q", out.StopReason)
	}
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	use := msg.Content[0].(*types.ContentBlockMemberToolUse).Value
	var args map[string]any
	if err := use.Input.UnmarshalSmithyDocument(&args); err != nil {
		t.Fatal(err)
	}
	if *use.Name != "get_weather" || *use.ToolUseId != "call_1" || args["city"] != "Paris" {
		t.Fatalf("toolUse = %s %s %v", *use.Name, *use.ToolUseId, args)
	}
	in.Messages = append(in.Messages, msg, types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
		&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: use.ToolUseId,
			Content: []types.ToolResultContentBlock{
				&types.ToolResultContentBlockMemberText{Value: "Sunny"},
				&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(map[string]any{"c": 21})},
			},
		}},
		&types.ContentBlockMemberText{Value: "Thanks"},
	}})
	out, err = c.Converse(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if out.StopReason != types.StopReasonEndTurn {
		t.Errorf("second stopReason = %q", out.StopReason)
	}
	msgs := b.engine.last()["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("chat messages = %v", msgs)
	}
	call := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call_1" || call["function"].(map[string]any)["arguments"] != `{"city":"Paris"}` {
		t.Errorf("assistant tool call = %v", call)
	}
	tool := msgs[2].(map[string]any)
	want := map[string]any{"role": "tool", "tool_call_id": "call_1", "content": []any{
		map[string]any{"type": "text", "text": "Sunny"}, map[string]any{"type": "text", "text": `{"c":21}`},
	}}
	if !reflect.DeepEqual(tool, want) {
		t.Errorf("tool message = %v, want %v", tool, want)
	}
	if msgs[3].(map[string]any)["role"] != "user" {
		t.Errorf("last message = %v", msgs[3])
	}
}

// streamEvents reads a ConverseStream answer through the SDK's event
// stream reader.
func streamEvents(t *testing.T, c *bedrockruntime.Client, in *bedrockruntime.ConverseStreamInput) ([]types.ConverseStreamOutput, error) {
	t.Helper()
	out, err := c.ConverseStream(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	stream := out.GetStream()
	defer stream.Close()
	var events []types.ConverseStreamOutput
	for ev := range stream.Events() {
		events = append(events, ev)
	}
	return events, stream.Err()
}

// ConverseStream through the official client: every event type arrives,
// in Bedrock's order, with reasoning, text and usage; and a tool call
// streams as contentBlockStart plus toolUse input deltas.
func TestSDKConverseStream(t *testing.T) {
	_, srv := newBedrock(t)
	c := client(srv, testKeyID, testSecret)
	events, err := streamEvents(t, c, &bedrockruntime.ConverseStreamInput{
		ModelId: aws.String("anthropic.claude-think-v1:0"), Messages: []types.Message{userText("Hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var text, reasoning strings.Builder
	for _, ev := range events {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberMessageStart:
			kinds = append(kinds, "start:"+string(v.Value.Role))
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := v.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				text.WriteString(d.Value)
				if *v.Value.ContentBlockIndex != 1 {
					t.Errorf("text delta at index %d", *v.Value.ContentBlockIndex)
				}
			case *types.ContentBlockDeltaMemberReasoningContent:
				reasoning.WriteString(d.Value.(*types.ReasoningContentBlockDeltaMemberText).Value)
				if *v.Value.ContentBlockIndex != 0 {
					t.Errorf("reasoning delta at index %d", *v.Value.ContentBlockIndex)
				}
			}
			if len(kinds) == 0 || kinds[len(kinds)-1] != "delta" {
				kinds = append(kinds, "delta")
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			kinds = append(kinds, "stop:"+string(rune('0'+*v.Value.ContentBlockIndex)))
		case *types.ConverseStreamOutputMemberMessageStop:
			kinds = append(kinds, "messageStop:"+string(v.Value.StopReason))
		case *types.ConverseStreamOutputMemberMetadata:
			u := v.Value.Usage
			if *u.InputTokens != 8 || *u.OutputTokens != 7 || *u.TotalTokens != 19 || v.Value.Metrics.LatencyMs == nil {
				t.Errorf("metadata = %+v %+v", u, v.Value.Metrics)
			}
			kinds = append(kinds, "metadata")
		default:
			t.Errorf("unexpected event %T", ev)
		}
	}
	want := []string{"start:assistant", "delta", "stop:0", "delta", "stop:1", "messageStop:end_turn", "metadata"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("events = %v, want %v", kinds, want)
	}
	if text.String() != fakeText || reasoning.String() != "Thinking it over." {
		t.Errorf("text %q, reasoning %q", text.String(), reasoning.String())
	}

	events, err = streamEvents(t, c, &bedrockruntime.ConverseStreamInput{
		ModelId: aws.String(testModel), Messages: []types.Message{userText("Weather?")}, ToolConfig: weatherTool(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var input strings.Builder
	var start *types.ToolUseBlockStart
	var stop types.StopReason
	for _, ev := range events {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			start = &v.Value.Start.(*types.ContentBlockStartMemberToolUse).Value
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			input.WriteString(*v.Value.Delta.(*types.ContentBlockDeltaMemberToolUse).Value.Input)
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = v.Value.StopReason
		}
	}
	if start == nil || *start.Name != "get_weather" || *start.ToolUseId != "call_1" {
		t.Fatalf("contentBlockStart = %+v", start)
	}
	if input.String() != `{"city":"Paris"}` || stop != types.StopReasonToolUse {
		t.Errorf("tool input %q, stop %q", input.String(), stop)
	}
}

// Errors in the chat stream reach the official client as its typed
// exceptions, after the content that came before them.
func TestSDKConverseStreamExceptions(t *testing.T) {
	cases := []struct {
		fault string
		check func(error) bool
	}{
		{`data: {"error":{"message":"Rate limit reached","type":"rate_limit_exceeded","param":null,"code":"rate_limit_exceeded"}}` + "\n\n",
			func(err error) bool {
				var e *types.ThrottlingException
				return errors.As(err, &e) && e.ErrorMessage() == "Rate limit reached"
			}},
		{`data: {"error":{"message":"boom","type":"server_error","param":null,"code":null}}` + "\n\n",
			func(err error) bool { var e *types.InternalServerException; return errors.As(err, &e) }},
		{`data: {"error":{"message":"Overloaded","type":"overloaded_error"}}` + "\n\n",
			func(err error) bool { var e *types.ServiceUnavailableException; return errors.As(err, &e) }},
		{`data: {"error":{"message":"bad","type":"invalid_request_error"}}` + "\n\n",
			func(err error) bool { var e *types.ValidationException; return errors.As(err, &e) }},
		{"data: {not json\n\n",
			func(err error) bool { var e *types.ModelStreamErrorException; return errors.As(err, &e) }},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut", // truncated mid-event
			func(err error) bool { var e *types.ModelStreamErrorException; return errors.As(err, &e) }},
		{"", // the stream ends with no finish chunk
			func(err error) bool { var e *types.ModelStreamErrorException; return errors.As(err, &e) }},
	}
	for _, tc := range cases {
		b, srv := newBedrock(t)
		b.engine.fault = tc.fault
		if tc.fault == "" {
			b.engine.fault = "\n"
		}
		events, err := streamEvents(t, client(srv, testKeyID, testSecret), &bedrockruntime.ConverseStreamInput{
			ModelId: aws.String(testModel), Messages: []types.Message{userText("Hi")},
		})
		if !tc.check(err) {
			t.Errorf("fault %q: err = %T %v", tc.fault, err, err)
		}
		var sawText, sawStop bool
		for _, ev := range events {
			_, d := ev.(*types.ConverseStreamOutputMemberContentBlockDelta)
			_, s := ev.(*types.ConverseStreamOutputMemberMessageStop)
			sawText, sawStop = sawText || d, sawStop || s
		}
		if !sawText || sawStop {
			t.Errorf("fault %q: text before the failure %v, messageStop %v", tc.fault, sawText, sawStop)
		}
	}
}

func invokeBody(extra string) []byte {
	return []byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":50,` + extra +
		`"messages":[{"role":"user","content":"Hi"}]}`)
}

// InvokeModel through the official client: the Messages answer for the
// URL's model.
func TestSDKInvokeModel(t *testing.T) {
	b, srv := newBedrock(t)
	c := client(srv, testKeyID, testSecret)
	out, err := c.InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(testModel), ContentType: aws.String("application/json"),
		Body: invokeBody(`"anthropic_beta":["context-1m-2025-08-07"],`),
	})
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Type, Model string
		Content     []struct{ Type, Text string }
		StopReason  string `json:"stop_reason"`
	}
	if err := json.Unmarshal(out.Body, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.Model != testModel || msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != fakeText {
		t.Errorf("answer = %+v", msg)
	}
	if chat := b.engine.last(); chat["model"] != testModel || chat["max_tokens"] != 50.0 {
		t.Errorf("chat = %v", chat)
	}
}

// InvokeModelWithResponseStream through the official client: a chunk per
// Anthropic event, message_stop with Bedrock's invocation metrics; and an
// Anthropic error event becomes the typed exception.
func TestSDKInvokeModelWithResponseStream(t *testing.T) {
	b, srv := newBedrock(t)
	c := client(srv, testKeyID, testSecret)
	read := func() ([]map[string]any, error) {
		out, err := c.InvokeModelWithResponseStream(context.Background(), &bedrockruntime.InvokeModelWithResponseStreamInput{
			ModelId: aws.String(testModel), ContentType: aws.String("application/json"), Body: invokeBody(""),
		})
		if err != nil {
			t.Fatal(err)
		}
		stream := out.GetStream()
		defer stream.Close()
		var events []map[string]any
		for ev := range stream.Events() {
			chunk, ok := ev.(*types.ResponseStreamMemberChunk)
			if !ok {
				t.Fatalf("event %T", ev)
			}
			var m map[string]any
			if err := json.Unmarshal(chunk.Value.Bytes, &m); err != nil {
				t.Fatalf("chunk %q: %v", chunk.Value.Bytes, err)
			}
			events = append(events, m)
		}
		return events, stream.Err()
	}
	events, err := read()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, ev := range events {
		if d, ok := ev["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text.WriteString(d["text"].(string))
		}
	}
	first, last := events[0], events[len(events)-1]
	if first["type"] != "message_start" || last["type"] != "message_stop" || text.String() != fakeText {
		t.Fatalf("events = %v", events)
	}
	metrics, _ := last["amazon-bedrock-invocationMetrics"].(map[string]any)
	if metrics["inputTokenCount"] != 8.0 || metrics["outputTokenCount"] != 7.0 || metrics["invocationLatency"] == nil || metrics["firstByteLatency"] == nil {
		t.Errorf("invocation metrics = %v", metrics)
	}

	b.engine.fault = `data: {"error":{"message":"Rate limit reached","type":"rate_limit_exceeded"}}` + "\n\n"
	events, err = read()
	var throttled *types.ThrottlingException
	if !errors.As(err, &throttled) || len(events) < 2 {
		t.Errorf("after a rate limit error: %d events, err %T %v", len(events), err, err)
	}
}

// Each exception frame, as the simulator injects it mid-stream, reaches
// the official client as its typed exception, on both stream operations.
func TestSDKExceptionFrames(t *testing.T) {
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	var frame []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ContentTypeEventStream)
		var f frames
		if strings.HasSuffix(r.URL.Path, "/converse-stream") {
			f.event("messageStart", []byte(`{"role":"assistant"}`))
		} else {
			f.event("chunk", []byte(`{"bytes":"e30="}`))
		}
		w.Write(f.buf.Bytes())
		w.Write(frame)
	}))
	defer srv.Close()
	c := client(srv, testKeyID, testSecret)
	cases := []struct {
		frame  []byte
		invoke bool // only InvokeModelWithResponseStream has it
		check  func(error) bool
	}{
		{ExceptionFrame(ExceptionThrottling, "m"), false, func(err error) bool { var e *types.ThrottlingException; return errors.As(err, &e) }},
		{ExceptionFrame(ExceptionServiceUnavailable, "m"), false, func(err error) bool { var e *types.ServiceUnavailableException; return errors.As(err, &e) }},
		{ExceptionFrame(ExceptionInternalServer, "m"), false, func(err error) bool { var e *types.InternalServerException; return errors.As(err, &e) }},
		{ExceptionFrame(ExceptionValidation, "m"), false, func(err error) bool { var e *types.ValidationException; return errors.As(err, &e) }},
		{ExceptionFrame(ExceptionModelTimeout, "m"), true, func(err error) bool { var e *types.ModelTimeoutException; return errors.As(err, &e) }},
		{ModelStreamErrorFrame("m", 529, "Overloaded"), false, func(err error) bool {
			var e *types.ModelStreamErrorException
			return errors.As(err, &e) && aws.ToInt32(e.OriginalStatusCode) == 529 && aws.ToString(e.OriginalMessage) == "Overloaded"
		}},
	}
	for _, tc := range cases {
		frame = tc.frame
		if !tc.invoke {
			if _, err := streamEvents(t, c, &bedrockruntime.ConverseStreamInput{
				ModelId: aws.String(testModel), Messages: []types.Message{userText("Hi")},
			}); !tc.check(err) {
				t.Errorf("ConverseStream: %T %v", err, err)
			}
		}
		out, err := c.InvokeModelWithResponseStream(context.Background(), &bedrockruntime.InvokeModelWithResponseStreamInput{
			ModelId: aws.String(testModel), Body: invokeBody(""),
		})
		if err != nil {
			t.Fatal(err)
		}
		for range out.GetStream().Events() {
		}
		if err := out.GetStream().Err(); !tc.check(err) {
			t.Errorf("InvokeModelWithResponseStream: %T %v", err, err)
		}
		out.GetStream().Close()
	}
}
