package vertex

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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/provider/gemini"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// tokenServer is a fake OAuth token endpoint that counts the tokens it
// issues: tok-1, tok-2, … each with the next lifetime of expires (the last
// repeats).
type tokenServer struct {
	*httptest.Server
	issued  atomic.Int32
	expires []int
	served  chan string // each token issued, when not nil
	fail    atomic.Bool
}

func newTokenServer(t *testing.T, expires ...int) *tokenServer {
	ts := &tokenServer{expires: expires}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ts.fail.Load() {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature: SECRET-DETAIL"}`)
			return
		}
		r.ParseForm()
		if r.URL.Path != "/token" || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || r.PostForm.Get("assertion") == "" {
			t.Errorf("token request %s %v", r.URL, r.PostForm)
		}
		n := int(ts.issued.Add(1))
		exp := ts.expires[min(n, len(ts.expires))-1]
		tok := "tok-" + strconv.Itoa(n)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"`+tok+`","expires_in":`+strconv.Itoa(exp)+`,"token_type":"Bearer"}`)
		if ts.served != nil {
			ts.served <- tok
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// keyPEM is a fresh RSA key, PKCS#8 PEM, for a test service account.
var keyPEM = sync.OnceValue(func() string {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
})

func serviceAccount(tokenURI string) []byte {
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p1", "private_key_id": "kid1", "private_key": keyPEM(),
		"client_email": "gw@p1.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI,
	})
	return b
}

// fakeVertex accepts requests whose bearer token is one it was told of,
// and answers 401 UNAUTHENTICATED in Google's shape otherwise.
type fakeVertex struct {
	*httptest.Server
	mu     sync.Mutex
	valid  map[string]bool
	tokens []string // the token of each request
	paths  []string
	bodies []string
	answer func(w http.ResponseWriter, r *http.Request)
}

func newFakeVertex(t *testing.T, answer func(w http.ResponseWriter, r *http.Request), valid ...string) *fakeVertex {
	f := &fakeVertex{valid: map[string]bool{}, answer: answer}
	for _, v := range valid {
		f.valid[v] = true
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		f.tokens = append(f.tokens, tok)
		f.paths = append(f.paths, r.URL.RequestURI())
		f.bodies = append(f.bodies, string(body))
		ok := f.valid[tok] || (len(f.valid) == 0 && strings.HasPrefix(tok, "tok-"))
		f.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
			return
		}
		f.answer(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeVertex) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.tokens)
}

func (f *fakeVertex) last() (tok, path, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.tokens) - 1
	return f.tokens[n], f.paths[n], f.bodies[n]
}

const geminiAnswer = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1},"modelVersion":"gemini-2.5-flash"}`

func writeGemini(w http.ResponseWriter, r *http.Request) { io.WriteString(w, geminiAnswer) }

func newUpstream(t *testing.T, c Config) *Upstream {
	t.Helper()
	c.Project, c.Location = "p1", "us-central1"
	c.Clock = clocktest.New(time.Unix(1700000000, 0))
	u, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	return u
}

func chat(model string, stream bool) *router.Call {
	return &router.Call{Path: "/chat/completions", Model: model, Stream: stream,
		Body: []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"Hi"}]}`)}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading: %v (after %q)", err, b)
	}
	return string(b)
}

func TestGeminiOnVertex(t *testing.T) {
	ts := newTokenServer(t, 3600)
	var stream atomic.Bool
	v := newFakeVertex(t, func(w http.ResponseWriter, r *http.Request) {
		if stream.Load() {
			io.WriteString(w, "data: "+geminiAnswer+"\r\n\r\n")
			return
		}
		writeGemini(w, r)
	})
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(ts.URL + "/token")})
	resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp)
	tok, path, body := v.last()
	want, _ := gemini.TranslateChat(chat("gemini-2.5-flash", false).Body, false)
	if path != "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent" || tok != "tok-1" || body != string(want.Body) {
		t.Errorf("sent %s with %q: %s", path, tok, body)
	}
	if resp.StatusCode != 200 || !strings.Contains(got, `"content":"Hello"`) || !strings.Contains(got, `"created":1700000000`) {
		t.Errorf("got %d %s", resp.StatusCode, got)
	}
	stream.Store(true)
	resp, err = u.Send(context.Background(), chat("gemini-2.5-flash", true))
	if err != nil {
		t.Fatal(err)
	}
	got = readAll(t, resp)
	if _, path, _ := v.last(); path != "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse" ||
		!strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Errorf("stream via %s: %s", path, got)
	}
}

const claudeAnswer = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hi there"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}`

