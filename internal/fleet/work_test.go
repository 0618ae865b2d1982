package fleet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// leasedFleets are n replicas on one Redis and one fake clock, with a 3s
// lease.
func leasedFleets(t *testing.T, n int) ([]*Fleet, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(start)
	fs := linked(t, redistest.Start(t), n, false, func(o *Options) { o.Clock, o.Lease = clk, 3*time.Second })
	return fs, clk
}

// The life of a job's lease: its owner holds it under epoch 1 and writes
// its record; while the lease is live no one adopts it; once it has ended
// one replica adopts it under epoch 2, and from then on the old owner's
// writes and settlement are refused and it holds the job no more. The
// cost is settled once for the fleet, and a finished job is adopted by
// no one.
func TestWorkLeaseAdoptionAndFencing(t *testing.T) {
	fs, clk := leasedFleets(t, 3)
	a, b, c := fs[0].Work("job"), fs[1].Work("job"), fs[2].Work("job")
	if e := a.Claim("video_1"); e != 1 {
		t.Fatalf("claim: epoch %d, want 1", e)
	}
	if err := a.Put("video_1", []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := b.Adopt("video_1", 0); got.Adopted || got.Holder != 1 {
		t.Fatalf("adopted a live lease: %+v", got)
	}
	if ids := b.Orphans(10); len(ids) != 0 {
		t.Errorf("orphans of a live lease: %v", ids)
	}
	clk.Advance(2 * time.Second)
	fs[0].sync() // renews: a third of the lease has passed
	clk.Advance(2 * time.Second)
	if got := b.Adopt("video_1", 0); got.Adopted {
		t.Fatalf("adopted a lease its owner renewed: %+v", got)
	}
	clk.Advance(4 * time.Second) // A stopped renewing (killed)
	if ids := b.Orphans(10); len(ids) != 1 || ids[0] != "video_1" {
		t.Fatalf("orphans: %v", ids)
	}
	got := b.Adopt("video_1", 0)
	if !got.Adopted || got.Epoch != 2 {
		t.Fatalf("adoption: %+v, want epoch 2", got)
	}
	if err := a.Put("video_1", []byte("stale"), time.Hour); !errors.Is(err, ErrLost) {
		t.Errorf("the old owner's write: %v, want ErrLost", err)
	}
	if _, held := a.Holds("video_1"); held {
		t.Error("the old owner still holds the job")
	}
	if ok, err := a.Settle("video_1"); ok || err != nil {
		t.Errorf("the old owner settles: %v %v", ok, err)
	}
	if err := b.Put("video_1", []byte("v2"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, _ := fs[2].rdb.Get(context.Background(), b.DataKey("video_1")).Result(); v != "v2" {
		t.Errorf("record %q, want the adopter's", v)
	}
	for range 2 { // asked again (a reply lost), the same epoch may
		if ok, err := b.Settle("video_1"); !ok || err != nil {
			t.Fatalf("the adopter settles: %v %v", ok, err)
		}
	}
	clk.Advance(4 * time.Second) // B dies too: C adopts, and may not settle again
	if got := c.Adopt("video_1", 0); !got.Adopted || got.Epoch != 3 {
		t.Fatalf("second adoption: %+v", got)
	}
	if ok, _ := c.Settle("video_1"); ok {
		t.Error("a job was settled twice")
	}
	c.Finish("video_1")
	clk.Advance(time.Minute)
	if got := a.Adopt("video_1", 1); got.Adopted {
		t.Errorf("a finished job was adopted: %+v", got)
	}
	if ids := a.Orphans(10); len(ids) != 0 {
		t.Errorf("a finished job is an orphan: %v", ids)
	}
}

// Work whose shared state is gone is not adopted, and leaves the index.
func TestWorkWithoutStateIsNotAdopted(t *testing.T) {
	fs, clk := leasedFleets(t, 2)
	fs[0].Work("batch").Claim("batch_1") // no Put: nothing to adopt
	clk.Advance(time.Minute)
	b := fs[1].Work("batch")
	if got := b.Adopt("batch_1", 0); got.Adopted || !got.Gone {
		t.Errorf("adoption: %+v, want gone", got)
	}
	if ids := b.Orphans(10); len(ids) != 0 {
		t.Errorf("orphans: %v", ids)
	}
}

// Records sent with the sync round are fenced too: once another replica
// adopted the job, the old owner's pending record is not written.
func TestJobRecordsAreFencedByTheLease(t *testing.T) {
	fs, clk := leasedFleets(t, 2)
	a, b := fs[0], fs[1]
	a.Work("job").Claim("video_1")
	a.PutJob("video_1", "studio", "", []byte("v1"))
	a.sync()
	clk.Advance(time.Minute)
	if got := b.Work("job").Adopt("video_1", 1); !got.Adopted {
		t.Fatalf("adoption: %+v", got)
	}
	a.PutJob("video_1", "studio", "", []byte("stale"))
	a.sync()
	if v, _ := b.GetJob("video_1"); string(v) != "v1" {
		t.Errorf("record %q after the old owner's write, want v1", v)
	}
	if _, held := a.Work("job").Holds("video_1"); held {
		t.Error("the old owner still holds the job")
	}
	b.PutJob("video_1", "studio", "", []byte("v2"))
	b.sync()
	if v, _ := a.GetJob("video_1"); string(v) != "v2" {
		t.Errorf("record %q, want the adopter's", v)
	}
}

// Many goroutines on two replicas race to adopt the same orphaned jobs:
// each job has exactly one adopter, and its epoch is one past the dead
// owner's.
func TestWorkAdoptionRaceHasOneWinner(t *testing.T) {
	fs, clk := leasedFleets(t, 3)
	const jobs = 20
	dead := fs[2].Work("job")
	ids := make([]string, jobs)
	for i := range ids {
		ids[i] = "video_" + string(rune('a'+i))
		dead.Claim(ids[i])
		if err := dead.Put(ids[i], []byte("r"), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Minute)
	var wins [jobs]atomic.Int64
	var wg sync.WaitGroup
	for r := range 2 {
		w := fs[r].Work("job")
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, id := range ids {
					if got := w.Adopt(id, 0); got.Adopted {
						wins[i].Add(1)
						if got.Epoch != 2 {
							t.Errorf("%s adopted under epoch %d", id, got.Epoch)
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	for i := range wins {
		if n := wins[i].Load(); n != 1 {
			t.Errorf("%s: %d adopters, want 1", ids[i], n)
		}
	}
}
