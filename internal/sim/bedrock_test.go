package sim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/auth/bearer"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// bedrockKeys are the access keys the Bedrock tests' sims accept.
var bedrockKeys = map[string]string{"AKIDSIMTEST": "sim-secret"}

// bedrockSim starts a sim on a fake clock at the present (SigV4 dates
// must be within minutes of the server's time) that accepts bedrockKeys.
func bedrockSim(t *testing.T, c Config) (*Server, *bedrockruntime.Client) {
	t.Helper()
	if c.Clock == nil {
		c.Clock = clocktest.New(time.Now())
	}
	if c.AWS.Keys == nil {
		c.AWS.Keys = bedrockKeys
	}
	s, ts := start(t, c)
	return s, bedrockClient(ts.URL, credentials.NewStaticCredentialsProvider("AKIDSIMTEST", "sim-secret", ""))
}

// bedrockClient is the official Bedrock runtime client for url, never
// retrying.
func bedrockClient(url string, creds aws.CredentialsProvider) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: creds, Retryer: aws.NopRetryer{}})
}

func converseInput(model string) *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: []types.Message{{
		Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Say something, please."}}}}}
}

// claudeBody is an InvokeModel body for a Claude model.
const claudeBody = `{"anthropic_version":"bedrock-2023-05-31","max_tokens":100,"messages":[{"role":"user","content":"Say something, please."}]}`

const claudeID = "anthropic.claude-3-5-sonnet-20240620-v1:0"

// The SDK's four operations get answers it reads whole: text, stop
// reason and usage; Stats count them under bedrock.converse and
// bedrock.invoke.
func TestBedrockSDK(t *testing.T) {
	s, c := bedrockSim(t, Config{Output: Output{Tokens: 7}})
	ctx := context.Background()

	out, err := c.Converse(ctx, converseInput("amazon.nova-pro-v1:0"))
	if err != nil {
		t.Fatalf("Converse: %v", err)
	}
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	text := msg.Content[0].(*types.ContentBlockMemberText).Value
	if len(strings.Fields(text)) != 7 || out.StopReason != types.StopReasonEndTurn || aws.ToInt32(out.Usage.OutputTokens) != 7 {
		t.Errorf("Converse: text %q, stop %q, usage %+v; want 7 words, end_turn, 7 output tokens", text, out.StopReason, out.Usage)
	}

	so, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("amazon.nova-pro-v1:0"),
		Messages: converseInput("").Messages})
	if err != nil {
		t.Fatalf("ConverseStream: %v", err)
	}
	var streamed strings.Builder
	var stop types.StopReason
	var usage *types.TokenUsage
	for ev := range so.GetStream().Events() {
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			streamed.WriteString(v.Value.Delta.(*types.ContentBlockDeltaMemberText).Value)
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = v.Value.StopReason
		case *types.ConverseStreamOutputMemberMetadata:
			usage = v.Value.Usage
		}
	}
	if err := so.GetStream().Err(); err != nil {
		t.Fatalf("ConverseStream: %v", err)
	}
	so.GetStream().Close()
	if len(strings.Fields(streamed.String())) != 7 || stop != types.StopReasonEndTurn || usage == nil || aws.ToInt32(usage.OutputTokens) != 7 {
		t.Errorf("ConverseStream: text %q (want 7 words), stop %q, usage %+v", streamed.String(), stop, usage)
	}

	io, err := c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(claudeID),
		ContentType: aws.String("application/json"), Body: []byte(claudeBody)})
	if err != nil {
		t.Fatalf("InvokeModel: %v", err)
	}
	var m struct {
		StopReason string `json:"stop_reason"`
		Content    []struct{ Type, Text string }
		Usage      struct {
			OutputTokens int `json:"output_tokens"`
		}
	}
	if err := json.Unmarshal(io.Body, &m); err != nil || len(m.Content) != 1 || m.Usage.OutputTokens != 7 || m.StopReason != "end_turn" {
		t.Errorf("InvokeModel: %s (%v); want a Messages answer of 7 tokens", io.Body, err)
	}

	ro, err := c.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{ModelId: aws.String(claudeID),
		ContentType: aws.String("application/json"), Body: []byte(claudeBody)})
	if err != nil {
		t.Fatalf("InvokeModelWithResponseStream: %v", err)
	}
	var kinds []string
	for ev := range ro.GetStream().Events() {
		var e struct{ Type string }
		json.Unmarshal(ev.(*types.ResponseStreamMemberChunk).Value.Bytes, &e)
		kinds = append(kinds, e.Type)
	}
	if err := ro.GetStream().Err(); err != nil {
		t.Fatalf("InvokeModelWithResponseStream: %v", err)
	}
	ro.GetStream().Close()
	if len(kinds) < 4 || kinds[0] != "message_start" || kinds[len(kinds)-1] != "message_stop" {
		t.Errorf("InvokeModelWithResponseStream events %v, want message_start … message_stop", kinds)
	}

	st := s.Stats()
	if st.APIs["bedrock.converse"] != 2 || st.APIs["bedrock.invoke"] != 2 || st.Outcomes[OutcomeOK] != 4 {
		t.Errorf("stats apis %v outcomes %v, want 2 converse, 2 invoke, 4 ok", st.APIs, st.Outcomes)
	}
}

