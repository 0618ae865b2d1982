package batchapi_test

import (
	"context"
	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
)

// Per owner: files, bytes and batches in progress are bounded, and many
// creates at once never get past the bound; another owner is not affected.
// Each running batch holds two files (its outputs) of the 7.
func TestPerOwnerLimits(t *testing.T) {
	e := newEnv(t, batchapi.Options{MaxFiles: 7, MaxOwnerBytes: 1 << 20, MaxInProgress: 2})
	alice, bob := e.client("sk-alice"), e.client("sk-bob")
	ctx := context.Background()
	release := make(chan struct{})
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	e.mu.Unlock()
	f := uploadFile(t, alice, lines(3))
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted, refused := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := alice.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID,
				Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
			mu.Lock()
			defer mu.Unlock()
			var apiErr *openai.Error
			switch {
			case err == nil:
				admitted++
			case asAPIError(err, &apiErr) && apiErr.StatusCode == 429:
				refused++
			default:
				t.Errorf("create: %v", err)
			}
		}()
	}
	wg.Wait()
	if admitted != 2 || refused != 6 {
		t.Fatalf("admitted %d, refused %d; want 2 and 6", admitted, refused)
	}
	// Bob's batches are his own count.
	create(t, bob, uploadFile(t, bob, lines(1)).ID)
	// Files: alice has one and two batches holding two each; two more fit, then none.
	uploadFile(t, alice, lines(1))
	uploadFile(t, alice, lines(1))
	_, err := alice.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(lines(1)), "x.jsonl", "application/jsonl"),
		Purpose: openai.FilePurposeBatch})
	var apiErr *openai.Error
	if !asAPIError(err, &apiErr) || apiErr.StatusCode != 429 {
		t.Fatalf("fourth file: %v", err)
	}
	// A file in use cannot be deleted.
	if _, err := alice.Files.Delete(ctx, f.ID); !asAPIError(err, &apiErr) || apiErr.StatusCode != 409 {
		t.Fatalf("deleting a running batch's input: %v", err)
	}
	close(release)
}
