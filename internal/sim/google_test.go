package sim

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"google.golang.org/genai"
)

// geminiClient is the official Gen AI client for the Gemini API at url.
func geminiClient(t *testing.T, url, key string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: url}})
	if err != nil {
		t.Fatalf("genai.NewClient: %v", err)
	}
	return c
}

// vertexClient is the official Gen AI client for Vertex AI at url.
func vertexClient(t *testing.T, url string, creds *auth.Credentials) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{Backend: genai.BackendVertexAI, Project: "p",
		Location: "us-central1", Credentials: creds, HTTPOptions: genai.HTTPOptions{BaseURL: url}})
	if err != nil {
		t.Fatalf("genai.NewClient: %v", err)
	}
	return c
}

// The Gemini API with an API key: generateContent, the SSE stream and
// countTokens, which Stats do not count.
func TestGeminiSDK(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 9}, Google: Google{APIKeys: []string{"gk-good"}}})
	c := geminiClient(t, ts.URL, "gk-good")
	ctx := context.Background()
	resp, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("Say something, please."), nil)
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	if n := len(strings.Fields(resp.Text())); n != 9 || resp.UsageMetadata == nil || resp.UsageMetadata.CandidatesTokenCount != 9 {
		t.Errorf("GenerateContent: %q (%d words), usage %+v; want 9 words and tokens", resp.Text(), n, resp.UsageMetadata)
	}
	var streamed strings.Builder
	var finish genai.FinishReason
	for r, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("Say something, please."), nil) {
		if err != nil {
			t.Fatalf("GenerateContentStream: %v", err)
		}
		streamed.WriteString(r.Text())
		if len(r.Candidates) > 0 && r.Candidates[0].FinishReason != "" {
			finish = r.Candidates[0].FinishReason
		}
	}
	if n := len(strings.Fields(streamed.String())); n != 9 || finish != genai.FinishReasonStop {
		t.Errorf("GenerateContentStream: %q (%d words), finish %q; want 9 words and STOP", streamed.String(), n, finish)
	}
	ct, err := c.Models.CountTokens(ctx, "gemini-2.5-flash", genai.Text("Say something, please."), nil)
	if err != nil || ct.TotalTokens <= 0 {
		t.Errorf("CountTokens: %+v, %v; want a count", ct, err)
	}
	st := s.Stats()
	if st.Calls != 2 || st.APIs["gemini.generate_content"] != 2 || st.Outcomes[OutcomeOK] != 2 {
		t.Errorf("stats calls %d apis %v outcomes %v; want the 2 generations only", st.Calls, st.APIs, st.Outcomes)
	}

	_, err = geminiClient(t, ts.URL, "gk-bad").Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 400 || !strings.Contains(ae.Message, "API key not valid") {
		t.Errorf("a wrong key: %v, want 400 API key not valid", err)
	}
}

