package azure

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// officialRequests are the requests the official openai-go client sends
// with azure.WithEndpoint(endpoint, version) and azure.WithAPIKey(key):
// official_test.go checks this table against the client itself;
// TestRequestsMatchTheOfficialClient checks this package against the
// table.
var officialRequests = []struct {
	name, version, op, deployment string
	// uri is the request line's target: escaped path and query.
	method, uri string
}{
	{"chat", "2024-10-21", "/chat/completions", "gpt-4o-prod", "POST", "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21"},
	{"embeddings", "2024-10-21", "/embeddings", "text-embedding-3-small", "POST", "/openai/deployments/text-embedding-3-small/embeddings?api-version=2024-10-21"},
	{"escaped deployment", "2024-10-21", "/chat/completions", "team a/gpt-4.1", "POST", "/openai/deployments/team%20a%2Fgpt-4.1/chat/completions?api-version=2024-10-21"},
	{"responses", "2025-04-01-preview", "/responses", "gpt-4.1", "POST", "/openai/responses?api-version=2025-04-01-preview"},
	{"models", "2024-10-21", "models", "", "GET", "/openai/models?api-version=2024-10-21"},
}

// recorder is a fake resource that keeps the requests it is sent.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs, rec.body = append(rec.reqs, r), append(rec.body, string(b))
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"object":"list","data":[]}`)
}

func (rec *recorder) last(t *testing.T) (*http.Request, string) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		t.Fatal("nothing was sent")
	}
	return rec.reqs[len(rec.reqs)-1], rec.body[len(rec.body)-1]
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.reqs)
}

func newRecorder(t *testing.T) (*recorder, *httptest.Server) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv
}

// sendOp sends op as the router would: a Call for an operation, Probe for
// "models".
func sendOp(ctx context.Context, up *Upstream, op, deployment, key string) (*http.Response, error) {
	if op == "models" {
		return up.Probe(ctx, key)
	}
	return up.Send(ctx, &router.Call{Path: op, Model: deployment, Key: key, Body: []byte(`{"model":"` + deployment + `"}`)})
}

// Ours sends what the official client sends: the same method, escaped
// path and query, the key in the same header and no other credential.
func TestRequestsMatchTheOfficialClient(t *testing.T) {
	rec, srv := newRecorder(t)
	for _, tc := range officialRequests {
		up, err := New(Config{Endpoint: srv.URL, APIVersion: tc.version, Responses: tc.op == "/responses"})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := sendOp(t.Context(), up, tc.op, tc.deployment, "key-1")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		r, _ := rec.last(t)
		if r.Method != tc.method || r.RequestURI != tc.uri {
			t.Errorf("%s: %s %s; the official client sends %s %s", tc.name, r.Method, r.RequestURI, tc.method, tc.uri)
		}
		if got := r.Header.Values("Api-Key"); len(got) != 1 || got[0] != "key-1" || r.Header.Get("Authorization") != "" {
			t.Errorf("%s: Api-Key %q, Authorization %q; want the key in Api-Key alone", tc.name, got, r.Header.Get("Authorization"))
		}
		up.CloseIdle()
	}
}

// The v1 API has OpenAI's own paths under /openai/v1, no api-version, and
// the deployment in the body: the paths the official openai-go client
// sends to a base URL of {endpoint}/openai/v1/, as Azure's documentation
// configures it.
func TestV1Paths(t *testing.T) {
	rec, srv := newRecorder(t)
	up, err := New(Config{Endpoint: srv.URL + "/", APIVersion: V1, Responses: true})
	if err != nil {
		t.Fatal(err)
	}
	defer up.CloseIdle()
	official := openai.NewClient(option.WithBaseURL(srv.URL+"/openai/v1/"), option.WithAPIKey("key-1"), option.WithMaxRetries(0))
	for op, call := range map[string]func(){
		"/chat/completions": func() {
			official.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
				Model: "my-deployment", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		},
		"/embeddings": func() {
			official.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
				Model: "my-deployment", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
		},
		"/responses": func() {
			official.Responses.New(t.Context(), responses.ResponseNewParams{
				Model: "my-deployment", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		},
		"models": func() { official.Models.List(t.Context()) },
	} {
		call() // its answer need not parse: only what it sent matters
		r, _ := rec.last(t)
		want := r.RequestURI
		resp, err := sendOp(t.Context(), up, op, "my-deployment", "key-1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		r, body := rec.last(t)
		if r.RequestURI != want {
			t.Errorf("%s: sent to %s; want %s", op, r.RequestURI, want)
		}
		if op != "models" && body != `{"model":"my-deployment"}` {
			t.Errorf("%s: body %s; want the deployment in model", op, body)
		}
	}
}
