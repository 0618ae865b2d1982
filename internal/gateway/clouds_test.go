package gateway

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// cloudSim is a simulated provider that speaks every cloud's wire format,
// with the credentials a gateway must present: SigV4 under one AWS key,
// a Google token from its own token endpoint, a Gemini key, an Azure key.
func cloudSim(t *testing.T, name string, faults ...sim.Fault) (*sim.Server, *httptest.Server) {
	t.Helper()
	s, err := sim.New(sim.Config{Name: name, Seed: 7, Faults: faults,
		AWS:    sim.AWS{Region: "us-east-1", Keys: map[string]string{"AKIDSIMULATED": "sim-secret"}},
		Google: sim.Google{APIKeys: []string{"gemini-key"}},
		Azure:  sim.Azure{Keys: []string{"azure-key"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, hs
}

// serviceAccountFile writes a service-account key file whose token_uri is
// the simulator's token endpoint.
func serviceAccountFile(t *testing.T, tokenURI string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "sim-project", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "fusebox@sim-project.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": tokenURI,
	})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cloudProviders is a providers block for the clouds of one simulator.
func cloudProviders(url, saFile string) string {
	return fmt.Sprintf(`
  bedrock: {type: bedrock, region: us-east-1, base_url: "%[1]s", aws: {access_key_id: AKIDSIMULATED, secret_access_key: sim-secret}}
  vertex: {type: vertex, project: sim-project, region: us-east5, base_url: "%[1]s", credentials_file: "%[2]s"}
  gemini: {type: gemini, base_url: "%[1]s", keys: [gemini-key]}
  azure: {type: azure, base_url: "%[1]s", keys: [azure-key]}
`, url, saFile)
}

// Every cloud, reached through the gateway by OpenAI's official client,
// plain and streamed: the simulator checks each cloud's credentials and
// speaks its wire format, so an answer means the format was the cloud's.
func TestEveryCloudThroughTheGateway(t *testing.T) {
	s, hs := cloudSim(t, "clouds")
	sa := serviceAccountFile(t, hs.URL+"/token")
	_, gw := start(t, Options{}, `providers:`+cloudProviders(hs.URL, sa)+`
models:
  - {name: bedrock-claude, targets: [{provider: bedrock, model: claude-sonnet-4-5}]}
  - {name: bedrock-nova, targets: [{provider: bedrock, model: amazon.nova-pro-v1:0, price: {input: 0.8, output: 3.2}}]} # not in the catalog
  - {name: vertex-claude, targets: [{provider: vertex, model: claude-sonnet-4-5}]}
  - {name: vertex-gemini, targets: [{provider: vertex, model: gemini-2.5-flash}]}
  - {name: gemini, targets: [{provider: gemini, model: gemini-2.5-flash}]}
  - {name: azure, targets: [{provider: azure, model: gpt-4.1, deployment: prod-41}]}
`)
	c := newClient(gw.URL)
	apis := map[string]string{
		"bedrock-claude": "bedrock.invoke", "bedrock-nova": "bedrock.converse",
		"vertex-claude": "vertex.raw_predict", "vertex-gemini": "vertex.generate_content",
		"gemini": "gemini.generate_content", "azure": "azure.chat.completions",
	}
	for alias, api := range apis {
		t.Run(alias, func(t *testing.T) {
			before := s.Stats().APIs[api]
			var resp *http.Response
			got, err := c.Chat.Completions.New(context.Background(), params(alias), option.WithResponseInto(&resp))
			if err != nil {
				t.Fatalf("plain: %v", err)
			}
			if text(got) == "" || got.Usage.PromptTokens == 0 || got.Usage.CompletionTokens == 0 || got.Choices[0].FinishReason == "" {
				t.Errorf("plain answer %+v", got)
			}
			if cost := resp.Header.Get("X-Fusebox-Cost"); cost == "" || cost == "0" {
				t.Errorf("X-Fusebox-Cost = %q: the catalog prices the target", cost)
			}
			stream := c.Chat.Completions.NewStreaming(context.Background(), params(alias))
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if len(acc.Choices) == 0 || acc.Choices[0].Message.Content == "" || acc.Choices[0].FinishReason == "" {
				t.Errorf("streamed answer %+v", acc.ChatCompletion)
			}
			if n := s.Stats().APIs[api] - before; n != 2 {
				t.Errorf("%s calls = %d, want 2", api, n)
			}
		})
	}
}

// An Anthropic SDK client's Messages request reaches Claude on Bedrock and
// on Vertex AI as the Messages body it wrote (InvokeModel, rawPredict),
// and its answer comes back as the cloud gave it, streamed too.
func TestMessagesGoNativeToClaudeOnTheClouds(t *testing.T) {
	s, hs := cloudSim(t, "clouds")
	sa := serviceAccountFile(t, hs.URL+"/token")
	_, gw := start(t, Options{}, `providers:`+cloudProviders(hs.URL, sa)+`
models:
  - {name: bedrock-claude, targets: [{provider: bedrock, model: claude-sonnet-4-5}]}
  - {name: vertex-claude, targets: [{provider: vertex, model: claude-sonnet-4-5}]}
`)
	c := anthropic.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	for alias, api := range map[string]string{"bedrock-claude": "bedrock.invoke", "vertex-claude": "vertex.raw_predict"} {
		t.Run(alias, func(t *testing.T) {
			before := s.Stats().APIs[api]
			p := anthropic.MessageNewParams{Model: anthropic.Model(alias), MaxTokens: 64,
				System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
			m, err := c.Messages.New(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Content) == 0 || m.Content[0].Text == "" || m.StopReason == "" || m.Usage.OutputTokens == 0 {
				t.Errorf("message %+v", m)
			}
			stream := c.Messages.NewStreaming(context.Background(), p)
			var acc anthropic.Message
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(acc.Content) == 0 || acc.Content[0].Text == "" || acc.StopReason == "" {
				t.Errorf("streamed message %+v", acc)
			}
			if n := s.Stats().APIs[api] - before; n != 2 {
				t.Errorf("%s calls = %d, want 2", api, n)
			}
		})
	}
}

// The ladder users build against Anthropic's 529 storms: Anthropic
// overloaded, Claude on Bedrock throttled, Claude on Vertex AI serves.
// The client sees one clean answer; Anthropic's breaker counts the
// outage, Bedrock's throttle does not trip its breaker.
func TestCrossCloudClaudeLadder(t *testing.T) {
	storm := sim.Fault{Kind: sim.ErrorStorm, Status: 529, To: time.Hour}
	throttle := sim.Fault{Kind: sim.Throttle, RetryAfter: 30 * time.Second, To: time.Hour}
	ant, antHS := cloudSim(t, "anthropic", storm)
	aws, awsHS := cloudSim(t, "bedrock", throttle)
	gcp, gcpHS := cloudSim(t, "vertex")
	sa := serviceAccountFile(t, gcpHS.URL+"/token")
	srv, gw := start(t, Options{}, fmt.Sprintf(`providers:
  anthropic: {type: anthropic, base_url: "%s", keys: [k]}
  bedrock: {type: bedrock, region: us-east-1, base_url: "%s", aws: {access_key_id: AKIDSIMULATED, secret_access_key: sim-secret}}
  vertex: {type: vertex, project: sim-project, region: us-east5, base_url: "%s", credentials_file: "%s"}
models:
  - name: claude
    targets:
      - {provider: anthropic, model: claude-sonnet-4-5}
      - {provider: bedrock, model: claude-sonnet-4-5}
      - {provider: vertex, model: claude-sonnet-4-5}
    breaker: {consecutive: 3}
    retry: {attempts: 1}
`, antHS.URL, awsHS.URL, gcpHS.URL, sa))
	c := newClient(gw.URL)
	for i := range 6 {
		var resp *http.Response
		got, err := c.Chat.Completions.New(context.Background(), params("claude"), option.WithResponseInto(&resp))
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if target := resp.Header.Get("X-Fusebox-Target"); target != "vertex/claude-sonnet-4-5" || text(got) == "" {
			t.Fatalf("request %d served by %q: %q", i, target, text(got))
		}
	}
	if n := ant.Stats().APIs["messages"]; n != 3 {
		t.Errorf("Anthropic was called %d times, want 3: its breaker opens after 3 overloaded answers", n)
	}
	if n := aws.Stats().APIs["bedrock.invoke"]; n != 1 {
		t.Errorf("Bedrock was called %d times, want 1: its throttle rests the target for 30s", n)
	}
	if n := gcp.Stats().APIs["vertex.raw_predict"]; n != 6 {
		t.Errorf("Vertex served %d, want 6", n)
	}
	states := map[string]string{}
	for _, tg := range srv.state().router.Targets() {
		states[tg.Name] = tg.Breaker().State().String()
	}
	if states["anthropic/claude-sonnet-4-5"] != "open" || states["bedrock/claude-sonnet-4-5"] != "closed" {
		t.Errorf("breakers %v: want Anthropic's open and Bedrock's closed (a throttle is not an outage)", states)
	}
}

// A google-genai client speaks Gemini's API to the gateway, which walks
// the alias's ladder (here an OpenAI-compatible target and Claude on
// Bedrock) and answers in Gemini's shapes: generateContent, its stream,
// countTokens, and errors in Google's shape.
func TestGeminiAPIInbound(t *testing.T) {
	s, hs := cloudSim(t, "clouds")
	sa := serviceAccountFile(t, hs.URL+"/token")
	_, gw := start(t, Options{}, `clients:
  - {name: app, key: client-key}
providers:
  oai: {type: openai, base_url: "`+hs.URL+`/v1", keys: [k]}`+cloudProviders(hs.URL, sa)+`
models:
  - {name: smart, targets: [{provider: oai, model: sim-large}]}
  - {name: claude, targets: [{provider: bedrock, model: claude-sonnet-4-5}]}
`)
	ctx := context.Background()
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "client-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: gw.URL}})
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"smart", "claude"} {
		got, err := c.Models.GenerateContent(ctx, model, genai.Text("hi"), &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser), MaxOutputTokens: 50})
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if got.Text() == "" || got.UsageMetadata == nil || got.UsageMetadata.PromptTokenCount == 0 || got.Candidates[0].FinishReason == "" {
			t.Errorf("%s: answer %+v", model, got)
		}
		var text strings.Builder
		var finish genai.FinishReason
		for chunk, err := range c.Models.GenerateContentStream(ctx, model, genai.Text("hi"), nil) {
			if err != nil {
				t.Fatalf("%s stream: %v", model, err)
			}
			text.WriteString(chunk.Text())
			if len(chunk.Candidates) > 0 && chunk.Candidates[0].FinishReason != "" {
				finish = chunk.Candidates[0].FinishReason
			}
		}
		if text.Len() == 0 || finish == "" {
			t.Errorf("%s stream: %q, finish %q", model, text.String(), finish)
		}
	}
	if n := s.Stats().APIs["bedrock.invoke"]; n != 2 {
		t.Errorf("bedrock.invoke calls = %d, want 2", n)
	}
	count, err := c.Models.CountTokens(ctx, "smart", genai.Text("how many tokens is this?"), nil)
	if err != nil || count.TotalTokens == 0 {
		t.Errorf("countTokens = %+v, %v", count, err)
	}
	_, err = c.Models.GenerateContent(ctx, "nope", genai.Text("hi"), nil)
	var apiErr genai.APIError
	if !asAPIError(err, &apiErr) || apiErr.Code != 404 || apiErr.Status != "NOT_FOUND" {
		t.Errorf("unknown model: %v, want a 404 NOT_FOUND in Google's shape", err)
	}
	bad, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "wrong", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: gw.URL}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Models.GenerateContent(ctx, "smart", genai.Text("hi"), nil)
	if !asAPIError(err, &apiErr) || apiErr.Code != 401 || apiErr.Status != "UNAUTHENTICATED" {
		t.Errorf("a wrong key: %v, want a 401 UNAUTHENTICATED", err)
	}
}

