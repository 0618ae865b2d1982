package sim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
)

// azureClient is openai-go configured for Azure OpenAI deployments at
// url, never retrying.
func azureClient(url, key string) *openai.Client {
	c := openai.NewClient(azure.WithEndpoint(url, "2024-10-21"), azure.WithAPIKey(key), azure.WithUnsafeAllowHTTP(),
		option.WithMaxRetries(0))
	return &c
}

func azureChat(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say something, please.")}}
}

// openai-go's Azure client reaches the deployment paths: the deployment
// is the model, streamed or not, and embeddings; the v1 API takes the
// model from the body, for chat and responses.
func TestAzureSDK(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 6}, Models: []string{"my-gpt", "my-embed"}, Azure: Azure{Keys: []string{"az-good"}}})
	c := azureClient(ts.URL, "az-good")
	ctx := context.Background()
	out, err := c.Chat.Completions.New(ctx, azureChat("my-gpt"))
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	if out.Model != "my-gpt" || len(strings.Fields(out.Choices[0].Message.Content)) != 6 {
		t.Errorf("chat: model %q, %q; want my-gpt and 6 words", out.Model, out.Choices[0].Message.Content)
	}
	st := c.Chat.Completions.NewStreaming(ctx, azureChat("my-gpt"))
	var text strings.Builder
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if err := st.Err(); err != nil || len(strings.Fields(text.String())) != 6 {
		t.Errorf("stream: %q, %v; want 6 words", text.String(), err)
	}
	emb, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "my-embed", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
	if err != nil || len(emb.Data) != 1 || len(emb.Data[0].Embedding) != 16 {
		t.Errorf("embeddings: %+v, %v", emb, err)
	}
	if _, err := c.Chat.Completions.New(ctx, azureChat("not-deployed")); err == nil {
		t.Error("an unknown deployment answered")
	}

	v1 := openai.NewClient(option.WithBaseURL(ts.URL+"/openai/v1"), option.WithHeader("Api-Key", "az-good"), option.WithMaxRetries(0))
	if out, err := v1.Chat.Completions.New(ctx, azureChat("my-gpt")); err != nil || out.Model != "my-gpt" {
		t.Errorf("v1 chat: %v", err)
	}
	rp := responsesParams("hi")
	rp.Model = "my-gpt"
	if r, err := v1.Responses.New(ctx, rp); err != nil || len(strings.Fields(r.OutputText())) != 6 {
		t.Errorf("v1 responses: %v", err)
	}
	got := s.Stats().APIs
	if got["azure.chat.completions"] != 4 || got["azure.embeddings"] != 1 || got["azure.responses"] != 1 || got["chat.completions"] != 0 {
		t.Errorf("apis %v; want 4 azure chats, 1 embedding, 1 response", got)
	}
}

// A bad api-key is a 401 in Azure's words; an Entra ID token from the
// sim's token endpoint is taken as Authorization: Bearer; a deployment
// path without api-version is a 404, as Azure answers.
func TestAzureAuthAndPaths(t *testing.T) {
	s, ts := start(t, Config{Azure: Azure{Keys: []string{"az-good"}}})
	c := azureClient(ts.URL, "az-bad")
	_, err := c.Chat.Completions.New(context.Background(), azureChat("d"))
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 401 || oe.Code != "401" || !strings.Contains(oe.Message, "Access denied due to invalid subscription key") {
		t.Errorf("a bad key: %v, want Azure's 401", err)
	}
	if strings.Contains(err.Error(), "az-bad") {
		t.Error("the refusal shows the key")
	}
	resp, err := http.PostForm(ts.URL+"/token", map[string][]string{"grant_type": {"client_credentials"},
		"client_id": {"app"}, "client_secret": {"secret"}, "scope": {"https://cognitiveservices.azure.com/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	code, _ := bearerPost(t, ts, "/openai/deployments/d/chat/completions?api-version=2024-10-21", tok.AccessToken, chatBody(false))
	if code != 200 {
		t.Errorf("an Entra ID token: status %d, want 200", code)
	}
	code, _ = bearerPost(t, ts, "/openai/deployments/d/chat/completions?api-version=2024-10-21", "forged", chatBody(false))
	if code != 401 {
		t.Errorf("a forged token: status %d, want 401", code)
	}
	code, b := bearerPost(t, ts, "/openai/deployments/d/chat/completions", tok.AccessToken, chatBody(false))
	if code != 404 || !strings.Contains(b, "Resource not found") {
		t.Errorf("no api-version: %d %s, want 404 Resource not found", code, b)
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/openai/deployments/d/chat/completions?api-version=1", strings.NewReader(
		`{"model":"a","mod\u0065l":"b","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Api-Key", "az-good")
	if resp, err := ts.Client().Do(req); err != nil || resp.StatusCode != 400 {
		t.Errorf("a duplicate model: %v %v, want 400", resp.Status, err)
	} else {
		resp.Body.Close()
	}
	if o := s.Stats().Outcomes; o[OutcomeUnauthorized] != 2 || o[OutcomeOK] != 1 || o[OutcomeBadRequest] != 1 {
		t.Errorf("outcomes %v; want 2 unauthorized, 1 ok, 1 bad request", o)
	}
}

// Faults as Azure sends them: a throttle is a 429 with retry-after-ms
// and retry-after, a content_filter the 400 with its innererror, a 529
// storm a 503.
func TestAzureFaults(t *testing.T) {
	ctx := context.Background()
	_, ts := start(t, Config{Faults: []Fault{{Kind: Throttle, RetryAfter: 2500 * time.Millisecond}}})
	_, err := azureClient(ts.URL, "k").Chat.Completions.New(ctx, azureChat("d"))
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 429 || oe.Code != "429" ||
		oe.Response.Header.Get("Retry-After-Ms") != "2500" || oe.Response.Header.Get("Retry-After") != "3" {
		t.Errorf("throttle: %v, want 429 with retry-after-ms 2500 and retry-after 3", err)
	}

	_, ts = start(t, Config{Faults: []Fault{{Kind: ContentFilter}}})
	_, err = azureClient(ts.URL, "k").Chat.Completions.New(ctx, azureChat("d"))
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Code != "content_filter" || oe.Param != "prompt" {
		t.Fatalf("content filter: %v, want 400 content_filter", err)
	}
	var body struct {
		Error struct {
			InnerError struct {
				Code   string
				Result map[string]struct{ Filtered bool } `json:"content_filter_result"`
			}
		}
	}
	if json.Unmarshal([]byte(oe.RawJSON()), &body.Error) != nil || body.Error.InnerError.Code != "ResponsibleAIPolicyViolation" ||
		!body.Error.InnerError.Result["violence"].Filtered {
		t.Errorf("content filter body %s, want innererror ResponsibleAIPolicyViolation with violence filtered", oe.RawJSON())
	}

	_, ts = start(t, Config{Faults: []Fault{{Kind: ErrorStorm, Status: 529}}})
	_, err = azureClient(ts.URL, "k").Chat.Completions.New(ctx, azureChat("d"))
	if !errors.As(err, &oe) || oe.StatusCode != 503 {
		t.Errorf("a 529 storm: %v, want 503", err)
	}
}