// Without alt=sse, streamGenerateContent sends one JSON array; ?key=
// carries the key as well as the header does.
func TestGeminiJSONArrayStream(t *testing.T) {
	_, ts := start(t, Config{Output: Output{Tokens: 6, ChunkTokens: 2}})
	body := `{"contents":[{"role":"user","parts":[{"text":"Say something, please."}]}]}`
	resp, err := post(context.Background(), ts, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=k", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var arr []struct {
		Candidates []struct {
			Content      struct{ Parts []struct{ Text string } }
			FinishReason string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&arr); err != nil {
		t.Fatalf("status %d, not a JSON array: %v", resp.StatusCode, err)
	}
	var text strings.Builder
	for _, e := range arr {
		for _, c := range e.Candidates {
			for _, p := range c.Content.Parts {
				text.WriteString(p.Text)
			}
		}
	}
	if len(arr) < 3 || len(strings.Fields(text.String())) != 6 || arr[len(arr)-1].Candidates[0].FinishReason != "STOP" {
		t.Errorf("%d elements, text %q; want 3 or more with 6 words, the last STOP", len(arr), text.String())
	}
	resp, err = post(context.Background(), ts, "/v1/models/gemini-2.5-flash:generateContent?key=k", body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the v1 path: status %d, want 200", resp.StatusCode)
	}
	resp, err = post(context.Background(), ts, "/v1beta/models/gemini-2.5-flash:generateContent", body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("no key: status %d, want 403", resp.StatusCode)
	}
}

// Faults arrive in Google's dialect: RESOURCE_EXHAUSTED carries the
// fault's retry delay, and a content_filter is a 200 safety block.
func TestGeminiFaults(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		fault  Fault
		code   int
		status string
	}{
		{Fault{Kind: Throttle, RetryAfter: 3 * time.Second}, 429, "RESOURCE_EXHAUSTED"},
		{Fault{Kind: ErrorStorm, Status: 503}, 503, "UNAVAILABLE"},
		{Fault{Kind: ErrorStorm, Status: 529}, 503, "UNAVAILABLE"},
		{Fault{Kind: ErrorStorm, Status: 500}, 500, "INTERNAL"},
		{Fault{Kind: ErrorStorm, Status: 504}, 504, "DEADLINE_EXCEEDED"},
		{Fault{Kind: ErrorStorm, Status: 403}, 403, "PERMISSION_DENIED"},
		{Fault{Kind: ErrorStorm, Status: 400}, 400, "INVALID_ARGUMENT"},
	} {
		_, ts := start(t, Config{Faults: []Fault{tc.fault}})
		_, err := geminiClient(t, ts.URL, "k").Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
		var ae genai.APIError
		if !errors.As(err, &ae) || ae.Code != tc.code || ae.Status != tc.status {
			t.Errorf("%s %d: %v, want %d %s", tc.fault.Kind, tc.fault.Status, err, tc.code, tc.status)
			continue
		}
		if tc.fault.Kind == Throttle {
			if len(ae.Details) != 1 || ae.Details[0]["retryDelay"] != "3s" {
				t.Errorf("throttle details %v, want a RetryInfo of 3s", ae.Details)
			}
		}
	}

	_, ts := start(t, Config{Faults: []Fault{{Kind: ContentFilter}}})
	resp, err := geminiClient(t, ts.URL, "k").Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
	if err != nil || resp.PromptFeedback == nil || resp.PromptFeedback.BlockReason != genai.BlockedReasonSafety || len(resp.Candidates) != 0 {
		t.Errorf("prompt blocked: %+v, %v; want promptFeedback.blockReason SAFETY and no candidates", resp, err)
	}
	s, ts := start(t, Config{Faults: []Fault{{Kind: ContentFilter, Code: "response"}}})
	for r, err := range geminiClient(t, ts.URL, "k").Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("hi"), nil) {
		if err != nil || len(r.Candidates) != 1 || r.Candidates[0].FinishReason != genai.FinishReasonSafety {
			t.Errorf("response blocked: %+v, %v; want a candidate with finishReason SAFETY", r, err)
		}
	}
	if n := s.Stats().Outcomes[OutcomeContentFilter]; n != 1 {
		t.Errorf("%d content filter outcomes, want 1", n)
	}
}

// A stream_error mid-stream reaches the SDK as an error after the text
// that came before it.
func TestGeminiStreamError(t *testing.T) {
	_, ts := start(t, Config{Output: Output{Tokens: 12, ChunkTokens: 3}, Faults: []Fault{{Kind: StreamError, AfterChunks: 2}}})
	var text strings.Builder
	var got error
	for r, err := range geminiClient(t, ts.URL, "k").Models.GenerateContentStream(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil) {
		if err != nil {
			got = err
			break
		}
		text.WriteString(r.Text())
	}
	if got == nil || len(strings.Fields(text.String())) != 6 {
		t.Errorf("text %q then %v; want 6 words then an error", text.String(), got)
	}
}

// serviceKey generates a service account's RSA key, and the PEM of its
// public key.
func serviceKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// serviceAccount returns a service-account JSON for key whose token_uri
// is the sim's.
func serviceAccount(key *rsa.PrivateKey, tokenURI string) []byte {
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	file, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "sa@p.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI,
	})
	return file
}

// saCredentials reads a service-account file as the auth library does.
func saCredentials(t *testing.T, file []byte) *auth.Credentials {
	t.Helper()
	creds, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, file,
		&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		t.Fatalf("credentials: %v", err)
	}
	return creds
}

