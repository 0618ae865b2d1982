package fleet

import (
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/responses"
)

// A response stored on one replica is found, and deleted, on another;
// with Redis hung each replica finds what it stored itself.
func TestSharedResponseStore(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false, func(o *Options) { o.Timeout = 200 * time.Millisecond })
	a := fs[0].ResponseStore(responses.NewMemoryStore(0, 0), time.Hour)
	b := fs[1].ResponseStore(responses.NewMemoryStore(0, 0), time.Hour)
	st := responses.Stored{ID: "resp_0a1b", Owner: "web", Response: []byte(`{"id":"resp_0a1b","object":"response"}`),
		Input: []responses.Item{{Type: "message", Role: "user", Content: []responses.Part{{Type: "input_text", Text: "hi"}}}}, Created: time.Unix(1_800_000_000, 0)}
	if err := a.Put(st); err != nil {
		t.Fatal(err)
	}
	got, ok := b.Get("resp_0a1b")
	if !ok || got.Owner != "web" || string(got.Response) != string(st.Response) || len(got.Input) != 1 || got.Input[0].Content[0].Text != "hi" {
		t.Fatalf("on the other replica: %v %+v", ok, got)
	}
	for _, id := range []string{"resp_0A1B", "../resp_0a1b", "resp_", "resp_0a1b}"} {
		if _, ok := b.Get(id); ok {
			t.Errorf("%q found", id)
		}
	}
	if ttl := fs[0].rdb.PTTL(t.Context(), "fusebox:{resp:resp_0a1b}").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("kept for %v, want at most the hour asked", ttl)
	}
	if !b.Delete("resp_0a1b") {
		t.Fatal("delete on the other replica found nothing")
	}
	if _, ok := b.Get("resp_0a1b"); ok {
		t.Fatal("found after delete")
	}
	srv.Pause()
	defer srv.Resume()
	st.ID = "resp_0c"
	if err := a.Put(st); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Get("resp_0c"); !ok {
		t.Error("with Redis hung, the replica that stored a response does not find it")
	}
}
