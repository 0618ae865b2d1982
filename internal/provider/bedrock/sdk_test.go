package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// The official client proves the wire format: what it sends for a
// request is what this package sends, and what it decodes from an answer
// is what this package translates.

func sdkClient(t *testing.T, f *fakeBedrock) *bedrockruntime.Client {
	t.Helper()
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       testRegion,
		BaseEndpoint: aws.String(f.srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider(testKeyID, testSecret, ""),
		Retryer:      aws.NopRetryer{},
		HTTPClient:   f.srv.Client(),
	})
}

func TestConverseBodyIsWhatTheSDKSends(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	const model = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3 d4"
	_, err := sdkClient(t, f).Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String(model),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}},
		Messages: []types.Message{
			{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
				&types.ContentBlockMemberText{Value: "Look:"},
				&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatJpeg,
					Source: &types.ImageSourceMemberBytes{Value: []byte("\xff\xd8\xff")}}},
				&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatPdf, Name: aws.String("a b"),
					Source: &types.DocumentSourceMemberBytes{Value: []byte("%PDF-")}}},
			}},
			{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
				&types.ContentBlockMemberText{Value: "Calling."},
				&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("t-1"), Name: aws.String("look"),
					Input: document.NewLazyDocument(map[string]any{"q": "cat"})}},
			}},
			{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
				&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("t-1"),
					Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "a cat"}}}},
			}},
		},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(64), Temperature: aws.Float32(0.25),
			TopP: aws.Float32(0.5), StopSequences: []string{"END"}},
		ToolConfig: &types.ToolConfiguration{
			Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("look"), Description: aws.String("Looks"),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})}}}},
			ToolChoice: &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("look")}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	sdk := f.last(t)

	u := newUpstream(t, f)
	send(t, u, chatCall(`{"model":"`+model+`","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"Look:"},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/"}},
			{"type":"file","file":{"filename":"a b","file_data":"data:application/pdf;base64,JVBERi0="}}]},
		{"role":"assistant","content":"Calling.","tool_calls":[{"id":"t-1","type":"function","function":{"name":"look","arguments":"{\"q\":\"cat\"}"}}]},
		{"role":"tool","tool_call_id":"t-1","content":[{"type":"text","text":"a cat"}]}],
		"max_tokens":64,"temperature":0.25,"top_p":0.5,"stop":["END"],
		"tools":[{"type":"function","function":{"name":"look","description":"Looks","parameters":{"type":"object"}}}],
		"tool_choice":{"type":"function","function":{"name":"look"}}}`, false))
	ours := f.last(t)

	if ours.Path != sdk.Path {
		t.Errorf("path %q; the SDK sends %q", ours.Path, sdk.Path)
	}
	var a, b any
	if err := json.Unmarshal(ours.Body, &a); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(sdk.Body, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("body\n ours %s\n  sdk %s", ours.Body, sdk.Body)
	}
}

