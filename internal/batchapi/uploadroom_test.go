package batchapi_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/batchapi"
)

// slowUpload is an upload whose body stops after its first half until
// finish is closed (or breaks off with an error when cut is).
type slowUpload struct {
	first, rest []byte
	finish, cut <-chan struct{}
	read        int
}

func (u *slowUpload) Read(p []byte) (int, error) {
	if u.read < len(u.first) {
		n := copy(p, u.first[u.read:])
		u.read += n
		return n, nil
	}
	select {
	case <-u.finish:
	case <-u.cut:
		return 0, errors.New("client gone")
	}
	if len(u.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, u.rest)
	u.rest = u.rest[n:]
	return n, nil
}

// newSlowUpload splits an upload of one line in two.
func newSlowUpload(finish, cut <-chan struct{}) (string, *slowUpload) {
	ct, body := multipartBody("batch", []byte(lines(1)), true)
	b := body.Bytes()
	half := len(b) / 2
	return ct, &slowUpload{first: bytes.Clone(b[:half]), rest: bytes.Clone(b[half:]), finish: finish, cut: cut}
}

// 16 uploads at once against max_files 3, all with their bytes still
// arriving when the others are checked: exactly 3 are kept, the rest
// refused with a 429 (issue 30: the check passed for all before any
// registered).
func TestConcurrentUploadsKeepMaxFiles(t *testing.T) {
	e := newEnv(t, batchapi.Options{MaxFiles: 3, MaxOwnerBytes: 1 << 20})
	finish := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 16 {
		wg.Go(func() {
			ct, body := newSlowUpload(finish, nil)
			code, _ := e.post(t, "/v1/files", ct, body)
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	e.waitFiles(t, 3) // three hold their room, their bytes still on the way
	close(finish)
	wg.Wait()
	if codes[200] != 3 || codes[429] != 13 || batchapi.FileCount(e.api) != 3 {
		t.Fatalf("answers %v, %d files kept; want 3 of 200, 13 of 429 and 3 files", codes, batchapi.FileCount(e.api))
	}
}

// A client that breaks off mid-upload gives its room back: with
// max_files 1, the next upload is kept.
func TestUploadCutOffReleasesItsRoom(t *testing.T) {
	e := newEnv(t, batchapi.Options{MaxFiles: 1, MaxOwnerBytes: 1 << 20})
	cut := make(chan struct{})
	ct, body := newSlowUpload(nil, cut)
	req, _ := http.NewRequest("POST", e.hs.URL+"/v1/files", body)
	req.Header.Set("Authorization", "Bearer sk-alice")
	req.Header.Set("Content-Type", ct)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	e.waitFiles(t, 1) // the upload holds its room, its bytes half sent
	close(cut)
	<-sent
	e.waitFiles(t, 0)
	ct, full := multipartBody("batch", []byte(lines(1)), true)
	if code, body := e.post(t, "/v1/files", ct, full); code != 200 {
		t.Fatalf("after an upload cut off: %d %s; want the file kept", code, body)
	}
}

// waitFiles waits until alice's limits count n files (uploads still
// arriving included).
func (e *env) waitFiles(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for batchapi.OwnerFiles(e.api, "alice") != n {
		if time.Now().After(deadline) {
			t.Fatalf("alice's limits count %d files, want %d", batchapi.OwnerFiles(e.api, "alice"), n)
		}
		time.Sleep(time.Millisecond)
	}
}
