package batchapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Adopter is a Store whose batches survive their replica (the fleet's,
// internal/fleet): each batch is run by the replica that holds its lease,
// and when that replica stops, another that reaches the batch's files
// (replicas sharing one data directory) adopts it and resumes it from its
// journal, every line's answer once in the output.
type Adopter interface {
	Store
	// Holds reports whether this replica runs batch id.
	Holds(id string) bool
	// Adopt takes batch id over if its owner's lease has ended: exactly
	// one replica that asks gets it.
	Adopt(id string) bool
	// Orphans returns up to n batches whose owner's lease has ended.
	Orphans(n int) []string
	// Finish ends batch id's lease: no one adopts it.
	Finish(id string)
	// Lease is how long a batch outlives its owner's last renewal.
	Lease() time.Duration
}

// orphansPerRound bounds the batches one round of adoptLoop looks at.
const orphansPerRound = 16

// adopter returns the store as an Adopter, or nil.
func (a *API) adopter() Adopter {
	ad, _ := a.store.(Adopter)
	return ad
}

// adoptLoop, every half lease, stops the runs whose lease another
// replica took, adopts the batches whose owner stopped and follows the
// room held by the batches other replicas run. It runs until Close.
func (a *API) adoptLoop(ad Adopter) {
	defer a.wg.Done()
	every := max(ad.Lease()/2, time.Millisecond)
	t := a.clk.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-t.C():
		}
		a.yieldLost(ad)
		for _, id := range ad.Orphans(orphansPerRound) {
			a.adoptBatch(ad, id)
		}
		a.followForeign()
		t.Reset(every)
	}
}

// yieldLost stops the runs of batches another replica adopted: their
// lines stop here and the run ends without a state of its own (its
// writes are refused).
func (a *API) yieldLost(ad Adopter) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, rn := range a.runs {
		if !ad.Holds(id) && !rn.lost {
			rn.lost = true
			if rn.r != nil {
				rn.r.Stop()
			}
			a.log.Warn("batch adopted by another replica; its run here stops", "batch", id)
		}
	}
}

// adoptBatch adopts batch id, if its lease has ended and this replica
// reaches its input, and resumes it. It reports whether the batch runs
// here now.
func (a *API) adoptBatch(ad Adopter, id string) bool {
	a.mu.Lock()
	_, running := a.runs[id]
	closed := a.closed
	a.mu.Unlock()
	if running || closed {
		return running
	}
	b, ok, err := a.store.Get(id)
	if err != nil || !ok {
		return false
	}
	if _, reach := a.inputFile(b); !reach && active(b.Status) {
		return false // its files are another replica's alone: it waits for it
	}
	if !ad.Adopt(id) {
		return false
	}
	if b, ok, err = a.store.Get(id); err != nil || !ok { // as the old owner last wrote it
		return false
	}
	if !active(b.Status) {
		ad.Finish(id) // it ended before its owner could say so
		return false
	}
	a.restoreHold(b)
	rn := &run{owner: b.Owner, input: b.InputFileID}
	a.mu.Lock()
	if a.closed || a.runs[id] != nil {
		a.mu.Unlock()
		return false
	}
	a.runs[id] = rn
	a.mu.Unlock()
	a.log.Info("batch adopted from a replica that stopped", "batch", id, "status", b.Status)
	a.start(b, rn)
	return true
}

// inputFile returns b's input file: from this replica's index, or, in a
// data directory shared with other replicas, from the object another one
// wrote there.
func (a *API) inputFile(b Batch) (File, bool) {
	if f, ok := a.files.get(b.Owner, b.InputFileID); ok {
		return f, true
	}
	if !validID(b.InputFileID, "file-") {
		return File{}, false
	}
	data, err := os.ReadFile(filepath.Join(a.o.Dir, "files", b.InputFileID+".json"))
	if err != nil {
		return File{}, false
	}
	var f File
	if json.Unmarshal(data, &f) != nil || f.ID != b.InputFileID || f.Owner != b.Owner {
		return File{}, false
	}
	if _, err := os.Stat(a.files.path(f)); err != nil {
		return File{}, false
	}
	return f, true
}

// finished ends the lease of a batch whose run ended here in a final
// state.
func (a *API) finished(b Batch) {
	if ad := a.adopter(); ad != nil && !active(b.Status) && b.ID != "" {
		ad.Finish(b.ID)
	}
}
