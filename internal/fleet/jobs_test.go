package fleet

import (
	"testing"

	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// A job record put on one replica is the fleet's after its sync round:
// another replica reads it by id and by its client's Idempotency-Key, and
// another client's key does not find it.
func TestJobRecordsAreTheFleets(t *testing.T) {
	fs := linked(t, redistest.Start(t), 2, false)
	a, b := fs[0], fs[1]
	a.PutJob("video_1", "studio", "k1", []byte(`{"id":"video_1"}`))
	if _, ok := b.GetJob("video_1"); ok {
		t.Fatal("a record was shared before its sync round")
	}
	a.sync()
	if rec, ok := b.GetJob("video_1"); !ok || string(rec) != `{"id":"video_1"}` {
		t.Errorf("B reads %q %v", rec, ok)
	}
	if id, ok := b.JobByKey("studio", "k1"); !ok || id != "video_1" {
		t.Errorf("B finds the key's job %q %v", id, ok)
	}
	if _, ok := b.JobByKey("other", "k1"); ok {
		t.Error("another client's key found the job")
	}
	a.PutJob("video_1", "studio", "k1", []byte(`{"id":"video_1","state":"completed"}`))
	a.sync()
	if rec, _ := b.GetJob("video_1"); string(rec) != `{"id":"video_1","state":"completed"}` {
		t.Errorf("B reads the old record %q", rec)
	}
}
