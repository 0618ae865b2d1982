package batchapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/sim"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

var owners = map[string]string{"sk-alice": "alice", "sk-bob": "bob"}

func identify(w http.ResponseWriter, r *http.Request) (string, bool) {
	o, ok := owners[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
	}
	return o, ok
}

// env is a gateway over a simulated provider with the Files and Batch
// APIs in front of it, on one mux, as the gateway would serve them.
type env struct {
	gw  *gateway.Server
	api *batchapi.API
	hs  *httptest.Server
	dir string
	// hold, when set, is called before each line is served (a test
	// blocks lines with it).
	mu   sync.Mutex
	hold func(r *http.Request)
	mux  *dynamicMux
}

// dynamicMux lets a test swap the API behind the server (a restart).
type dynamicMux struct {
	mu sync.Mutex
	h  http.Handler
}

func (d *dynamicMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	h := d.h
	d.mu.Unlock()
	h.ServeHTTP(w, r)
}

func newEnv(t *testing.T, o batchapi.Options) *env {
	t.Helper()
	s, err := sim.New(sim.Config{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(s.Handler())
	t.Cleanup(s.Close)
	t.Cleanup(up.Close)
	yaml := fmt.Sprintf(`clients: [{name: alice, key: sk-alice}, {name: bob, key: sk-bob}]
providers:
  p: {type: openai, base_url: %q, keys: [k]}
models:
  - name: chat
    targets: [{provider: p, model: sim-large, price: {input: 1, output: 2}}]
`, up.URL+"/v1")
	cfg, err := config.Parse("fusebox.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{gw: gw, dir: t.TempDir(), mux: &dynamicMux{}}
	e.open(t, o)
	e.hs = httptest.NewServer(e.mux)
	t.Cleanup(func() { e.hs.Close(); e.api.Close(); gw.Close() })
	return e
}

// open (re)starts the API on the env's directory.
func (e *env) open(t *testing.T, o batchapi.Options) {
	t.Helper()
	o.Dir, o.Identify = e.dir, identify
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Serve = func(owner string) (http.Handler, func(*http.Request)) {
		key := ""
		for k, v := range owners {
			if v == owner {
				key = k
			}
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.mu.Lock()
			hold := e.hold
			e.mu.Unlock()
			if hold != nil {
				hold(r)
			}
			e.gw.Handler().ServeHTTP(w, r)
		})
		return h, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
	}
	api, err := batchapi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	e.api = api
	mux := http.NewServeMux()
	api.Register(mux)
	mux.Handle("/", e.gw.Handler())
	e.mux.mu.Lock()
	e.mux.h = mux
	e.mux.mu.Unlock()
}

func (e *env) client(key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(e.hs.URL+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hi %d"}]}}`+"\n", i, i)
	}
	return b.String()
}

// wait polls the batch until it reaches a status in want.
func wait(t *testing.T, c openai.Client, id string, want ...string) *openai.Batch {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := c.Batches.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if string(b.Status) == w {
				return b
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch %s still %s", id, b.Status)
		}
		time.Sleep(5 * time.Millisecond) // polling background work, as a client does
	}
}

func uploadFile(t *testing.T, c openai.Client, content string) *openai.FileObject {
	t.Helper()
	f, err := c.Files.New(context.Background(), openai.FileNewParams{
		File: openai.File(strings.NewReader(content), "in.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func create(t *testing.T, c openai.Client, file string) *openai.Batch {
	t.Helper()
	b, err := c.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: file,
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
		Metadata: map[string]string{"job": "nightly"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outputIDs downloads a file and returns the custom_ids of its lines.
func outputIDs(t *testing.T, c openai.Client, id string) map[string]int {
	t.Helper()
	resp, err := c.Files.Content(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ids := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var l struct {
			CustomID string `json:"custom_id"`
			Response struct {
				StatusCode int `json:"status_code"`
			} `json:"response"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		ids[l.CustomID]++
	}
	return ids
}

// The whole course with the official client: upload, create, poll,
// download; a bad line goes to the error file.
func TestBatchEndToEndWithOpenAIClient(t *testing.T) {
	e := newEnv(t, batchapi.Options{})
	c := e.client("sk-alice")
	f := uploadFile(t, c, lines(30)+"not json\n")
	if f.Purpose != "batch" || f.Bytes == 0 || f.Filename != "in.jsonl" {
		t.Fatalf("file %+v", f)
	}
	b := create(t, c, f.ID)
	if b.Status != "validating" || b.Metadata["job"] != "nightly" || b.ExpiresAt == 0 {
		t.Fatalf("new batch %+v", b)
	}
	b = wait(t, c, b.ID, "completed", "failed")
	if b.Status != "completed" || b.RequestCounts.Total != 31 || b.RequestCounts.Completed != 30 || b.RequestCounts.Failed != 1 ||
		b.OutputFileID == "" || b.ErrorFileID == "" || b.CompletedAt == 0 || b.InProgressAt == 0 || b.FinalizingAt == 0 {
		t.Fatalf("batch %+v", b)
	}
	ids := outputIDs(t, c, b.OutputFileID)
	for i := 1; i <= 30; i++ {
		if ids[fmt.Sprintf("r%d", i)] != 1 {
			t.Fatalf("output %v", ids)
		}
	}
	if errs := outputIDs(t, c, b.ErrorFileID); len(errs) != 1 {
		t.Fatalf("error file %v", errs)
	}
	page, err := c.Batches.List(context.Background(), openai.BatchListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != b.ID {
		t.Fatalf("list %+v %v", page, err)
	}
}

// Closed mid-batch (the gateway stopping) and opened again on the same
// directory, the API resumes the batch from its journal: every line
// answered once.
func TestRestartMidBatchResumes(t *testing.T) {
	e := newEnv(t, batchapi.Options{Concurrency: 4})
	c := e.client("sk-alice")
	var served sync.WaitGroup
	served.Add(10)
	var n int
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		e.mu.Lock()
		n++
		k := n
		e.mu.Unlock()
		if k <= 10 {
			served.Done()
			return
		}
		<-r.Context().Done() // held until the API closes
	}
	e.mu.Unlock()
	b := create(t, c, uploadFile(t, c, lines(60)).ID)
	served.Wait()
	e.api.Close() // the gateway stops with lines in flight
	e.mu.Lock()
	e.hold = nil
	e.mu.Unlock()
	e.open(t, batchapi.Options{Concurrency: 4})
	b = wait(t, c, b.ID, "completed", "failed")
	if b.Status != "completed" || b.RequestCounts.Completed != 60 {
		t.Fatalf("after restart: %+v", b)
	}
	ids := outputIDs(t, c, b.OutputFileID)
	if len(ids) != 60 {
		t.Fatalf("%d lines in the output; want 60", len(ids))
	}
	for id, k := range ids {
		if k != 1 {
			t.Errorf("%s answered %d times", id, k)
		}
	}
}

// Another key sees neither the file nor the batch: 404 everywhere.
func TestAnotherKeyGetsNotFound(t *testing.T) {
	e := newEnv(t, batchapi.Options{})
	alice, bob := e.client("sk-alice"), e.client("sk-bob")
	f := uploadFile(t, alice, lines(2))
	b := create(t, alice, f.ID)
	wait(t, alice, b.ID, "completed")
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["file get"] = bob.Files.Get(ctx, f.ID)
	_, checks["file content"] = bob.Files.Content(ctx, f.ID)
	_, checks["file delete"] = bob.Files.Delete(ctx, f.ID)
	_, checks["batch get"] = bob.Batches.Get(ctx, b.ID)
	_, checks["batch cancel"] = bob.Batches.Cancel(ctx, b.ID)
	_, checks["batch on her file"] = bob.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID,
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	for what, err := range checks {
		var apiErr *openai.Error
		if what == "batch on her file" {
			if !asAPIError(err, &apiErr) || apiErr.StatusCode != 400 {
				t.Errorf("%s: %v; want 400", what, err)
			}
			continue
		}
		if !asAPIError(err, &apiErr) || apiErr.StatusCode != 404 {
			t.Errorf("%s: %v; want 404", what, err)
		}
	}
	if page, _ := bob.Batches.List(ctx, openai.BatchListParams{}); len(page.Data) != 0 {
		t.Errorf("bob lists %d batches", len(page.Data))
	}
	nobody := e.client("sk-nobody")
	if _, err := nobody.Files.Get(ctx, f.ID); !asAPIError(err, new(*openai.Error)) {
		t.Errorf("unknown key: %v", err)
	}
}

func asAPIError(err error, target **openai.Error) bool {
	e, ok := err.(*openai.Error)
	if ok {
		*target = e
	}
	return ok
}

// Cancelling stops the batch; what was done stays in its output.
func TestCancel(t *testing.T) {
	e := newEnv(t, batchapi.Options{Concurrency: 2})
	c := e.client("sk-alice")
	release := make(chan struct{})
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	e.mu.Unlock()
	b := create(t, c, uploadFile(t, c, lines(20)).ID)
	wait(t, c, b.ID, "in_progress")
	got, err := c.Batches.Cancel(context.Background(), b.ID)
	if err != nil || got.Status != "cancelling" || got.CancellingAt == 0 {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	close(release)
	b = wait(t, c, b.ID, "cancelled")
	if b.RequestCounts.Completed >= 20 || b.CancelledAt == 0 {
		t.Fatalf("cancelled batch %+v", b)
	}
	if b.RequestCounts.Completed > 0 && b.OutputFileID == "" {
		t.Fatal("done lines but no output file")
	}
}

// Pagination as OpenAI's: newest first, after and limit, has_more.
func TestListPagination(t *testing.T) {
	e := newEnv(t, batchapi.Options{})
	c := e.client("sk-alice")
	f := uploadFile(t, c, lines(1))
	var ids []string
	for range 5 {
		ids = append(ids, create(t, c, f.ID).ID)
		wait(t, c, ids[len(ids)-1], "completed")
	}
	ctx := context.Background()
	page, err := c.Batches.List(ctx, openai.BatchListParams{Limit: openai.Int(2)})
	if err != nil || len(page.Data) != 2 || !page.HasMore || page.Data[0].ID != ids[4] || page.Data[1].ID != ids[3] {
		t.Fatalf("first page %+v %v", page, err)
	}
	var all []string
	iter := c.Batches.ListAutoPaging(ctx, openai.BatchListParams{Limit: openai.Int(2)})
	for iter.Next() {
		all = append(all, iter.Current().ID)
	}
	if iter.Err() != nil || len(all) != 5 || all[4] != ids[0] {
		t.Fatalf("all %v %v", all, iter.Err())
	}
}

// post sends a raw request as alice.
func (e *env) post(t *testing.T, path, contentType string, body io.Reader) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.hs.URL+path, body)
	req.Header.Set("Authorization", "Bearer sk-alice")
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// multipartBody builds an upload with the given parts.
func multipartBody(purpose string, file []byte, withFile bool) (string, *bytes.Buffer) {
	var b bytes.Buffer
	const boundary = "XyZ"
	if purpose != "" {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n%s\r\n", boundary, purpose)
	}
	if withFile {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n\r\n%s\r\n", boundary, file)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary, &b
}

// Hostile uploads and create bodies get clear errors in OpenAI's shape
// and leave nothing behind.
func TestHostileInputs(t *testing.T) {
	e := newEnv(t, batchapi.Options{MaxFileBytes: 4096, MaxInProgress: 1})
	good := []byte(lines(1))
	ct, noFile := multipartBody("batch", nil, false)
	ct2, wrong := multipartBody("fine-tune", good, true)
	ct3, huge := multipartBody("batch", bytes.Repeat([]byte("x"), 10000), true)
	for _, tc := range []struct {
		name, ct string
		body     io.Reader
		want     int
		code     string
	}{
		{"no file", ct, noFile, 400, "missing_file"},
		{"wrong purpose", ct2, wrong, 400, "invalid_purpose"},
		{"over the limit", ct3, huge, 413, "file_too_large"},
		{"not multipart", "application/json", strings.NewReader("{}"), 400, "invalid_content_type"},
		{"endless", "multipart/form-data; boundary=XyZ", endless("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n"), 413, "file_too_large"},
	} {
		status, body := e.post(t, "/v1/files", tc.ct, tc.body)
		if status != tc.want || !strings.Contains(body, `"code":"`+tc.code+`"`) || !strings.Contains(body, `"error":{`) {
			t.Errorf("%s: %d %s; want %d %s", tc.name, status, body, tc.want, tc.code)
		}
	}
	alice := e.client("sk-alice")
	f := uploadFile(t, alice, string(good))
	for _, tc := range []struct{ name, body, param string }{
		{"duplicate key", `{"input_file_id":"` + f.ID + `","input_file_id":"file-x","endpoint":"/v1/chat/completions","completion_window":"24h"}`, ""},
		{"case variant", `{"input_file_id":"` + f.ID + `","Endpoint":"/v1/embeddings","endpoint":"/v1/chat/completions","completion_window":"24h"}`, ""},
		{"escaped duplicate", `{"input_file_id":"` + f.ID + `","endpoint":"/v1/chat/completions","endp\u006fint":"/v1/embeddings","completion_window":"24h"}`, ""},
		{"not json", `{"input_file_id":`, ""},
		{"unknown file", `{"input_file_id":"file-000000000000000000000000","endpoint":"/v1/chat/completions","completion_window":"24h"}`, "input_file_id"},
		{"endpoint", `{"input_file_id":"` + f.ID + `","endpoint":"/v1/images/generations","completion_window":"24h"}`, "endpoint"},
		{"window", `{"input_file_id":"` + f.ID + `","endpoint":"/v1/chat/completions","completion_window":"1h"}`, "completion_window"},
		{"metadata", `{"input_file_id":"` + f.ID + `","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"a":1}}`, "metadata"},
	} {
		status, body := e.post(t, "/v1/batches", "application/json", strings.NewReader(tc.body))
		if status != 400 || !strings.Contains(body, `"type":"invalid_request_error"`) || tc.param != "" && !strings.Contains(body, `"param":"`+tc.param+`"`) {
			t.Errorf("%s: %d %s", tc.name, status, body)
		}
	}
	if status, body := e.post(t, "/v1/batches", "application/json", endless(`{"input_file_id":"`)); status != 413 {
		t.Errorf("endless create body: %d %s", status, body)
	}
	// Nothing was left behind by the refused uploads: one file is listed.
	n := batchapi.FileCount(e.api)
	if n != 1 {
		t.Errorf("%d files kept; want 1", n)
	}
}

// endless is a body that never ends: prefix, then x forever.
func endless(prefix string) io.Reader {
	return io.MultiReader(strings.NewReader(prefix), xs{})
}

type xs struct{}

func (xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