func TestClaudeOnVertex(t *testing.T) {
	ts := newTokenServer(t, 3600)
	v := newFakeVertex(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ":streamRawPredict") {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":3}}}\n\n"+
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi there\"}}\n\n"+
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n"+
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			return
		}
		io.WriteString(w, claudeAnswer)
	})
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(ts.URL + "/token")})
	const model = "claude-sonnet-4-5@20250929"
	resp, err := u.Send(context.Background(), chat(model, false))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp)
	_, path, body := v.last()
	if path != "/v1/projects/p1/locations/us-central1/publishers/anthropic/models/"+model+":rawPredict" {
		t.Errorf("sent to %s", path)
	}
	var sent map[string]json.RawMessage
	json.Unmarshal([]byte(body), &sent)
	if string(sent["anthropic_version"]) != `"vertex-2023-10-16"` || sent["model"] != nil || sent["messages"] == nil || sent["max_tokens"] == nil {
		t.Errorf("body %s", body)
	}
	if !strings.Contains(got, `"object":"chat.completion"`) || !strings.Contains(got, `"content":"Hi there"`) {
		t.Errorf("answer %s", got)
	}
	resp, err = u.Send(context.Background(), chat(model, true))
	if err != nil {
		t.Fatal(err)
	}
	got = readAll(t, resp)
	_, path, body = v.last()
	if !strings.HasSuffix(path, model+":streamRawPredict") || !strings.Contains(body, `"stream":true`) ||
		!strings.Contains(got, `"content":"Hi there"`) || !strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Errorf("stream via %s (%s): %s", path, body, got)
	}
}

// A client's own Messages body goes as it is, less every "model" key
// (escaped or repeated), with Vertex's anthropic_version and the client's
// beta flags; the answer comes back as Anthropic sent it.
func TestNativeMessagesOnVertex(t *testing.T) {
	ts := newTokenServer(t, 3600)
	v := newFakeVertex(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, claudeAnswer) })
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(ts.URL + "/token")})
	if !u.SpeaksMessages("claude-opus-4-1@20250805") || u.SpeaksMessages("gemini-2.5-pro") {
		t.Error("SpeaksMessages: want true for Claude only")
	}
	native := `{"model":"claude-opus-4-1","max_tokens":5, "\u006dodel":"x","system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"anthropic_version":"bedrock-2023-05-31","messages":[{"role":"user","content":"Hi"}]}`
	resp, err := u.Send(context.Background(), &router.Call{Path: "/chat/completions", Model: "claude-opus-4-1", Native: []byte(native),
		Header: http.Header{"Anthropic-Beta": {"context-1m-2025-08-07, interleaved-thinking-2025-05-14"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != claudeAnswer {
		t.Errorf("answer %s, want Anthropic's as it came", got)
	}
	_, path, body := v.last()
	const want = `{"anthropic_version":"vertex-2023-10-16","max_tokens":5,"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"Hi"}],"anthropic_beta":["context-1m-2025-08-07","interleaved-thinking-2025-05-14"]}`
	if !strings.HasSuffix(path, "/anthropic/models/claude-opus-4-1:rawPredict") || body != want {
		t.Errorf("sent to %s:\n%s\nwant\n%s", path, body, want)
	}
	// Gemini models do not take Messages bodies.
	var un *router.Unservable
	if _, err := u.Send(context.Background(), &router.Call{Model: "gemini-2.5-pro", Native: []byte(native)}); !errors.As(err, &un) {
		t.Errorf("a Messages body for Gemini: got %v, want Unservable", err)
	}
}

// Many requests, concurrent ones among them, make one token fetch.
func TestOneTokenForManyRequests(t *testing.T) {
	ts := newTokenServer(t, 3600)
	v := newFakeVertex(t, writeGemini)
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(ts.URL + "/token")})
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
			if err != nil {
				t.Error(err)
				return
			}
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if n := ts.issued.Load(); n != 1 {
		t.Errorf("%d token fetches for 40 requests, want 1", n)
	}
}

// A token close to its expiry is replaced before it expires, in the
// background: requests go on with the old token meanwhile, then carry the
// new one, and the new one is fetched once.
func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	ts := newTokenServer(t, 60, 3600) // 60 s is inside the library's refresh window
	ts.served = make(chan string, 4)
	v := newFakeVertex(t, writeGemini)
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(ts.URL + "/token")})
	send := func() string {
		resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		tok, _, _ := v.last()
		return tok
	}
	if tok := send(); tok != "tok-1" || <-ts.served != "tok-1" {
		t.Fatalf("first request with %q", tok)
	}
	send() // finds tok-1 stale and starts the refresh
	if got := <-ts.served; got != "tok-2" {
		t.Fatalf("refresh issued %q", got)
	}
	// The refresh stores tok-2 right after its answer: requests carry it
	// from then on.
	tok := ""
	for range 1000 {
		if tok = send(); tok == "tok-2" {
			break
		}
	}
	if tok != "tok-2" {
		t.Fatalf("requests still carry %q after the refresh", tok)
	}
	for range 5 {
		send()
	}
	if n := ts.issued.Load(); n != 2 {
		t.Errorf("%d token fetches, want 2", n)
	}
}

// Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS names a
// service account file.
func TestADCFromEnvironment(t *testing.T) {
	ts := newTokenServer(t, 3600)
	v := newFakeVertex(t, writeGemini)
	file := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(file, serviceAccount(ts.URL+"/token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", file)
	u := newUpstream(t, Config{BaseURL: v.URL})
	resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if tok, _, _ := v.last(); tok != "tok-1" || ts.issued.Load() != 1 {
		t.Errorf("sent with %q after %d fetches", tok, ts.issued.Load())
	}
	// CredentialsFile names the same file.
	u = newUpstream(t, Config{BaseURL: v.URL, CredentialsFile: file})
	resp, err = u.Send(context.Background(), chat("gemini-2.5-flash", false))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CredentialsFile: %v", err)
	}
	resp.Body.Close()
}

// On GCE, GKE (workload identity) and Cloud Run, Application Default
// Credentials come from the metadata server.
func TestADCFromMetadataServer(t *testing.T) {
	var fetches atomic.Int32
	md := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		switch r.URL.Path {
		case "/computeMetadata/v1/instance/service-accounts/default/token":
			if s := r.URL.Query().Get("scopes"); s != "" && s != Scope {
				t.Errorf("scopes %q", s)
			}
			fetches.Add(1)
			w.Header().Set("Metadata-Flavor", "Google")
			io.WriteString(w, `{"access_token":"md-token","expires_in":3599,"token_type":"Bearer"}`)
		default:
			w.Header().Set("Metadata-Flavor", "Google")
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer md.Close()
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(md.URL, "http://"))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	v := newFakeVertex(t, writeGemini, "md-token")
	u := newUpstream(t, Config{BaseURL: v.URL})
	for range 3 {
		resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, readAll(t, resp))
		}
		resp.Body.Close()
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d metadata token fetches, want 1", n)
	}
}

