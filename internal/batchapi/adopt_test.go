package batchapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/batchapi"
)

// leased is an Adopter over a directory store (empty until set): batches
// are held once put, until a test takes one away (another replica adopted
// it).
type leased struct {
	mu    sync.Mutex
	dir   batchapi.Store
	held  map[string]bool
	taken map[string]bool
}

func (l *leased) Put(b batchapi.Batch) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.taken[b.ID] {
		return batchapi.ErrElsewhere
	}
	l.held[b.ID] = true
	return l.dir.Put(b)
}

func (l *leased) Get(id string) (batchapi.Batch, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dir == nil {
		return batchapi.Batch{}, false, nil
	}
	return l.dir.Get(id)
}

func (l *leased) List(owner string) ([]batchapi.Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dir == nil {
		return nil, nil
	}
	return l.dir.List(owner)
}

func (l *leased) Holds(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[id]
}

func (l *leased) take(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held[id], l.taken[id] = false, true
}

func (l *leased) Adopt(id string) bool { return false }
func (l *leased) Orphans(int) []string { return nil }
func (l *leased) Finish(string)        {}
func (l *leased) Lease() time.Duration { return 20 * time.Millisecond }

// A replica whose batch another replica adopted stops its lines at its
// next round and leaves the batch as it was: it neither ends it nor
// registers an output.
func TestALostBatchStopsHere(t *testing.T) {
	store := &leased{held: map[string]bool{}, taken: map[string]bool{}}
	e := newEnv(t, batchapi.Options{Concurrency: 2, Store: store})
	dir, err := batchapi.DirStore(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	store.dir = dir
	store.mu.Unlock()
	c := e.client("sk-alice")
	release := make(chan struct{})
	var served sync.WaitGroup
	served.Add(4)
	var mu sync.Mutex
	n := 0
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k <= 4 {
			served.Done()
			return
		}
		<-release
	}
	e.mu.Unlock()
	b := create(t, c, uploadFile(t, c, lines(40)).ID)
	served.Wait()
	store.take(b.ID) // adopted elsewhere
	waitUntil(t, "the run to learn it lost the batch", func() bool {
		_, lost := batchapi.RunState(e.api, b.ID)
		return lost
	})
	close(release) // the lines in flight finish; no other starts here
	waitUntil(t, "the run to stop", func() bool {
		running, _ := batchapi.RunState(e.api, b.ID)
		return !running
	})
	mu.Lock()
	if n > 4+2 {
		t.Errorf("%d lines served here, want the 4 before and the 2 in flight", n)
	}
	mu.Unlock()
	got, ok, err := dir.Get(b.ID)
	if err != nil || !ok || got.Status != batchapi.StatusInProgress || got.OutputFileID != nil {
		t.Errorf("the lost batch here: %+v %v %v, want it left in progress without an output", got, ok, err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A batch another replica took over still holds its room here (the
// replicas share the data directory), and when that replica ends it, its
// hold becomes the output it registered.
func TestAForeignBatchKeepsItsHold(t *testing.T) {
	store := &leased{held: map[string]bool{}, taken: map[string]bool{}}
	e := newEnv(t, batchapi.Options{Concurrency: 2, Store: store})
	dir, err := batchapi.DirStore(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	store.mu.Lock()
	store.dir = dir
	store.mu.Unlock()
	c := e.client("sk-alice")
	release := make(chan struct{})
	var mu sync.Mutex
	n := 0
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k > 3 {
			<-release
		}
	}
	e.mu.Unlock()
	in := uploadFile(t, c, lines(40))
	b := create(t, c, in.ID)
	waitUntil(t, "three lines served", func() bool { mu.Lock(); defer mu.Unlock(); return n > 3 })
	store.take(b.ID) // adopted elsewhere
	waitUntil(t, "the run to learn it lost the batch", func() bool {
		_, lost := batchapi.RunState(e.api, b.ID)
		return lost
	})
	close(release)
	waitUntil(t, "the run to stop", func() bool {
		running, _ := batchapi.RunState(e.api, b.ID)
		return !running
	})
	if got := batchapi.OwnerFiles(e.api, "alice"); got != 3 {
		t.Fatalf("with its batch run elsewhere alice's limits count %d files; want her input and the batch's two", got)
	}
	// The other replica ends the batch and registers its output.
	out := filepath.Join("batches", b.ID, "output.jsonl")
	fi, err := os.Stat(filepath.Join(e.dir, out))
	if err != nil {
		t.Fatal(err)
	}
	id := batchapi.OutputID(b.ID, "output")
	obj, _ := json.Marshal(batchapi.File{ID: id, Object: "file", Bytes: fi.Size(), Purpose: "batch_output", Status: "processed", Owner: "alice", Path: out})
	if err := os.WriteFile(filepath.Join(e.dir, "files", id+".json"), obj, 0o600); err != nil {
		t.Fatal(err)
	}
	done, _, _ := dir.Get(b.ID)
	done.Status, done.OutputFileID = batchapi.StatusCompleted, &id
	if err := dir.Put(done); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the hold to become the output", func() bool { return batchapi.OwnerFiles(e.api, "alice") == 2 })
	e.checkExact(t)
}
