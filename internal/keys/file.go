package keys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// fileBackend keeps the keys in one JSON file, rewritten whole on each
// change: written to a temporary file beside it (mode 0600), synced,
// then renamed over it, so a crash leaves the old file or the new one.
type fileBackend struct {
	path string
	// mu guards recs and sealed, and orders the writes.
	mu     sync.Mutex
	recs   map[string]Record
	sealed bool
}

// fileDoc is the file's content.
type fileDoc struct {
	// Sealed: a key was minted once, so the gateway is never open again.
	Sealed bool     `json:"sealed"`
	Keys   []Record `json:"keys"`
}

func (f *fileBackend) load(context.Context) ([]Record, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recs == nil {
		if err := f.readLocked(); err != nil {
			return nil, false, err
		}
	}
	recs := make([]Record, 0, len(f.recs))
	for _, r := range f.recs {
		recs = append(recs, r)
	}
	return recs, f.sealed, nil
}

// readLocked reads the file; a missing file is no keys.
func (f *fileBackend) readLocked() error {
	f.recs = map[string]Record{}
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	var doc fileDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("keys: %s is not a keys file: %v", f.path, err)
	}
	for _, r := range doc.Keys {
		f.recs[r.ID] = r
	}
	f.sealed = doc.Sealed || len(doc.Keys) > 0
	return nil
}

func (f *fileBackend) create(_ context.Context, r Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.recs {
		if o.Name == r.Name {
			return ErrNameTaken
		}
	}
	return f.commitLocked(func(m map[string]Record) { m[r.ID] = r }, true)
}

func (f *fileBackend) replace(_ context.Context, r Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.recs[r.ID]
	switch {
	case !ok:
		return ErrNotFound
	case cur.Rev != r.Rev-1:
		return ErrConflict
	}
	return f.commitLocked(func(m map[string]Record) { m[r.ID] = r }, f.sealed)
}

func (f *fileBackend) remove(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.recs[id]; !ok {
		return ErrNotFound
	}
	return f.commitLocked(func(m map[string]Record) { delete(m, id) }, true)
}

// commitLocked writes the records changed by change and, once they are
// on disk, keeps them; a failed write changes nothing.
func (f *fileBackend) commitLocked(change func(map[string]Record), sealed bool) error {
	next := make(map[string]Record, len(f.recs)+1)
	for id, r := range f.recs {
		next[id] = r
	}
	change(next)
	doc := fileDoc{Sealed: sealed, Keys: make([]Record, 0, len(next))}
	for _, r := range next {
		doc.Keys = append(doc.Keys, r)
	}
	slices.SortFunc(doc.Keys, func(a, b Record) int { return strings.Compare(a.ID, b.ID) })
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(f.path, append(data, '\n')); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	f.recs, f.sealed = next, sealed
	return nil
}

// writeAtomic replaces path with data, mode 0600.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil { // the rename itself made durable
		d.Sync()
		d.Close()
	}
	return nil
}
