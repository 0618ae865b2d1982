package batchapi

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Store keeps batch objects. The directory store (the default) keeps them
// beside the batches' files; a shared store (Redis, say) would let every
// replica answer for every batch, though each batch still runs on the
// replica whose directory holds its files. Implementations must be safe
// for concurrent use.
type Store interface {
	// Put saves b, replacing any batch with its id.
	Put(b Batch) error
	// Get returns the batch with id, and false if there is none.
	Get(id string) (Batch, bool, error)
	// List returns owner's batches, newest first ("" : every owner's).
	List(owner string) ([]Batch, error)
}

// ErrElsewhere is a Store's answer to a change of a batch another replica
// runs: only the replica that holds its files may change it.
var ErrElsewhere = errors.New("batchapi: the batch runs on another replica")

// DirStore returns the directory store a New without a Store uses for
// dir (the Options' Dir), for a shared store to keep beside it.
func DirStore(dir string) (Store, error) { return newDirStore(filepath.Join(dir, "batches")) }

// dirStore keeps each batch as dir/<id>.json, replaced atomically.
type dirStore struct {
	dir string
	// mu serialises writes, so a rename never races another.
	mu sync.Mutex
}

func newDirStore(dir string) (*dirStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &dirStore{dir: dir}, nil
}

func (s *dirStore) Put(b Batch) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return writeAtomic(filepath.Join(s.dir, b.ID+".json"), data)
}

func (s *dirStore) Get(id string) (Batch, bool, error) {
	if !validID(id, "batch_") {
		return Batch{}, false, nil
	}
	data, err := os.ReadFile(filepath.Join(s.dir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return Batch{}, false, nil
	}
	if err != nil {
		return Batch{}, false, err
	}
	var b Batch
	if err := json.Unmarshal(data, &b); err != nil {
		return Batch{}, false, err
	}
	return b, true, nil
}

func (s *dirStore) List(owner string) ([]Batch, error) {
	names, err := filepath.Glob(filepath.Join(s.dir, "batch_*.json"))
	if err != nil {
		return nil, err
	}
	var out []Batch
	for _, n := range names {
		b, ok, err := s.Get(strings.TrimSuffix(filepath.Base(n), ".json"))
		if err != nil {
			return nil, err
		}
		if ok && (owner == "" || b.Owner == owner) {
			out = append(out, b)
		}
	}
	SortNewestFirst(out)
	return out, nil
}

// SortNewestFirst orders batches as Store.List returns them: newest
// first, ties by id.
func SortNewestFirst(bs []Batch) {
	sort.Slice(bs, func(i, j int) bool {
		if bs[i].CreatedNs != bs[j].CreatedNs {
			return bs[i].CreatedNs > bs[j].CreatedNs
		}
		return bs[i].ID > bs[j].ID
	})
}

// writeAtomic writes data to path through a synced temporary file and a
// rename, so a crash leaves the old contents or the new, never half.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// validID accepts the ids this package makes: prefix and 24 hex digits,
// so an id from a URL can name a file in the directory safely.
func validID(id, prefix string) bool {
	if !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+24 {
		return false
	}
	for _, c := range id[len(prefix):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