// A wrong secret, an unknown key and a wrong API key are refused as
// Bedrock refuses them, and the engine never sees the call.
func TestBedrockRefusesBadCredentials(t *testing.T) {
	s, ts := start(t, Config{Clock: clocktest.New(time.Now()), AWS: AWS{Keys: bedrockKeys, APIKeys: []string{"ABSKgood"}}})
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		creds aws.CredentialsProvider
		code  string
	}{
		{"wrong secret", credentials.NewStaticCredentialsProvider("AKIDSIMTEST", "not-the-secret", ""), "InvalidSignatureException"},
		{"unknown key", credentials.NewStaticCredentialsProvider("AKIDOTHER", "sim-secret", ""), "UnrecognizedClientException"},
	} {
		_, err := bedrockClient(ts.URL, tc.creds).Converse(ctx, converseInput("m"))
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
		if err != nil && strings.Contains(err.Error(), "sim-secret") {
			t.Errorf("%s: the error shows the secret: %v", tc.name, err)
		}
	}
	// The SDK sends bearer tokens over HTTPS only.
	tls := httptest.NewTLSServer(s.Handler())
	defer tls.Close()
	bearer := func(key string) *bedrockruntime.Client {
		return bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(tls.URL), HTTPClient: tls.Client(),
			BearerAuthTokenProvider: bearerToken(key), AuthSchemePreference: []string{"httpBearerAuth"}, Retryer: aws.NopRetryer{}})
	}
	if _, err := bearer("ABSKgood").Converse(ctx, converseInput("m")); err != nil {
		t.Errorf("a configured API key: %v", err)
	}
	_, err := bearer("ABSKbad").Converse(ctx, converseInput("m"))
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "AccessDeniedException" {
		t.Errorf("a wrong API key: %v, want AccessDeniedException", err)
	}
	st := s.Stats()
	if st.Outcomes[OutcomeUnauthorized] != 3 || st.Outcomes[OutcomeOK] != 1 {
		t.Errorf("outcomes %v, want 3 unauthorized and 1 ok", st.Outcomes)
	}
}

// Faults arrive in Bedrock's dialect, as the SDK's typed exceptions.
func TestBedrockFaults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		fault Fault
		want  any
	}{
		{Fault{Kind: Throttle, RetryAfter: 3 * time.Second}, new(*types.ThrottlingException)},
		{Fault{Kind: ErrorStorm, Status: 503}, new(*types.ServiceUnavailableException)},
		{Fault{Kind: ErrorStorm, Status: 529}, new(*types.ServiceUnavailableException)},
		{Fault{Kind: ErrorStorm, Status: 500}, new(*types.InternalServerException)},
		{Fault{Kind: ErrorStorm, Status: 408}, new(*types.ModelTimeoutException)},
		{Fault{Kind: ModelNotReady}, new(*types.ModelNotReadyException)},
		{Fault{Kind: ContentFilter}, new(*types.ValidationException)},
	} {
		_, c := bedrockSim(t, Config{Faults: []Fault{tc.fault}})
		_, err := c.Converse(ctx, converseInput("m"))
		if !errors.As(err, tc.want) {
			t.Errorf("%s %d: Converse: %v, want %T", tc.fault.Kind, tc.fault.Status, err, tc.want)
		}
		_, err = c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(claudeID), Body: []byte(claudeBody)})
		if !errors.As(err, tc.want) {
			t.Errorf("%s %d: InvokeModel: %v, want %T", tc.fault.Kind, tc.fault.Status, err, tc.want)
		}
	}
}