// A token endpoint that refuses, or cannot be reached, gives an error
// that says so without a secret, and nothing reaches Vertex.
func TestTokenFailureSendsNothing(t *testing.T) {
	ts := newTokenServer(t, 3600)
	ts.fail.Store(true)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	v := newFakeVertex(t, writeGemini)
	for _, uri := range []string{ts.URL + "/token", goneURL + "/token"} {
		u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(uri)})
		resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: no error", uri)
		}
		msg := err.Error()
		t.Logf("%s: %s", uri, msg)
		if !strings.HasPrefix(msg, "vertex: getting an access token: ") || strings.Contains(msg, "SECRET-DETAIL") ||
			strings.Contains(msg, "PRIVATE KEY") || strings.Contains(msg, "assertion") {
			t.Errorf("%s: error %q", uri, msg)
		}
		if uri == ts.URL+"/token" && !strings.Contains(msg, "400") && !strings.Contains(msg, "invalid_grant") {
			t.Errorf("error %q does not say what the endpoint answered", msg)
		}
	}
	if n := v.requests(); n != 0 {
		t.Errorf("%d requests reached Vertex without a token", n)
	}
	// A key that cannot sign is found at the first request, and not
	// echoed.
	broken := strings.Replace(string(serviceAccount(ts.URL+"/token")), "MII", "XXX", 1)
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: []byte(broken)})
	if _, err := u.Send(context.Background(), chat("gemini-2.5-flash", false)); err == nil ||
		strings.Contains(err.Error(), "XXX") || strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Errorf("a broken key: got %v", err)
	}
	if n := v.requests(); n != 0 {
		t.Errorf("%d requests reached Vertex with a broken key", n)
	}
	// A cancelled context stays a cancelled context.
	u = newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(goneURL + "/token")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := u.Send(ctx, chat("gemini-2.5-flash", false)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// A token Vertex refuses is answered 401 UNAUTHENTICATED, passed through
// unchanged for aierr, which reads it as an auth refusal.
func TestWrongTokenRefused(t *testing.T) {
	ts := newTokenServer(t, 3600)
	v := newFakeVertex(t, writeGemini, "some-other-token")
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: serviceAccount(ts.URL + "/token")})
	resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != 401 || !strings.Contains(body, `"status":"UNAUTHENTICATED"`) {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	if v := aierr.Classify(resp.StatusCode, resp.Header, []byte(body)); v.Kind != aierr.Auth {
		t.Errorf("aierr reads %v, want Auth", v.Kind)
	}
}

func TestNewValidates(t *testing.T) {
	sa := serviceAccount("http://127.0.0.1:1/token")
	cases := []struct {
		c    Config
		want string
	}{
		{Config{Location: "us-central1", CredentialsJSON: sa}, "Project"},
		{Config{Project: "p", CredentialsJSON: sa}, "Location"},
		{Config{Project: "p/../q", Location: "l", CredentialsJSON: sa}, "Project"},
		{Config{Project: "p", Location: "us central", CredentialsJSON: sa}, "Location"},
		{Config{Project: "p", Location: "l", BaseURL: "ftp://x", CredentialsJSON: sa}, "BaseURL"},
		{Config{Project: "p", Location: "l", CredentialsJSON: sa, CredentialsFile: "f"}, "CredentialsJSON and CredentialsFile"},
		{Config{Project: "p", Location: "l", CredentialsJSON: []byte(`not json`)}, "CredentialsJSON"},
		{Config{Project: "p", Location: "l", CredentialsJSON: []byte(`{"type":"gdch_service_account"}`)}, "CredentialsJSON"},
		{Config{Project: "p", Location: "l", CredentialsFile: filepath.Join(t.TempDir(), "none.json")}, "CredentialsFile"},
	}
	for _, c := range cases {
		_, err := New(c.c)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error naming %s", c.c.Project+"|"+c.c.Location, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("the error echoes the key: %v", err)
		}
	}
	for loc, want := range map[string]string{"global": "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/",
		"europe-west4": "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/"} {
		u, err := New(Config{Project: "p", Location: loc, CredentialsJSON: sa})
		if err != nil || u.publishers != want {
			t.Errorf("%s: %v %v, want %s", loc, u, err, want)
		}
	}
}

// Credentials that name a quota project bill the calls to it.
func TestQuotaProjectHeader(t *testing.T) {
	ts := newTokenServer(t, 3600)
	var got atomic.Value
	v := newFakeVertex(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("X-Goog-User-Project"))
		writeGemini(w, r)
	})
	var sa map[string]any
	json.Unmarshal(serviceAccount(ts.URL+"/token"), &sa)
	sa["quota_project_id"] = "billing-1"
	b, _ := json.Marshal(sa)
	u := newUpstream(t, Config{BaseURL: v.URL, CredentialsJSON: b})
	resp, err := u.Send(context.Background(), chat("gemini-2.5-flash", false))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Load() != "billing-1" {
		t.Errorf("x-goog-user-project %q, want billing-1", got.Load())
	}
}
