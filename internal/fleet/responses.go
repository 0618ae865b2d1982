package fleet

import (
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/internal/responses"
)

// With fleet state, the Responses API's stored responses are the fleet's,
// kept in Redis by owner (respbound.go) and bounded per owner as the
// local stores are, so that previous_response_id and GET
// /v1/responses/{id} work on any replica and one client storing without
// end fills only its own share. Each replica keeps its own copy of what
// it stored as well: the one asked while Redis cannot be.

// DefaultResponseTTL is how long the fleet keeps a stored response when
// the configuration sets no ttl: Redis's memory is bounded by time.
const DefaultResponseTTL = 30 * 24 * time.Hour

// MaxSharedResponse bounds one stored response in Redis.
const MaxSharedResponse = 4 << 20

// ResponseOptions bound the fleet's stored responses.
type ResponseOptions struct {
	// TTL is how long Redis keeps a response. 0: DefaultResponseTTL.
	TTL time.Duration
	// MaxEntries and MaxBytes bound each owner's responses in Redis, in
	// count and in bytes of their JSON: past either the owner's oldest
	// go, never another owner's. 0: responses.DefaultMaxEntries and
	// responses.DefaultMaxBytes, the memory store's defaults.
	MaxEntries int
	MaxBytes   int64
}

// ResponseStore returns a store of the fleet's, with local as this
// replica's own copy.
func (f *Fleet) ResponseStore(local responses.Store, o ResponseOptions) responses.Store {
	if o.TTL <= 0 {
		o.TTL = DefaultResponseTTL
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = responses.DefaultMaxEntries
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = responses.DefaultMaxBytes
	}
	return &responseStore{f: f, local: local, o: o, unshared: unshared{ids: map[string]struct{}{}}}
}

type responseStore struct {
	f     *Fleet
	local responses.Store
	o     ResponseOptions
	// unshared are the responses Redis did not take when they were
	// stored: the ones a Redis that answers but has none may still be
	// found in the local copy.
	unshared unshared
}

// Get reads owner's response from the fleet; without Redis, this
// replica's copy. When Redis answers without it, the local copy counts
// only if Redis never took it (it was stored while Redis was down): a
// response deleted on another replica, or evicted by its owner's bound,
// is gone on every replica.
func (s *responseStore) Get(owner, id string) (responses.Stored, bool) {
	if !responses.ValidID(id) {
		return responses.Stored{}, false
	}
	ctx, cancel := s.f.patientCtx()
	defer cancel()
	v, err := s.f.rdb.Get(ctx, s.ownerTag(owner)+id).Bytes()
	if !s.f.result("response_get", err) {
		s.f.fallback("response_get")
		return s.local.Get(owner, id)
	}
	var st responses.Stored
	if err == nil {
		st, err = responses.DecodeStored(v)
	}
	if err != nil || st.ID != id || st.Owner != owner {
		if s.unshared.has(id) {
			return s.local.Get(owner, id)
		}
		return responses.Stored{}, false
	}
	return st, true
}

// Put stores st here and in the fleet, where its owner's oldest go past
// the bounds. A response over MaxSharedResponse or the owner's byte bound
// is stored nowhere (ErrTooLarge).
func (s *responseStore) Put(st responses.Stored) error {
	if !responses.ValidID(st.ID) {
		return responses.ErrInvalidID
	}
	v, err := st.Encode()
	if err != nil {
		return err
	}
	if len(v) > MaxSharedResponse || int64(len(v)) > s.o.MaxBytes {
		return responses.ErrTooLarge
	}
	if err := s.local.Put(st); err != nil {
		return err
	}
	tag, keys := s.ownerKeys(st.Owner, st.ID)
	ctx, cancel := s.f.patientCtx()
	defer cancel()
	err = putScript.Run(ctx, s.f.rdb, keys, st.ID, v, s.f.clk.Now().UnixMilli(), s.o.TTL.Milliseconds(),
		s.o.MaxEntries, s.o.MaxBytes, tag).Err()
	if !s.f.result("response_put", err) {
		s.f.fallback("response_put") // kept here: this replica still finds it
		s.unshared.add(st.ID)
	}
	return nil
}

// Delete removes owner's response here and in the fleet.
func (s *responseStore) Delete(owner, id string) bool {
	if !responses.ValidID(id) {
		return false
	}
	here := s.local.Delete(owner, id)
	s.unshared.remove(id)
	_, keys := s.ownerKeys(owner, id)
	ctx, cancel := s.f.ctx()
	defer cancel()
	n, err := deleteScript.Run(ctx, s.f.rdb, keys, id).Int()
	s.f.result("response_delete", err)
	return here || n > 0
}

// maxUnshared bounds the ids kept as unshared (while Redis is down);
// past it the oldest are forgotten, and found here again only while Redis
// cannot be asked.
const maxUnshared = 100_000

// unshared is a bounded set of response ids, oldest first.
type unshared struct {
	mu    sync.Mutex // guards ids and order
	ids   map[string]struct{}
	order []string
}

func (u *unshared) add(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.order) >= maxUnshared {
		delete(u.ids, u.order[0])
		u.order = u.order[1:]
	}
	u.ids[id] = struct{}{}
	u.order = append(u.order, id)
}

func (u *unshared) has(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.ids[id]
	return ok
}

func (u *unshared) remove(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.ids, id) // its place in order goes when it comes up
}
