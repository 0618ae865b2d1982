package batchapi

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// fileIndex knows every file in Dir/files: the objects (kept as
// files/<id>.json beside their bytes, files/<id>) and what each owner
// holds: its files, and the room held by its uploads in progress
// (roomHold) and by its batches until their outputs are registered
// (batchHold, batchroom.go). It is safe for concurrent use.
type fileIndex struct {
	dir string // the data directory

	// mu guards byID, use and batches.
	mu      sync.Mutex
	byID    map[string]File
	use     map[string]usage // by owner: files, holds included
	batches map[string]*batchHold
}

type usage struct {
	files int
	bytes int64
}

// openFileIndex indexes the files in dir/files, as of now.
func openFileIndex(dir string, now time.Time) (*fileIndex, error) {
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o700); err != nil {
		return nil, err
	}
	x := &fileIndex{dir: dir, byID: map[string]File{}, use: map[string]usage{}, batches: map[string]*batchHold{}}
	names, err := filepath.Glob(filepath.Join(dir, "files", "file-*.json"))
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var f File
		if err := json.Unmarshal(data, &f); err != nil || !validID(f.ID, "file-") {
			continue // a torn object: its upload never finished
		}
		x.addLocked(f)
	}
	removeStaleUploads(filepath.Join(dir, "files"), now)
	return x, nil
}

// staleUpload is how long an upload's temporary file may go unwritten
// before it is taken for one cut short by a crash.
const staleUpload = time.Hour

// removeStaleUploads removes the temporary files of uploads a crash cut
// short: nobody's. Only those unwritten for staleUpload, since a jobs_dir
// shared by replicas holds another replica's uploads in progress.
func removeStaleUploads(dir string, now time.Time) {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	for _, t := range tmps {
		if fi, err := os.Stat(t); err == nil && now.Sub(fi.ModTime()) > staleUpload {
			os.Remove(t)
		}
	}
}

// addLocked indexes f, in place of an object of its id (a batch output
// registered again after a crash).
func (x *fileIndex) addLocked(f File) {
	if old, ok := x.byID[f.ID]; ok {
		u := x.use[old.Owner]
		x.use[old.Owner] = usage{u.files - 1, u.bytes - old.Bytes}
	}
	x.byID[f.ID] = f
	u := x.use[f.Owner]
	x.use[f.Owner] = usage{u.files + 1, u.bytes + f.Bytes}
}

// get returns owner's file id.
func (x *fileIndex) get(owner, id string) (File, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	f, ok := x.byID[id]
	return f, ok && f.Owner == owner
}

// roomHold is room an upload holds in its owner's limits while its bytes
// arrive: counted as a file (and its bytes so far) from before the first
// byte is written, so concurrent uploads cannot all pass the check and
// then all register. Its methods are for the uploading goroutine only.
type roomHold struct {
	x     *fileIndex
	owner string
	bytes int64
	done  bool // given up, or become the file
}

// hold takes room for one more file of owner's within maxFiles and
// maxBytes; when there is none, it returns what owner holds.
func (x *fileIndex) hold(owner string, maxFiles int, maxBytes int64) (*roomHold, usage) {
	x.mu.Lock()
	defer x.mu.Unlock()
	u := x.use[owner]
	if u.files >= maxFiles || u.bytes >= maxBytes {
		return nil, u
	}
	x.use[owner] = usage{u.files + 1, u.bytes}
	return &roomHold{x: x, owner: owner}, u
}

// grow makes the hold n bytes, if that fits maxBytes.
func (h *roomHold) grow(n int64, maxBytes int64) bool {
	h.x.mu.Lock()
	defer h.x.mu.Unlock()
	u := h.x.use[h.owner]
	if u.bytes-h.bytes+n > maxBytes {
		return false
	}
	h.x.use[h.owner] = usage{u.files, u.bytes - h.bytes + n}
	h.bytes = n
	return true
}

// release gives the room back, unless it became a file.
func (h *roomHold) release() {
	h.x.mu.Lock()
	defer h.x.mu.Unlock()
	h.releaseLocked()
}

func (h *roomHold) releaseLocked() {
	if h.done {
		return
	}
	h.done = true
	u := h.x.use[h.owner]
	h.x.use[h.owner] = usage{u.files - 1, u.bytes - h.bytes}
}

// addHeld is add for a file whose room h holds: the hold becomes it.
func (x *fileIndex) addHeld(f File, h *roomHold) error {
	data, _ := json.Marshal(f)
	if err := writeAtomic(filepath.Join(x.dir, "files", f.ID+".json"), data); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	h.releaseLocked()
	x.addLocked(f)
	return nil
}

// remove deletes owner's file id: its object, then its bytes.
func (x *fileIndex) remove(owner, id string) (bool, error) {
	x.mu.Lock()
	f, ok := x.byID[id]
	if !ok || f.Owner != owner {
		x.mu.Unlock()
		return false, nil
	}
	delete(x.byID, id)
	u := x.use[owner]
	x.use[owner] = usage{u.files - 1, u.bytes - f.Bytes}
	x.mu.Unlock()
	err := os.Remove(filepath.Join(x.dir, "files", id+".json"))
	if err == nil && !strings.Contains(f.Path, "batches") {
		err = os.Remove(x.path(f))
	}
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return true, err
}

// path is where f's bytes are.
func (x *fileIndex) path(f File) string { return filepath.Join(x.dir, f.Path) }