// Vertex AI with a token the auth library fetched from the sim's token
// endpoint by a signed JWT: generateContent and its stream; the token
// stops working when its lifetime has passed on the sim's clock.
func TestVertexSDK(t *testing.T) {
	clk := newFake()
	key, pub := serviceKey(t)
	s, ts := start(t, Config{Clock: clk, Output: Output{Tokens: 5},
		Google: Google{TokenLifetime: 10 * time.Minute, ServiceAccounts: map[string]string{"sa@p.iam.gserviceaccount.com": pub}}})
	file := serviceAccount(key, ts.URL+"/token")
	creds := saCredentials(t, file)
	c := vertexClient(t, ts.URL, creds)
	ctx := context.Background()
	resp, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("Say something, please."), nil)
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	if n := len(strings.Fields(resp.Text())); n != 5 {
		t.Errorf("GenerateContent: %q, want 5 words", resp.Text())
	}
	for _, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("hi"), nil) {
		if err != nil {
			t.Fatalf("GenerateContentStream: %v", err)
		}
	}
	st := s.Stats()
	if st.APIs["vertex.generate_content"] != 2 || st.Credentials != 1 || st.Outcomes[OutcomeOK] != 2 {
		t.Errorf("stats apis %v credentials %d outcomes %v; want 2 vertex calls on 1 token", st.APIs, st.Credentials, st.Outcomes)
	}

	tok, err := creds.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)
	_, err = c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 401 || ae.Status != "UNAUTHENTICATED" {
		t.Errorf("a token past its lifetime: %v, want 401 UNAUTHENTICATED", err)
	}
	if strings.Contains(err.Error(), tok.Value) {
		t.Error("the refusal shows the token")
	}
}

// A JWT signed by a key other than the service account's is refused
// with invalid_grant, and the call never reaches Vertex.
func TestTokenEndpointChecksSignature(t *testing.T) {
	_, pub := serviceKey(t)
	other, _ := serviceKey(t)
	s, ts := start(t, Config{Google: Google{ServiceAccounts: map[string]string{"sa@p.iam.gserviceaccount.com": pub}}})
	forged := serviceAccount(other, ts.URL+"/token") // the same email, another key
	_, err := saCredentials(t, forged).Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("a forged assertion: %v, want invalid_grant", err)
	}
	if s.Stats().Credentials != 0 {
		t.Error("a forged assertion got a token")
	}
	resp, err := http.PostForm(ts.URL+"/token", map[string][]string{"grant_type": {"password"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "unsupported_grant_type") {
		t.Errorf("grant_type password: %d %s, want 400 unsupported_grant_type", resp.StatusCode, b)
	}
}

// The metadata server refuses a request without Metadata-Flavor, and
// the auth library's own detection finds it (GCE_METADATA_HOST) and
// gets a token that Vertex accepts.
func TestMetadataServer(t *testing.T) {
	s, ts := start(t, Config{Google: Google{Project: "proj-1"}})
	resp, err := http.Get(ts.URL + "/computeMetadata/v1/instance/service-accounts/default/token")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("no Metadata-Flavor: status %d, want 403", resp.StatusCode)
	}
	home := t.TempDir()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", home)
	t.Setenv("CLOUDSDK_CONFIG", home)
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(ts.URL, "http://"))
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		t.Fatalf("DetectDefault: %v", err)
	}
	ctx := context.Background()
	if p, err := creds.ProjectID(ctx); err != nil || p != "proj-1" {
		t.Errorf("ProjectID: %q, %v; want proj-1", p, err)
	}
	if _, err := vertexClient(t, ts.URL, creds).Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil); err != nil {
		t.Errorf("Vertex with the metadata server's token: %v", err)
	}
	if n := s.Stats().Credentials; n != 1 {
		t.Errorf("%d credentials issued, want 1", n)
	}
}