// converseStreamFrames is a ConverseStream answer with text, a tool call,
// reasoning, the stop and the metadata.
func converseStreamFrames(t testing.TB) []byte {
	return encode(t,
		eventFrame("messageStart", `{"p":"abc","role":"assistant"}`),
		eventFrame("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"Hmm."}},"p":"x"}`),
		eventFrame("contentBlockStop", `{"contentBlockIndex":0}`),
		eventFrame("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"Hello"}}`),
		eventFrame("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":", \"world\"\n"}}`),
		eventFrame("contentBlockStop", `{"contentBlockIndex":1}`),
		eventFrame("contentBlockStart", `{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"tooluse_9","name":"look"}}}`),
		eventFrame("contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"q\":"}}}`),
		eventFrame("contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"\"cat\"}"}}}`),
		eventFrame("contentBlockStop", `{"contentBlockIndex":2}`),
		eventFrame("messageStop", `{"stopReason":"tool_use"}`),
		eventFrame("metadata", `{"usage":{"inputTokens":12,"outputTokens":7,"totalTokens":19},"metrics":{"latencyMs":321}}`),
	)
}

// summary is what a stream said, whoever decoded it.
type summary struct {
	Reasoning, Text, ToolID, ToolName, ToolArgs, Finish string
	Prompt, Completion                                  int
}

func TestConverseStreamIsDecodedAsTheSDKDecodesIt(t *testing.T) {
	stream := converseStreamFrames(t)
	f := newFake(t, streamAnswer(stream))

	out, err := sdkClient(t, f).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{
		ModelId:  aws.String("amazon.nova-pro-v1:0"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var want summary
	for ev := range out.GetStream().Events() {
		switch e := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				want.Text += d.Value
			case *types.ContentBlockDeltaMemberToolUse:
				want.ToolArgs += *d.Value.Input
			case *types.ContentBlockDeltaMemberReasoningContent:
				want.Reasoning += d.Value.(*types.ReasoningContentBlockDeltaMemberText).Value
			}
		case *types.ConverseStreamOutputMemberContentBlockStart:
			tu := e.Value.Start.(*types.ContentBlockStartMemberToolUse).Value
			want.ToolID, want.ToolName = *tu.ToolUseId, *tu.Name
		case *types.ConverseStreamOutputMemberMessageStop:
			want.Finish = finishReason(string(e.Value.StopReason))
		case *types.ConverseStreamOutputMemberMetadata:
			want.Prompt, want.Completion = int(*e.Value.Usage.InputTokens), int(*e.Value.Usage.OutputTokens)
		}
	}
	if err := out.GetStream().Err(); err != nil {
		t.Fatal(err)
	}
	out.GetStream().Close()

	u := newUpstream(t, f)
	resp := send(t, u, chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}`, true))
	got, done := chatSummary(t, resp.Body)
	if !done {
		t.Error("the stream did not end with [DONE]")
	}
	if got != want {
		t.Errorf("translated %+v\n     sdk %+v", got, want)
	}
	if want.Text == "" || want.ToolArgs == "" || want.Reasoning == "" || want.Prompt == 0 {
		t.Errorf("the SDK decoded too little to compare: %+v", want)
	}
}

// chatSummary reads a chat.completion.chunk stream.
func chatSummary(t *testing.T, body io.Reader) (summary, bool) {
	t.Helper()
	var s summary
	rd := sse.NewReader(body, sse.Options{})
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return s, false
		}
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if string(ev.Data) == "[DONE]" {
			return s, true
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					Reasoning string `json:"reasoning_content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *chatUsage `json:"usage"`
		}
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			t.Fatalf("chunk %s: %v", ev.Data, err)
		}
		if c.Usage != nil {
			s.Prompt, s.Completion = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
		for _, ch := range c.Choices {
			s.Text += ch.Delta.Content
			s.Reasoning += ch.Delta.Reasoning
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" {
					s.ToolID, s.ToolName = tc.ID, tc.Function.Name
				}
				s.ToolArgs += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				s.Finish = *ch.FinishReason
			}
		}
	}
}

func TestInvokeStreamChunksAreWhatTheSDKDecodes(t *testing.T) {
	stream := claudeStream(t)
	f := newFake(t, streamAnswer(stream))
	out, err := sdkClient(t, f).InvokeModelWithResponseStream(context.Background(), &bedrockruntime.InvokeModelWithResponseStreamInput{
		ModelId: aws.String(claudeModel), Body: []byte(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"messages":[]}`),
		ContentType: aws.String("application/json"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for ev := range out.GetStream().Events() {
		if c, ok := ev.(*types.ResponseStreamMemberChunk); ok {
			want = append(want, compactJSON(t, c.Value.Bytes))
		}
	}
	out.GetStream().Close()
	sdkPath := f.last(t).Path

	u := newUpstream(t, f)
	resp := send(t, u, &router.Call{Path: "/messages", Model: claudeModel, Stream: true, Native: []byte(`{"max_tokens":5,"messages":[]}`)})
	var got []string
	rd := sse.NewReader(resp.Body, sse.Options{})
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, compactJSON(t, ev.Data))
		var head struct{ Type string }
		json.Unmarshal(ev.Data, &head)
		if string(ev.Name) != head.Type {
			t.Errorf("event name %q for a %q event", ev.Name, head.Type)
		}
	}
	if !reflect.DeepEqual(got, want) || len(want) != 7 {
		t.Errorf("events\n ours %q\n  sdk %q", got, want)
	}
	if p := f.last(t).Path; p != sdkPath {
		t.Errorf("path %q; the SDK sends %q", p, sdkPath)
	}
}

