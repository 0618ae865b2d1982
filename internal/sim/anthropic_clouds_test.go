package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

func claudeParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: "claude-sonnet-4@20250514", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say something, please."))}}
}

// Anthropic's own SDK reaches Claude on the sim's Bedrock: SigV4 by its
// bedrock option, InvokeModel and its event stream. (Its bedrock option
// puts the SDK's anthropic-version header in the body, which Bedrock's
// schema refuses; the header is set to Bedrock's version here.)
func TestAnthropicSDKOnBedrock(t *testing.T) {
	s, ts := start(t, Config{Clock: clocktest.New(time.Now()), Output: Output{Tokens: 5}, AWS: AWS{Keys: bedrockKeys}})
	ctx := context.Background()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDSIMTEST", "sim-secret", "")}
	for name, opt := range map[string]option.RequestOption{"bedrock": bedrock.WithConfig(cfg)} {
		c := anthropic.NewClient(opt, option.WithBaseURL(ts.URL), option.WithMaxRetries(0),
			option.WithHeader("anthropic-version", "bedrock-2023-05-31"))
		m, err := c.Messages.New(ctx, claudeParams())
		if err != nil {
			t.Errorf("%s: Messages.New: %v", name, err)
			continue
		}
		if len(m.Content) != 1 || len(strings.Fields(m.Content[0].Text)) != 5 {
			t.Errorf("%s: %+v, want 5 words", name, m.Content)
		}
		st := c.Messages.NewStreaming(ctx, claudeParams())
		var acc anthropic.Message
		for st.Next() {
			if err := acc.Accumulate(st.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Err(); err != nil || len(acc.Content) != 1 || len(strings.Fields(acc.Content[0].Text)) != 5 {
			t.Errorf("%s: stream: %+v, %v; want 5 words", name, acc.Content, err)
		}
	}
	if a := s.Stats().APIs; a["bedrock.invoke"] != 2 {
		t.Errorf("apis %v; want 2 bedrock.invoke", a)
	}
}