// A stream_error after some chunks ends the event stream with an
// exception frame, which the SDK returns from the stream's Err after the
// text that came before it.
func TestBedrockStreamError(t *testing.T) {
	_, c := bedrockSim(t, Config{Output: Output{Tokens: 12, ChunkTokens: 3},
		Faults: []Fault{{Kind: StreamError, AfterChunks: 2, Message: "upstream died"}}})
	ctx := context.Background()
	so, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("m"), Messages: converseInput("").Messages})
	if err != nil {
		t.Fatalf("ConverseStream: %v", err)
	}
	deltas := 0
	for ev := range so.GetStream().Events() {
		if _, ok := ev.(*types.ConverseStreamOutputMemberContentBlockDelta); ok {
			deltas++
		}
	}
	var ise *types.InternalServerException
	if err := so.GetStream().Err(); !errors.As(err, &ise) || !strings.Contains(err.Error(), "upstream died") {
		t.Errorf("ConverseStream: Err %v, want an InternalServerException saying upstream died", err)
	}
	so.GetStream().Close()
	if deltas != 2 {
		t.Errorf("%d deltas before the exception, want 2", deltas)
	}

	ro, err := c.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{ModelId: aws.String(claudeID),
		Body: []byte(claudeBody)})
	if err != nil {
		t.Fatalf("InvokeModelWithResponseStream: %v", err)
	}
	for range ro.GetStream().Events() {
	}
	if err := ro.GetStream().Err(); err == nil {
		t.Error("InvokeModelWithResponseStream: a stream cut by an error ended without one")
	}
	ro.GetStream().Close()
}

// A hang before headers and a reset are what the SDK meets as for chat:
// the call fails with no answer, and Stats count it.
func TestBedrockHangAndReset(t *testing.T) {
	s, c := bedrockSim(t, Config{Faults: []Fault{{Kind: Reset}}})
	if _, err := c.Converse(context.Background(), converseInput("m")); err == nil {
		t.Error("Converse through a reset succeeded")
	}
	if n := s.Stats().Outcomes[OutcomeReset]; n != 1 {
		t.Errorf("%d resets counted, want 1", n)
	}
	s, c = bedrockSim(t, Config{Faults: []Fault{{Kind: Hang}}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Converse(ctx, converseInput("m"))
		done <- err
	}()
	waitFor(t, "the call", func() bool { return s.Stats().Calls == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Converse through a hang: %v, want context.Canceled", err)
	}
	waitFor(t, "the hang counted", func() bool { return s.Stats().Outcomes[OutcomeHang] == 1 })
}

// bearerToken provides a Bedrock API key.
func bearerToken(key string) bearer.TokenProvider {
	return bearer.TokenProviderFunc(func(context.Context) (bearer.Token, error) { return bearer.Token{Value: key}, nil })
}

// Half a frame then a cut. The SDK's event-stream decoder reads a frame
// cut short at the end of the body as the stream's end (Err is nil), so
// what shows the answer incomplete is the missing messageStop and
// metadata, and no exception: a client must check for messageStop. (The
// cut is an aborted connection: on a loaded machine its reset can reach
// the client before the first delta was read, which then sees a read
// error and no delta; never more than the one delta sent, never an end.)
func TestBedrockGarbageFrame(t *testing.T) {
	_, c := bedrockSim(t, Config{Output: Output{Tokens: 12, ChunkTokens: 3}, Faults: []Fault{{Kind: Garbage, AfterChunks: 1}}})
	so, err := c.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String("m"),
		Messages: converseInput("").Messages})
	if err != nil {
		t.Fatalf("ConverseStream: %v", err)
	}
	deltas, ends := 0, 0
	for ev := range so.GetStream().Events() {
		switch ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			deltas++
		case *types.ConverseStreamOutputMemberMessageStop, *types.ConverseStreamOutputMemberMetadata:
			ends++
		}
	}
	err = so.GetStream().Err()
	so.GetStream().Close()
	var ise *types.InternalServerException
	if errors.As(err, &ise) || deltas > 1 || ends != 0 || (deltas == 0 && err == nil) {
		t.Errorf("%d deltas, %d end events, then %v; want the delta sent (or a read error), no end and no exception", deltas, ends, err)
	}
}
