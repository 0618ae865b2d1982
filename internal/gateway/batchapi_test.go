package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// The Files and Batch APIs served by the gateway itself (batch: {dir}):
// a batch uploaded and created with openai-go by one client runs as that
// client (its model list applies to each line, its budget pays), its
// output is downloaded, another client gets a 404, and a gateway started
// again on the same directory still serves it.
func TestBatchAPIThroughTheGateway(t *testing.T) {
	up := newUpstream(t, chatOK("p"))
	dir := t.TempDir()
	yaml := `
clients:
  - {name: alice, key: ka, models: [chat], budget: {daily: 100}}
  - {name: bob, key: kb}
providers:
  p: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: chat
    targets: [{provider: p, model: x, price: {input: 1, output: 1}}]
  - name: other
    targets: [{provider: p, model: y}]
batch: {dir: ` + dir + `, concurrency: 4}
`
	s, gw := gateway(t, nil, yaml, up)
	client := func(base, key string) openai.Client {
		return openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
	}
	alice, bob := client(gw.URL, "ka"), client(gw.URL, "kb")
	ctx := t.Context()
	var in strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&in, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hi"}]}}`+"\n", i)
	}
	in.WriteString(`{"custom_id":"not-mine","method":"POST","url":"/v1/chat/completions","body":{"model":"other","messages":[{"role":"user","content":"hi"}]}}` + "\n")
	f, err := alice.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(in.String()), "in.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	b, err := alice.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *openai.Error
	if _, err := bob.Batches.Get(ctx, b.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Errorf("bob reading alice's batch: %v, want a 404", err)
	}
	if _, err := bob.Files.Content(ctx, f.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Errorf("bob reading alice's file: %v, want a 404", err)
	}
	eventually(t, "the batch to end", func() bool { // background work, polled as a client does
		if b, err = alice.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		return b.Status == openai.BatchStatusCompleted || b.Status == openai.BatchStatusFailed
	})
	if b.Status != openai.BatchStatusCompleted {
		t.Fatalf("batch %s: %+v", b.Status, b.Errors)
	}
	if c := b.RequestCounts; c.Total != 21 || c.Completed != 20 || c.Failed != 1 {
		t.Errorf("request counts %+v, want 20 completed and the line for a model alice may not use failed", c)
	}
	if n := countLines(t, alice, b.OutputFileID); n != 20 {
		t.Errorf("output has %d lines, want 20", n)
	}
	if day, _ := s.state().clientNamed("alice").budget.left(); day >= 100 {
		t.Errorf("alice's budget left %v: the lines were not hers", day)
	}
	// A gateway started again on the directory finds the batch.
	_, gw2 := gateway(t, nil, yaml, up)
	alice2 := client(gw2.URL, "ka")
	again, err := alice2.Batches.Get(ctx, b.ID)
	if err != nil || again.Status != openai.BatchStatusCompleted {
		t.Fatalf("after a restart: %+v, %v", again, err)
	}
}

func countLines(t *testing.T, c openai.Client, id string) int {
	t.Helper()
	resp, err := c.Files.Content(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		n++
	}
	return n
}

// With fleet state, any replica answers for any batch: created on A, it
// is read and listed through B (another client still gets a 404 there);
// B cannot cancel it, since A holds its files and runs it, and says so.
func TestReplicasShareBatchStatus(t *testing.T) {
	state := "state: " + redistest.Start(t).URL() + "\nfleet: {timeout: 2s}\n"
	up := newUpstream(t, chatOK("p"))
	hold := make(chan struct{})
	defer close(hold)
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		<-hold // A's lines wait: the batch is in progress while B is asked
		chatOK("p")(w, r, n)
	})
	yaml := state + `
clients:
  - {name: alice, key: ka}
  - {name: bob, key: kb}
providers:
  p: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: chat
    targets: [{provider: p, model: x}]
batch: {dir: `
	_, a := gateway(t, nil, yaml+t.TempDir()+"}\n", slow)
	_, b := gateway(t, nil, yaml+t.TempDir()+"}\n", up)
	client := func(base, key string) openai.Client {
		return openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
	}
	aliceA, aliceB, bobB := client(a.URL, "ka"), client(b.URL, "ka"), client(b.URL, "kb")
	ctx := t.Context()
	f, err := aliceA.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(
		`{"custom_id":"r1","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hi"}]}}`+"\n"),
		"in.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	created, err := aliceA.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	got, err := aliceB.Batches.Get(ctx, created.ID)
	if err != nil || got.ID != created.ID || got.InputFileID != f.ID {
		t.Fatalf("alice's batch through B: %+v, %v", got, err)
	}
	page, err := aliceB.Batches.List(ctx, openai.BatchListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != created.ID {
		t.Fatalf("alice's list through B: %+v, %v", page, err)
	}
	var apiErr *openai.Error
	if _, err := bobB.Batches.Get(ctx, created.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Errorf("bob through B: %v, want a 404", err)
	}
	if _, err := aliceB.Batches.Cancel(ctx, created.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict {
		t.Errorf("cancel through B: %v, want a 409 naming the replica that runs it", err)
	}
	if c, err := aliceA.Batches.Cancel(ctx, created.ID); err != nil || c.Status != openai.BatchStatusCancelling && c.Status != openai.BatchStatusCancelled {
		t.Errorf("cancel through A: %+v, %v", c, err)
	}
}