// Claude on Vertex: rawPredict and streamRawPredict take a Messages body
// without model and with anthropic_version vertex-2023-10-16, answered as
// /v1/messages answers; a bad body is refused before the engine.
func TestVertexClaude(t *testing.T) {
	s, ts := start(t, Config{Output: Output{Tokens: 4}})
	tok := issueToken(t, ts)
	base := "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:"
	body := `{"anthropic_version":"vertex-2023-10-16","max_tokens":50,"messages":[{"role":"user","content":"Say something."}]}`
	code, b := bearerPost(t, ts, base+"rawPredict", tok, body)
	var m struct {
		Type, Model string
		Content     []struct{ Text string }
	}
	json.Unmarshal([]byte(b), &m)
	if code != 200 || m.Type != "message" || m.Model != "claude-sonnet-4@20250514" || len(m.Content) != 1 || len(strings.Fields(m.Content[0].Text)) != 4 {
		t.Errorf("rawPredict: %d %s; want a Messages answer of 4 words for the URL's model", code, b)
	}
	code, b = bearerPost(t, ts, base+"streamRawPredict", tok, body)
	if code != 200 || !strings.Contains(b, "event: message_start") || !strings.Contains(b, "event: message_stop") {
		t.Errorf("streamRawPredict: %d %s; want a Messages stream", code, b)
	}
	for _, bad := range []string{
		`{"max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
		`{"anthropic_version":"bedrock-2023-05-31","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
		`{"anthropic_version":"vertex-2023-10-16","model":"claude","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
		`{"anthropic_version":"vertex-2023-10-16","anthropic_version":"vertex-2023-10-16","max_tokens":50,"messages":[]}`,
		`{"anthropic_version":"vertex-2023-10-16","mod\u0065l":"claude","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		if code, b := bearerPost(t, ts, base+"rawPredict", tok, bad); code != 400 || !strings.Contains(b, "invalid_request_error") {
			t.Errorf("%s: %d %s, want 400 invalid_request_error", bad, code, b)
		}
	}
	if code, b := bearerPost(t, ts, base+"rawPredict", "ya29.not-issued", body); code != 401 || !strings.Contains(b, "UNAUTHENTICATED") {
		t.Errorf("an unknown token: %d %s, want 401 UNAUTHENTICATED", code, b)
	}
	if st := s.Stats(); st.APIs["vertex.raw_predict"] != 8 || st.Outcomes[OutcomeOK] != 2 || st.Outcomes[OutcomeUnauthorized] != 1 {
		t.Errorf("apis %v outcomes %v; want 8 raw_predict calls, 2 ok, 1 unauthorized", st.APIs, st.Outcomes)
	}
}

// issueToken gets an access token from the sim's token endpoint by the
// refresh_token grant, as an authorized_user ADC file does.
func issueToken(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	resp, err := http.PostForm(ts.URL+"/token", map[string][]string{"grant_type": {"refresh_token"},
		"client_id": {"c"}, "client_secret": {"s"}, "refresh_token": {"r"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" || tok.ExpiresIn != 3600 || tok.TokenType != "Bearer" {
		t.Fatalf("token: %d %+v %v", resp.StatusCode, tok, err)
	}
	return tok.AccessToken
}

// bearerPost posts body with a bearer token and returns the answer.
func bearerPost(t *testing.T, ts *httptest.Server, path, tok, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Vertex's express mode takes an API key on /publishers/google paths
// without a project, and counts as Vertex.
func TestVertexExpress(t *testing.T) {
	s, ts := start(t, Config{Google: Google{APIKeys: []string{"vk"}}})
	ctx := context.Background()
	for key, ok := range map[string]bool{"vk": true, "bad": false} {
		c, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendVertexAI, APIKey: key,
			HTTPOptions: genai.HTTPOptions{BaseURL: ts.URL}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
		if (err == nil) != ok {
			t.Errorf("key %s: %v, want success %v", key, err, ok)
		}
	}
	if st := s.Stats(); st.APIs["vertex.generate_content"] != 2 || st.Outcomes[OutcomeOK] != 1 || st.Outcomes[OutcomeUnauthorized] != 1 {
		t.Errorf("apis %v outcomes %v; want 2 vertex calls, 1 ok, 1 unauthorized", st.APIs, st.Outcomes)
	}
}