func asAPIError(err error, target *genai.APIError) bool {
	if e, ok := err.(genai.APIError); ok {
		*target = e
		return true
	}
	if e, ok := err.(*genai.APIError); ok {
		*target = *e
		return true
	}
	return false
}

// A target that does not have the model (Azure's DeploymentNotFound) is
// passed over for the next, and its breaker counts nothing: the client did
// nothing wrong, and the target is not down.
func TestAModelNotDeployedFailsOver(t *testing.T) {
	missing := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}`)
	})
	other := newUpstream(t, chatOK("other"))
	srv, gw := start(t, Options{}, `providers:
  azure: {type: azure, base_url: "%s", keys: [k]}
  other: {type: openai, base_url: "%s/v1", keys: [k]}
models:
  - {name: gpt, targets: [{provider: azure, model: gpt-4.1, deployment: gone}, {provider: other, model: gpt-4.1}]}
`, missing, other)
	var resp *http.Response
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(context.Background(), params("gpt"), option.WithResponseInto(&resp))
	if err != nil || text(got) != "hello from other" {
		t.Fatalf("%q, %v", text(got), err)
	}
	if tried := resp.Header.Get("X-Fusebox-Tried"); !strings.Contains(tried, "azure/gone") {
		t.Errorf("X-Fusebox-Tried %q does not name the target passed over", tried)
	}
	if tot := settled(t, srv, "azure/gone", 1); tot.Failed != 0 {
		t.Errorf("the breaker of a target without the model counted %+v", tot)
	}
}