func compactJSON(t *testing.T, b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestExceptionFramesAreWhatTheSDKReadsAsExceptions(t *testing.T) {
	f := newFake(t, streamAnswer(encode(t, eventFrame("messageStart", `{"role":"assistant"}`), exceptionFrame("throttlingException", "slow down"))))
	out, err := sdkClient(t, f).ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{
		ModelId:  aws.String("amazon.nova-pro-v1:0"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for range out.GetStream().Events() {
	}
	var te *types.ThrottlingException
	if err := out.GetStream().Err(); !errors.As(err, &te) || te.ErrorMessage() != "slow down" {
		t.Errorf("the SDK read %v; want a ThrottlingException", err)
	}
	out.GetStream().Close()
}

func TestConverseAnswerIsReadAsTheSDKReadsIt(t *testing.T) {
	answer := `{"output":{"message":{"role":"assistant","content":[
		{"reasoningContent":{"reasoningText":{"text":"Let me see.","signature":"s"}}},
		{"text":"It is "},{"text":"a cat."},
		{"toolUse":{"toolUseId":"tooluse_7","name":"look","input":{"q":"cat","n":[1,2]}}}]}},
		"stopReason":"tool_use","usage":{"inputTokens":20,"outputTokens":9,"totalTokens":33,"cacheReadInputTokens":4},"metrics":{"latencyMs":9}}`
	f := newFake(t, jsonAnswer(200, answer))
	out, err := sdkClient(t, f).Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:  aws.String("amazon.nova-pro-v1:0"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var want summary
	for _, b := range out.Output.(*types.ConverseOutputMemberMessage).Value.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			want.Text += b.Value
		case *types.ContentBlockMemberReasoningContent:
			want.Reasoning += *b.Value.(*types.ReasoningContentBlockMemberReasoningText).Value.Text
		case *types.ContentBlockMemberToolUse:
			in, _ := b.Value.Input.MarshalSmithyDocument()
			want.ToolID, want.ToolName, want.ToolArgs = *b.Value.ToolUseId, *b.Value.Name, compactJSON(t, in)
		}
	}
	want.Finish = finishReason(string(out.StopReason))
	want.Prompt = int(*out.Usage.InputTokens + *out.Usage.CacheReadInputTokens)
	want.Completion = int(*out.Usage.OutputTokens)

	u := newUpstream(t, f)
	resp := send(t, u, chatCall(`{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`, false))
	var c chatCompletion
	if err := json.Unmarshal([]byte(readBody(t, resp)), &c); err != nil {
		t.Fatal(err)
	}
	m := c.Choices[0].Message
	got := summary{Reasoning: m.ReasoningContent, Text: *m.Content, Finish: c.Choices[0].FinishReason,
		Prompt: c.Usage.PromptTokens, Completion: c.Usage.CompletionTokens}
	if len(m.ToolCalls) == 1 {
		got.ToolID, got.ToolName, got.ToolArgs = m.ToolCalls[0].ID, m.ToolCalls[0].Function.Name, compactJSON(t, []byte(m.ToolCalls[0].Function.Arguments))
	}
	if got != want {
		t.Errorf("translated %+v\n     sdk %+v", got, want)
	}
}
