package batchapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"github.com/openai/openai-go/v3"
)

// diskUsage is what owner keeps in dir as the files on disk say: the
// file objects in files/ and the sizes of the bytes they name.
func diskUsage(t *testing.T, dir, owner string) (files int, bytes int64) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "files", "file-*.json"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var f batchapi.File
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if f.Owner != owner {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, f.Path))
		if err != nil || fi.Size() != f.Bytes {
			t.Fatalf("file %s: %v, %v bytes on disk; its object says %d", f.ID, err, fi, f.Bytes)
		}
		files++
		bytes += f.Bytes
	}
	return files, bytes
}

// checkExact fails unless alice's limits count exactly what is on disk.
func (e *env) checkExact(t *testing.T) (int, int64) {
	t.Helper()
	files, bytes := diskUsage(t, e.dir, "alice")
	if got, gotBytes := batchapi.OwnerFiles(e.api, "alice"), batchapi.OwnerBytes(e.api, "alice"); got != files || gotBytes != bytes {
		t.Fatalf("alice's limits count %d files and %d bytes; the disk holds %d and %d", got, gotBytes, files, bytes)
	}
	return files, bytes
}

// createRaw creates a batch of file as alice and returns the status and
// body of the answer.
func (e *env) createRaw(t *testing.T, file string) (int, string) {
	t.Helper()
	return e.post(t, "/v1/batches", "application/json",
		strings.NewReader(`{"input_file_id":"`+file+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`))
}

// The issue: six batches of one input left a client with max_files 2
// holding 7 files. A batch holds its two outputs' slots from its
// creation: with max_files 3 and one upload, one batch runs and the next
// is refused with a 400 that names max_files, until the files are
// deleted; the count never passes 3.
func TestBatchHoldsItsOutputSlots(t *testing.T) {
	e := newEnv(t, batchapi.Options{MaxFiles: 3})
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
	in := uploadFile(t, c, lines(2)+"not json\n")
	first := create(t, c, in.ID)
	if n := batchapi.OwnerFiles(e.api, "alice"); n != 3 {
		t.Fatalf("with a batch running, alice's limits count %d files; want 3", n)
	}
	code, body := e.createRaw(t, in.ID)
	if code != 400 || !strings.Contains(body, `"code":"file_limit_exceeded"`) || !strings.Contains(body, "max_files (3)") ||
		!strings.Contains(body, "holds 3") || !strings.Contains(body, `"type":"invalid_request_error"`) {
		t.Fatalf("a second batch: %d %s; want a 400 naming max_files", code, body)
	}
	ct, up := multipartBody("batch", []byte(lines(1)), true)
	if code, body := e.post(t, "/v1/files", ct, up); code != 429 || !strings.Contains(body, "holds 3 files, its max_files of 3") {
		t.Fatalf("an upload beside the batch's hold: %d %s; want a 429 naming max_files", code, body)
	}
	close(release)
	b := wait(t, c, first.ID, "completed")
	if b.OutputFileID != batchapi.OutputID(b.ID, "output") || b.ErrorFileID != batchapi.OutputID(b.ID, "error") {
		t.Fatalf("outputs %q %q", b.OutputFileID, b.ErrorFileID)
	}
	if files, _ := e.checkExact(t); files != 3 {
		t.Fatalf("%d files after the batch; want its input and its two outputs", files)
	}
	if code, _ := e.createRaw(t, in.ID); code != 400 {
		t.Fatalf("a batch with no slot free: %d; want 400", code)
	}
	for _, id := range []string{b.OutputFileID, b.ErrorFileID} {
		if _, err := c.Files.Delete(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	second := create(t, c, in.ID)
	wait(t, c, second.ID, "completed")
	if files, _ := e.checkExact(t); files != 3 {
		t.Fatalf("%d files; want 3", files)
	}
	if page, _ := c.Batches.List(context.Background(), openai.BatchListParams{}); len(page.Data) != 2 {
		t.Fatalf("%d batches listed; the refused ones must leave none", len(page.Data))
	}
}

// A batch that reaches max_client_bytes stops: failed, storage_limit,
// with what it wrote registered; the owner never passes the limit, and
// uploads see the bytes the batch took.
func TestBatchStopsAtMaxClientBytes(t *testing.T) {
	const limit = 20000
	e := newEnv(t, batchapi.Options{MaxOwnerBytes: limit, Concurrency: 4})
	c := e.client("sk-alice")
	var over atomic.Bool
	e.mu.Lock()
	e.hold = func(*http.Request) {
		if batchapi.OwnerBytes(e.api, "alice") > limit {
			over.Store(true)
		}
	}
	e.mu.Unlock()
	in := uploadFile(t, c, lines(40))
	b := wait(t, c, create(t, c, in.ID).ID, "completed", "failed")
	if b.Status != "failed" || len(b.Errors.Data) != 1 || b.Errors.Data[0].Code != "storage_limit" ||
		!strings.Contains(b.Errors.Data[0].Message, "max_client_bytes (20000") {
		t.Fatalf("batch %s %+v; want failed for storage_limit", b.Status, b.Errors)
	}
	if b.OutputFileID == "" || b.RequestCounts.Completed == 0 || b.RequestCounts.Completed >= 40 {
		t.Fatalf("batch %+v; want some lines kept in its output", b)
	}
	if ids := outputIDs(t, c, b.OutputFileID); int64(len(ids)) != b.RequestCounts.Completed {
		t.Fatalf("%d lines in the output; the batch counts %d", len(ids), b.RequestCounts.Completed)
	}
	_, bytes := e.checkExact(t)
	if bytes > limit || over.Load() {
		t.Fatalf("alice holds %d bytes (passed %d while running: %v)", bytes, limit, over.Load())
	}
	big := strings.Repeat(lines(1), int(limit-bytes)/len(lines(1))+1)
	ct, up := multipartBody("batch", []byte(big), true)
	if code, body := e.post(t, "/v1/files", ct, up); code != 429 || !strings.Contains(body, "max_client_bytes of 20000") {
		t.Fatalf("an upload past what is left: %d %s; want 429", code, body)
	}
}

// Many uploads, batch creations and batch ends at once, against
// max_files 4 (an input, a batch's two outputs and one upload, so that
// uploads and batches race for bytes too) and a max_client_bytes that
// has room for one batch's output and a little more: the limits are
// never passed, every refusal is a 4xx in OpenAI's shape that leaves
// nothing behind, and when all is done the count is exactly what is on
// disk.
func TestUploadsAndBatchesRaceForTheLastRoom(t *testing.T) {
	const maxFiles, maxBytes = 4, 1800
	e := newEnv(t, batchapi.Options{MaxFiles: maxFiles, MaxOwnerBytes: maxBytes, Concurrency: 2})
	c := e.client("sk-alice")
	in := uploadFile(t, c, lines(2))
	stop := make(chan struct{})
	var broke atomic.Value
	watched := make(chan struct{})
	go func() { // the limits, as the index counts them, at every moment
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if f, b := batchapi.OwnerFiles(e.api, "alice"), batchapi.OwnerBytes(e.api, "alice"); f > maxFiles || b > maxBytes {
				broke.Store([2]int64{int64(f), b})
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	var created []string
	note := func(what string, code int, body string) {
		mu.Lock()
		defer mu.Unlock()
		answers[what+" "+http.StatusText(code)]++
		if code >= 400 && (code >= 500 || !strings.Contains(body, `"error":{`) || !strings.Contains(body, `"message":`)) {
			t.Errorf("%s: %d %s; want a 4xx in OpenAI's shape", what, code, body)
		}
	}
	for i := range 6 {
		wg.Go(func() { // uploads of 1 to 6 lines, each deleted once kept
			for j := range 4 {
				ct, up := multipartBody("batch", []byte(lines(1+(i+j)%6)), true)
				code, body := e.post(t, "/v1/files", ct, up)
				note("upload", code, body)
				var f struct{ ID string }
				if code == 200 && json.Unmarshal([]byte(body), &f) == nil {
					c.Files.Delete(context.Background(), f.ID)
				}
			}
		})
		wg.Go(func() { // two batches each, tried until admitted, waited for, their outputs deleted
			for admitted := 0; admitted < 2; {
				code, body := e.createRaw(t, in.ID)
				note("create", code, body)
				var b struct{ ID string }
				if code != 200 || json.Unmarshal([]byte(body), &b) != nil {
					continue
				}
				admitted++
				mu.Lock()
				created = append(created, b.ID)
				mu.Unlock()
				done := wait(t, c, b.ID, "completed", "failed")
				mu.Lock()
				if done.Status == "failed" {
					answers["batch failed "+done.Errors.Data[0].Code]++
				} else {
					answers["batch "+string(done.Status)]++
				}
				mu.Unlock()
				for _, id := range []string{done.OutputFileID, done.ErrorFileID} {
					if id != "" {
						c.Files.Delete(context.Background(), id)
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-watched
	if v := broke.Load(); v != nil {
		t.Fatalf("alice's limits counted %v (files, bytes), past %d and %d", v, maxFiles, maxBytes)
	}
	files, bytes := e.checkExact(t)
	if files > maxFiles || bytes > maxBytes {
		t.Fatalf("alice keeps %d files and %d bytes, past %d and %d", files, bytes, maxFiles, maxBytes)
	}
	page, err := c.Batches.List(context.Background(), openai.BatchListParams{Limit: openai.Int(100)})
	if err != nil || len(page.Data) != len(created) {
		t.Fatalf("%d batches listed, %d created (%v): a refused create left one behind", len(page.Data), len(created), err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(e.dir, "files", "*.tmp")); len(tmps) != 0 {
		t.Fatalf("refused uploads left %v", tmps)
	}
	if answers["upload Too Many Requests"]+answers["create Bad Request"] == 0 || len(created) != 12 {
		t.Fatalf("answers %v, %d batches: the race did not reach the limits", answers, len(created))
	}
	t.Logf("answers %v", answers)
}

// Restarted mid-run on the same directory, the API still counts the
// running batches' holds, and when they end the count is exact.
func TestBatchHoldsSurviveARestart(t *testing.T) {
	o := batchapi.Options{MaxFiles: 7, MaxOwnerBytes: 1 << 20, Concurrency: 2}
	e := newEnv(t, o)
	c := e.client("sk-alice")
	var served atomic.Int64
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		if served.Add(1) > 2 {
			<-r.Context().Done() // held until the API closes
		}
	}
	e.mu.Unlock()
	in := uploadFile(t, c, lines(10))
	b1, b2 := create(t, c, in.ID), create(t, c, in.ID)
	waitUntil(t, "a line written", func() bool { return served.Load() > 3 })
	e.api.Close()
	e.mu.Lock()
	e.hold = nil
	e.mu.Unlock()
	release := make(chan struct{})
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	e.mu.Unlock()
	e.open(t, o)
	if n := batchapi.OwnerFiles(e.api, "alice"); n != 5 {
		t.Fatalf("after a restart alice's limits count %d files; want her input and two batches' two outputs", n)
	}
	if code, body := e.createRaw(t, in.ID); code != 200 {
		t.Fatalf("a third batch (7 of 7): %d %s", code, body)
	}
	if code, _ := e.createRaw(t, in.ID); code != 400 {
		t.Fatalf("a fourth batch: %d; want 400", code)
	}
	close(release)
	for _, b := range []*openai.Batch{b1, b2} {
		wait(t, c, b.ID, "completed")
	}
	page, _ := c.Batches.List(context.Background(), openai.BatchListParams{})
	for _, b := range page.Data {
		wait(t, c, b.ID, "completed")
	}
	if files, _ := e.checkExact(t); files != 4 {
		t.Fatalf("%d files; want the input and three outputs", files)
	}
}

// A crash after a batch's outputs were registered but before the batch
// said so: after the restart they are neither held again nor registered
// twice.
func TestOutputsRegisteredBeforeACrashCountOnce(t *testing.T) {
	o := batchapi.Options{MaxFiles: 4}
	e := newEnv(t, o)
	c := e.client("sk-alice")
	b := wait(t, c, create(t, c, uploadFile(t, c, lines(3)+"bad\n").ID).ID, "completed")
	e.api.Close()
	store, err := batchapi.DirStore(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := store.Get(b.ID)
	got.Status, got.OutputFileID, got.ErrorFileID, got.CompletedAt = batchapi.StatusFinalizing, nil, nil, nil
	if err := store.Put(got); err != nil {
		t.Fatal(err)
	}
	e.open(t, o)
	if n := batchapi.OwnerFiles(e.api, "alice"); n != 3 {
		t.Fatalf("alice's limits count %d files while the batch finalizes again; want 3", n)
	}
	again := wait(t, c, b.ID, "completed")
	if again.OutputFileID != b.OutputFileID || again.ErrorFileID != b.ErrorFileID {
		t.Fatalf("outputs registered again as %q %q; want %q %q", again.OutputFileID, again.ErrorFileID, b.OutputFileID, b.ErrorFileID)
	}
	if files, _ := e.checkExact(t); files != 3 {
		t.Fatalf("%d files; want 3", files)
	}
}
