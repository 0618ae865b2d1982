package geminiapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/auth"
	"google.golang.org/genai"
)

// staticToken is a token provider with a fixed access token.
type staticToken string

func (s staticToken) Token(context.Context) (*auth.Token, error) {
	return &auth.Token{Value: string(s), Type: "Bearer"}, nil
}

// TestVertexPaths drives the package with the genai client in Vertex AI
// mode: the paths it uses must parse, to the model and publisher, and its
// credentials arrive as a bearer token.
func TestVertexPaths(t *testing.T) {
	e := &engine{}
	inner := server(t, e)
	var mu sync.Mutex
	var paths, auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		model, _, pub, ok := ParsePath(r.URL.Path)
		if !ok || model != testModel || pub != "google" {
			t.Errorf("ParsePath(%q) = %q, %q, %v", r.URL.Path, model, pub, ok)
		}
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		Backend: genai.BackendVertexAI, Project: "proj-1", Location: "us-central1",
		Credentials: auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: staticToken("tok-1")}),
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := c.Models.GenerateContent(ctx, testModel, genai.Text("Hi"), nil)
	if err != nil || resp.Text() != "Hello from the engine." {
		t.Fatalf("generate: %v %v", resp, err)
	}
	var text strings.Builder
	for resp, err := range c.Models.GenerateContentStream(ctx, testModel, genai.Text("Hi"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(resp.Text())
	}
	if text.String() != "Hello from the engine." {
		t.Errorf("stream text %q", text.String())
	}
	cfg := &genai.CountTokensConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
	count, err := c.Models.CountTokens(ctx, testModel, genai.Text("Count me"), cfg)
	if err != nil || count.TotalTokens == 0 {
		t.Fatalf("count: %v %v", count, err)
	}
	if msgs := e.lastBody()["messages"].([]any); msgs[0].(map[string]any)["role"] != "system" {
		t.Errorf("Vertex's countTokens system instruction was not counted: %v", msgs)
	}
	want := "/v1beta1/projects/proj-1/locations/us-central1/publishers/google/models/" + testModel
	for i, p := range paths {
		if !strings.HasPrefix(p, want+":") || auths[i] != "Bearer tok-1" {
			t.Errorf("request %d: path %q, authorization %q", i, p, auths[i])
		}
	}
	if len(paths) != 3 {
		t.Errorf("%d requests", len(paths))
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		path               string
		model, method, pub string
		ok                 bool
	}{
		{"/v1beta/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", "generateContent", "", true},
		{"/v1/models/gemini-pro:streamGenerateContent", "gemini-pro", "streamGenerateContent", "", true},
		{"/v1alpha/models/m:countTokens", "m", "countTokens", "", true},
		{"/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-x@2025:generateContent", "claude-x@2025", "generateContent", "anthropic", true},
		{"/v1beta1/projects/p/locations/global/publishers/google/models/g:countTokens", "g", "countTokens", "google", true},
		{"/v1/publishers/google/models/g:generateContent", "g", "generateContent", "google", true},
		{"/v1beta/models/a:b:generateContent", "a:b", "generateContent", "", true},
		{"/v1beta/models/:generateContent", "", "", "", false},
		{"/v1beta/models/m:", "", "", "", false},
		{"/v1beta/models/m", "", "", "", false},
		{"/v1beta/models/m/x:generateContent", "", "", "", false},
		{"/v1beta/models/m:generate-content", "", "", "", false},
		{"/beta/models/m:generateContent", "", "", "", false},
		{"v1beta/models/m:generateContent", "", "", "", false},
		{"/v1/projects/p/locations//publishers/google/models/m:generateContent", "", "", "", false},
		{"/v1/projects/p/publishers/google/models/m:generateContent", "", "", "", false},
		{"/v1/chat/completions", "", "", "", false},
		{"/v1beta/tunedModels/m:generateContent", "", "", "", false},
	}
	for _, tt := range tests {
		model, method, pub, ok := ParsePath(tt.path)
		if model != tt.model || method != tt.method || pub != tt.pub || ok != tt.ok {
			t.Errorf("ParsePath(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tt.path, model, method, pub, ok,
				tt.model, tt.method, tt.pub, tt.ok)
		}
	}
}
