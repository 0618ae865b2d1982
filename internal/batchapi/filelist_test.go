package batchapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"github.com/openai/openai-go/v3"
)

// GET /v1/files lists the key's own files, newest first, in pages, and by
// purpose; another key's files are never listed, nor usable as a cursor.
func TestListFiles(t *testing.T) {
	e := newEnv(t, batchapi.Options{})
	alice, bob := e.client("sk-alice"), e.client("sk-bob")
	var ids []string
	for range 3 {
		ids = append(ids, uploadFile(t, alice, lines(1)).ID)
	}
	theirs := uploadFile(t, bob, lines(1)).ID
	ctx := context.Background()

	var all []string
	iter := alice.Files.ListAutoPaging(ctx, openai.FileListParams{Limit: openai.Int(2)})
	for iter.Next() {
		all = append(all, iter.Current().ID)
	}
	if iter.Err() != nil || strings.Join(all, ",") != strings.Join([]string{ids[2], ids[1], ids[0]}, ",") {
		t.Fatalf("alice's files, two a page: %v %v; want %v newest first", all, iter.Err(), ids)
	}
	page, err := alice.Files.List(ctx, openai.FileListParams{Order: openai.FileListParamsOrderAsc, Limit: openai.Int(2)})
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != ids[0] || !page.HasMore {
		t.Fatalf("oldest first: %+v %v", page, err)
	}
	if page, err := alice.Files.List(ctx, openai.FileListParams{Purpose: openai.String("batch_output")}); err != nil || len(page.Data) != 0 {
		t.Errorf("alice has no output files yet: %+v %v", page, err)
	}
	b := create(t, alice, ids[0])
	wait(t, alice, b.ID, "completed")
	if page, err := alice.Files.List(ctx, openai.FileListParams{Purpose: openai.String("batch_output")}); err != nil || len(page.Data) != 1 {
		t.Errorf("after a batch, alice's output files: %+v %v; want one", page, err)
	}
	page, err = bob.Files.List(ctx, openai.FileListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != theirs {
		t.Errorf("bob lists %+v %v; want only his own file", page, err)
	}

	for _, q := range []string{"limit=0", "limit=10001", "limit=x", "order=sideways", "after=" + theirs, "after=file-nope"} {
		req, _ := http.NewRequest("GET", e.hs.URL+"/v1/files?"+q, nil)
		req.Header.Set("Authorization", "Bearer sk-alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /v1/files?%s: %d, want 400", q, resp.StatusCode)
		}
	}
}
