package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The states of a record: the provider's four, and the gateway's own.
const (
	stateSubmitting = "submitting"  // a submit is running
	stateUnknown    = "unknown"     // a submit's answer was lost: the job may exist
	stateRefused    = "refused"     // no target took it; kept for its keys
	stateQueued     = "queued"      // the provider's states
	stateInProgress = "in_progress" //
	stateCompleted  = "completed"   //
	stateFailed     = "failed"      //
	stateDeleted    = "deleted"     // deleted by its client
)

// live reports whether a job in state s is in flight on its target,
// holding a slot.
func live(s string) bool { return s == stateQueued || s == stateInProgress }

// ended reports whether state s is final.
func ended(s string) bool { return s == stateCompleted || s == stateFailed || s == stateDeleted }

// record is what the gateway keeps of a job: who owns it, where it runs,
// and what the provider last said of it.
type record struct {
	ID      string `json:"id"`
	Client  string `json:"client"`
	Alias   string `json:"alias"`
	IdemKey string `json:"idempotency_key,omitempty"`
	// BodySum is the SHA-256 of the client's body, hex: the same key with
	// another body is a 422.
	BodySum string `json:"body_sha256"`
	// Body and ContentType are the client's request, kept to resubmit it.
	Body        []byte `json:"body"`
	ContentType string `json:"content_type"`
	Seconds     int    `json:"seconds"`
	// Target is the provider/model that owns the job (or was last sent it).
	Target   string `json:"target,omitempty"`
	Upstream string `json:"upstream_id,omitempty"`
	// Key is the index of the API key that submitted it: polls use it.
	Key int `json:"key"`
	// UpKey is the Idempotency-Key of the last submit sent upstream.
	UpKey string `json:"upstream_key,omitempty"`
	// Gens are, per target, the generation of the upstream key: renewed
	// after a refusal the provider would replay.
	Gens   map[string]int  `json:"generations,omitempty"`
	State  string          `json:"state"`
	Object json.RawMessage `json:"object,omitempty"` // the last object, as the client sees it
	// Error is the client's answer when State is refused or unknown.
	Error     *apiError `json:"error,omitempty"`
	Resubmits int       `json:"resubmits,omitempty"`
	Reserved  float64   `json:"reserved,omitempty"`
	Cost      float64   `json:"cost,omitempty"`
	Settled   bool      `json:"settled,omitempty"`
	// Epoch is the lease's epoch this replica runs the job under, with
	// Options.Leases: a record of an older epoch is another replica's past.
	Epoch    int64     `json:"epoch,omitempty"`
	Created  time.Time `json:"created"`
	Polled   time.Time `json:"polled"`
	Finished time.Time `json:"finished,omitzero"`
}

// clone returns a copy of r that shares nothing mutable with it.
func (r *record) clone() record {
	c := *r
	c.Gens = maps.Clone(r.Gens)
	return c
}

// store holds the records, in memory and, with a directory, one file
// each. It is safe for concurrent use.
type store struct {
	dir    string
	shared Shared // nil: the records are this replica's own

	// mu guards byID and byKey, and orders the writes of the files.
	mu    sync.Mutex
	byID  map[string]*record
	byKey map[[2]string]string // (client, Idempotency-Key) → id
}

// openStore returns the store of dir, reading the records there; "" is a
// store in memory.
func openStore(dir string) (*store, error) {
	s := &store{dir: dir, byID: map[string]*record{}, byKey: map[[2]string]string{}}
	if dir == "" {
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var r record
		if err := json.Unmarshal(data, &r); err != nil || r.ID+".json" != name {
			errs = append(errs, fmt.Errorf("jobs: %s: not a job record", name))
			continue
		}
		s.index(&r)
	}
	return s, errors.Join(errs...)
}

// index adds r to the maps. It requires s.mu held, or s unshared.
func (s *store) index(r *record) {
	s.byID[r.ID] = r
	if r.IdemKey != "" {
		s.byKey[[2]string{r.Client, r.IdemKey}] = r.ID
	}
}

// get returns a copy of the record id.
func (s *store) get(id string) (record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return record{}, false
	}
	return r.clone(), true
}

// byIdem returns a copy of the client's record for an Idempotency-Key.
func (s *store) byIdem(client, key string) (record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byKey[[2]string{client, key}]
	if !ok {
		return record{}, false
	}
	return s.byID[id].clone(), true
}

// put stores r, replacing the record of its id, and writes its file.
func (s *store) put(r record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := r.clone()
	s.index(&c)
	return s.writeLocked(&c)
}

// update applies fn to the record id under the lock; when fn reports a
// change the record is written. It returns the record after fn, and false
// when there is no such record.
func (s *store) update(id string, fn func(*record) bool) (record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return record{}, false, nil
	}
	if !fn(r) {
		return r.clone(), true, nil
	}
	return r.clone(), true, s.writeLocked(r)
}

// remove forgets the record id and deletes its file.
func (s *store) remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.byID[id]
	if !ok {
		return nil
	}
	delete(s.byID, id)
	if r.IdemKey != "" && s.byKey[[2]string{r.Client, r.IdemKey}] == id {
		delete(s.byKey, [2]string{r.Client, r.IdemKey})
	}
	if s.dir == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(s.dir, id+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("jobs: %w", err)
	}
	return nil
}

// all returns copies of the records that match keep, oldest first.
func (s *store) all(keep func(*record) bool) []record {
	s.mu.Lock()
	var out []record
	for _, r := range s.byID {
		if keep(r) {
			out = append(out, r.clone())
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b record) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// writeLocked writes r's file atomically: a temporary file, synced, then
// renamed over the old one. It requires s.mu held.
func (s *store) writeLocked(r *record) error {
	s.share(r)
	if s.dir == "" {
		return nil
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(s.dir, r.ID+".json"))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("jobs: writing job %s: %w", r.ID, err)
	}
	return nil
}
