package batchapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
)

// A batch holds room in its owner's limits from its creation until its
// output and error files are registered: a file slot for each of the two
// not yet registered, and the bytes written to them so far. Uploads see
// it, so uploads and batches racing for the last slot or byte get exactly
// the limit; the engine asks it before each result is written
// (batch.Room), so a batch never takes its owner past max_client_bytes.
//
// The holds are kept in the index but follow the batches' persisted
// state: New derives them from the active batches in the store (a slot
// for each output whose object is not in files/ yet, the bytes of its
// file), and so does an adoption. A batch's end turns its hold into the
// files it produced under the index's lock, and an output's id is made
// from its batch's (outputID), so an output registered before a crash is
// not counted twice after it: it is not held again, and registering it
// again replaces its object.

// batchHold is the room one batch holds.
type batchHold struct {
	owner string
	files int   // its outputs not yet registered: 2 until it ends
	bytes int64 // what they hold so far
}

// outputID is the id of batch id's output file (kind "output") or error
// file (kind "error").
func outputID(batchID, kind string) string {
	sum := sha256.Sum256([]byte(batchID + "\x00" + kind))
	return "file-" + hex.EncodeToString(sum[:12])
}

// holdBatch takes room for a new batch of owner's: two file slots within
// maxFiles, and some byte of maxBytes free. When there is none it
// returns what owner holds.
func (x *fileIndex) holdBatch(id, owner string, maxFiles int, maxBytes int64) (usage, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	u := x.use[owner]
	if u.files+2 > maxFiles || u.bytes >= maxBytes {
		return u, false
	}
	x.batches[id] = &batchHold{owner: owner, files: 2}
	x.use[owner] = usage{u.files + 2, u.bytes}
	return u, true
}

// restoreBatch holds room for a batch that has it already (derived from
// its persisted state), unchecked; a batch held already keeps its hold.
func (x *fileIndex) restoreBatch(id, owner string, files int, bytes int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.batches[id] != nil {
		return
	}
	x.batches[id] = &batchHold{owner: owner, files: files, bytes: bytes}
	u := x.use[owner]
	x.use[owner] = usage{u.files + files, u.bytes + bytes}
}

// growBatch makes batch id's hold total bytes, if that fits maxBytes
// (shrinking always does). A batch without a hold gets no room.
func (x *fileIndex) growBatch(id string, total, maxBytes int64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.batches[id]
	if h == nil {
		return false
	}
	u := x.use[h.owner]
	if total > h.bytes && u.bytes-h.bytes+total > maxBytes {
		return false
	}
	x.use[h.owner] = usage{u.files, u.bytes - h.bytes + total}
	h.bytes = total
	return true
}

// raiseBatch makes batch id's hold at least n bytes, unchecked: what
// another replica's run of it has written.
func (x *fileIndex) raiseBatch(id string, n int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if h := x.batches[id]; h != nil && n > h.bytes {
		u := x.use[h.owner]
		x.use[h.owner] = usage{u.files, u.bytes - h.bytes + n}
		h.bytes = n
	}
}

// roomLeft is how many more bytes batch id's owner may take.
func (x *fileIndex) roomLeft(id string, maxBytes int64) int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	h := x.batches[id]
	if h == nil {
		return 0
	}
	return maxBytes - x.use[h.owner].bytes
}

// settleBatch ends batch id's hold: it becomes outs, the files the batch
// produced (their objects saved), in one step.
func (x *fileIndex) settleBatch(id string, outs []File) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if h := x.batches[id]; h != nil {
		delete(x.batches, id)
		u := x.use[h.owner]
		x.use[h.owner] = usage{u.files - h.files, u.bytes - h.bytes}
	}
	for _, f := range outs {
		x.addLocked(f)
	}
}

// register saves the objects of batch id's outputs (their bytes are in
// the batch's directory) and settles its hold with them.
func (x *fileIndex) register(id string, outs []File) error {
	for _, f := range outs {
		data, _ := json.Marshal(f)
		if err := writeAtomic(filepath.Join(x.dir, "files", f.ID+".json"), data); err != nil {
			return err
		}
	}
	x.settleBatch(id, outs)
	return nil
}

// heldBatches returns the ids of the batches that hold room.
func (x *fileIndex) heldBatches() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	ids := make([]string, 0, len(x.batches))
	for id := range x.batches {
		ids = append(ids, id)
	}
	return ids
}

// batchRoom is a batch's hold as its engine sees it (batch.Room).
type batchRoom struct {
	x   *fileIndex
	id  string
	max int64 // the owner's max_client_bytes
}

func (r batchRoom) Grow(total int64) bool { return r.x.growBatch(r.id, total, r.max) }
func (r batchRoom) Left() int64           { return r.x.roomLeft(r.id, r.max) }

// outputPaths are a batch's two output files: kind, where its bytes are, and
// the name a client sees.
func (a *API) outputPaths(b Batch) [2]struct{ kind, path, name string } {
	p := a.paths(b.ID)
	return [2]struct{ kind, path, name string }{
		{"output", p.Out, b.ID + "_output.jsonl"},
		{"error", p.Dead, b.ID + "_error.jsonl"},
	}
}

// unregistered is what b's outputs not yet registered hold: how many,
// and their bytes on disk.
func (a *API) unregistered(b Batch) (files int, bytes int64) {
	for _, o := range a.outputPaths(b) {
		if _, ok := a.files.get(b.Owner, outputID(b.ID, o.kind)); ok {
			continue
		}
		files++
		if fi, err := os.Stat(o.path); err == nil {
			bytes += fi.Size()
		}
	}
	return files, bytes
}

// restoreHold holds room for b, an active batch of the store, as its
// persisted state says it has.
func (a *API) restoreHold(b Batch) {
	files, bytes := a.unregistered(b)
	a.files.restoreBatch(b.ID, b.Owner, files, bytes)
}

// followForeign keeps the holds of the batches that another replica
// runs in the data directory they share: the bytes they have written,
// and, once one has ended, the files it produced in place of its hold.
// A batch not (yet) in the store is one being created here.
func (a *API) followForeign() {
	for _, id := range a.files.heldBatches() {
		a.mu.Lock()
		_, here := a.runs[id]
		a.mu.Unlock()
		if here {
			continue
		}
		b, ok, err := a.store.Get(id)
		switch {
		case err != nil || !ok:
		case active(b.Status):
			_, bytes := a.unregistered(b)
			a.files.raiseBatch(id, bytes)
		default:
			a.files.settleBatch(id, a.savedOutputs(b))
		}
	}
}

// savedOutputs returns the objects of b's outputs as its replica saved
// them in the data directory.
func (a *API) savedOutputs(b Batch) []File {
	var outs []File
	for _, id := range []*string{b.OutputFileID, b.ErrorFileID} {
		if id == nil || !validID(*id, "file-") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(a.o.Dir, "files", *id+".json"))
		var f File
		if err == nil && json.Unmarshal(data, &f) == nil && f.ID == *id && f.Owner == b.Owner {
			outs = append(outs, f)
		}
	}
	return outs
}
