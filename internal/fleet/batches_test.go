package fleet

import (
	"errors"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// A batch saved by the replica that runs it is read and listed through
// another, never changed there, and never listed there for a resume; with
// Redis hung the replica that runs it still answers for it.
func TestSharedBatchStore(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false, func(o *Options) { o.Timeout = 200 * time.Millisecond })
	store := func(i int) batchapi.Store {
		local, err := batchapi.DirStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return fs[i].BatchStore(local)
	}
	a, b := store(0), store(1)
	now := time.Now()
	mk := func(id, owner string, age time.Duration) batchapi.Batch {
		return batchapi.Batch{ID: id, Object: "batch", Owner: owner, Status: "in_progress", CreatedAt: now.Add(-age).Unix(), CreatedNs: now.Add(-age).UnixNano()}
	}
	const older, newer, bobs = "batch_00000000000000000000000a", "batch_00000000000000000000000b", "batch_00000000000000000000000c"
	for _, x := range []batchapi.Batch{mk(older, "alice", time.Hour), mk(newer, "alice", 0), mk(bobs, "bob", 0)} {
		if err := a.Put(x); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok, err := b.Get(newer); err != nil || !ok || got.Owner != "alice" {
		t.Fatalf("through the other replica: %+v %v %v", got, ok, err)
	}
	list, err := b.List("alice")
	if err != nil || len(list) != 2 || list[0].ID != newer || list[1].ID != older {
		t.Fatalf("alice's list through the other replica: %+v %v", list, err)
	}
	if mine, _ := b.List(""); len(mine) != 0 {
		t.Errorf("the other replica would resume %d batches it does not hold", len(mine))
	}
	changed := mk(newer, "alice", 0)
	changed.Status = "cancelling"
	if err := b.Put(changed); !errors.Is(err, batchapi.ErrElsewhere) {
		t.Errorf("a change through the other replica: %v, want ErrElsewhere", err)
	}
	if got, _, _ := a.Get(newer); got.Status != "in_progress" {
		t.Errorf("status %s after a refused change", got.Status)
	}
	if ttl := fs[0].rdb.PTTL(t.Context(), "fusebox:{batch:"+newer+"}").Val(); ttl <= 0 || ttl > BatchTTL {
		t.Errorf("kept for %v, want at most %v", ttl, BatchTTL)
	}
	srv.Pause()
	defer srv.Resume()
	if got, ok, err := a.Get(newer); err != nil || !ok || got.ID != newer {
		t.Errorf("with Redis hung, the running replica: %+v %v %v", got, ok, err)
	}
	if list, err := a.List("alice"); err != nil || len(list) != 2 {
		t.Errorf("with Redis hung, the running replica lists %d, %v", len(list), err)
	}
}

// A batch is its lease holder's: once its replica's lease has ended and
// another replica adopted it, the old owner's writes are refused with
// ErrElsewhere and the adopter's go through; two replicas racing for the
// batch adopt it once.
func TestBatchStoreIsFencedByTheLease(t *testing.T) {
	fs, clk := leasedFleets(t, 3)
	store := func(i int) batchapi.Adopter {
		local, err := batchapi.DirStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return fs[i].BatchStore(local).(batchapi.Adopter)
	}
	a, b, c := store(0), store(1), store(2)
	const id = "batch_00000000000000000000000a"
	x := batchapi.Batch{ID: id, Object: "batch", Owner: "alice", Status: "in_progress", CreatedNs: clk.Now().UnixNano()}
	if err := a.Put(x); err != nil {
		t.Fatal(err)
	}
	if !a.Holds(id) || b.Holds(id) {
		t.Fatal("the creating replica does not hold its batch")
	}
	if b.Adopt(id) {
		t.Fatal("adopted under a live lease")
	}
	clk.Advance(time.Minute) // A died
	if got := b.Orphans(10); len(got) != 1 || got[0] != id {
		t.Fatalf("orphans %v", got)
	}
	wins := make(chan bool, 2)
	for _, s := range []batchapi.Adopter{b, c} {
		go func() { wins <- s.Adopt(id) }()
	}
	adopter := b
	if w1, w2 := <-wins, <-wins; w1 == w2 {
		t.Fatalf("adoptions: %v %v, want exactly one", w1, w2)
	}
	if c.Holds(id) {
		adopter = c
	}
	x.Status = "cancelling"
	if err := a.Put(x); !errors.Is(err, batchapi.ErrElsewhere) {
		t.Errorf("the old owner's write: %v, want ErrElsewhere", err)
	}
	x.Status = "completed"
	if err := adopter.Put(x); err != nil {
		t.Fatal(err)
	}
	adopter.Finish(id)
	clk.Advance(time.Minute)
	if a.Adopt(id) || len(a.Orphans(10)) != 0 {
		t.Error("a finished batch is adopted again")
	}
	other := b
	if adopter == b {
		other = c
	}
	if got, ok, err := other.Get(id); err != nil || !ok || got.Status != "completed" {
		t.Errorf("the fleet's copy: %+v %v %v, want the adopter's", got.Status, ok, err)
	}
}
