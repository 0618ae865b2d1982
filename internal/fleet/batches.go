package fleet

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/internal/batchapi"
)

// With fleet state, every replica answers for every batch: each batch
// object is mirrored at {prefix}{batch:<id>} (JSON, kept BatchTTL), and
// its owner's batches are listed in {prefix}{batches:<owner>}, a sorted
// set by creation time trimmed to BatchTTL. A batch is run by the replica
// that holds its lease (Work("batch"), work.go): the one that created it,
// or the one that adopted it when that one stopped. Only the holder
// changes it (another's change is refused with batchapi.ErrElsewhere, and
// every write is fenced by the lease's epoch); a batch can be adopted by
// a replica that reaches its files (replicas sharing one batch.dir).

// BatchTTL is how long the fleet keeps a batch object: OpenAI's batches
// expire within a day, and their files within 30.
const BatchTTL = 30 * 24 * time.Hour

// BatchStore returns a batch store of the fleet's, with local as this
// replica's own (the directory store of the batches it runs).
func (f *Fleet) BatchStore(local batchapi.Store) batchapi.Store {
	return &batchStore{f: f, local: local, w: f.Work("batch")}
}

type batchStore struct {
	f     *Fleet
	local batchapi.Store
	w     *Work
}

var _ batchapi.Adopter = (*batchStore)(nil)

func (s *batchStore) key(id string) string { return s.f.o.Prefix + "{batch:" + id + "}" }
func (s *batchStore) ownerKey(owner string) string {
	return s.f.o.Prefix + "{batches:" + owner + "}"
}

// Put saves a batch this replica runs, in the fleet (under its lease)
// and here; a new batch is claimed first. A batch another replica runs is
// refused. With Redis unreachable, the batch is saved here only.
func (s *batchStore) Put(b batchapi.Batch) error {
	if _, held := s.w.Holds(b.ID); !held {
		if _, elsewhere := s.remote(b.ID); elsewhere {
			return batchapi.ErrElsewhere
		}
		s.w.Claim(b.ID) // a new batch
	}
	v, err := json.Marshal(b)
	if err != nil {
		return err
	}
	switch err := s.w.Put(b.ID, v, BatchTTL); {
	case errors.Is(err, ErrLost):
		return batchapi.ErrElsewhere
	case err != nil:
		s.f.fallback("batch_put") // this replica still answers for it
		return s.local.Put(b)
	}
	if err := s.local.Put(b); err != nil {
		return err
	}
	ctx, cancel := s.f.ctx()
	defer cancel()
	now := s.f.clk.Now()
	_, err = s.f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, s.ownerKey(b.Owner), redis.Z{Score: float64(b.CreatedNs), Member: b.ID})
		p.ZRemRangeByScore(ctx, s.ownerKey(b.Owner), "-inf", strconv.FormatInt(now.Add(-BatchTTL).UnixNano(), 10))
		p.PExpire(ctx, s.ownerKey(b.Owner), BatchTTL)
		return nil
	})
	if !s.f.result("batch_put", err) {
		s.f.fallback("batch_put") // this replica still answers for it
	}
	return nil
}

// remote reads the fleet's copy of a batch.
func (s *batchStore) remote(id string) (batchapi.Batch, bool) {
	ctx, cancel := s.f.ctx()
	defer cancel()
	v, err := s.f.rdb.Get(ctx, s.key(id)).Bytes()
	if !s.f.result("batch_get", err) {
		s.f.fallback("batch_get")
		return batchapi.Batch{}, false
	}
	var b batchapi.Batch
	if errors.Is(err, redis.Nil) || json.Unmarshal(v, &b) != nil || b.ID != id {
		return batchapi.Batch{}, false
	}
	return b, true
}

// Holds reports whether this replica runs batch id.
func (s *batchStore) Holds(id string) bool {
	_, held := s.w.Holds(id)
	return held
}

// Adopt takes batch id over if its owner's lease has ended.
func (s *batchStore) Adopt(id string) bool { return s.w.Adopt(id, 0).Adopted }

// Orphans returns up to n batches whose owner's lease has ended.
func (s *batchStore) Orphans(n int) []string { return s.w.Orphans(n) }

// Finish ends batch id's lease: no one adopts it.
func (s *batchStore) Finish(id string) { s.w.Finish(id) }

// Lease is how long a batch outlives its owner's last renewal.
func (s *batchStore) Lease() time.Duration { return s.w.Lease() }

// Get returns this replica's batch, or the fleet's.
func (s *batchStore) Get(id string) (batchapi.Batch, bool, error) {
	if b, ok, err := s.local.Get(id); ok || err != nil {
		return b, ok, err
	}
	b, ok := s.remote(id)
	return b, ok, nil
}

// List returns owner's batches across the fleet, newest first; "" lists
// those in this replica's directory (the ones it may resume, once it
// holds or adopts them).
func (s *batchStore) List(owner string) ([]batchapi.Batch, error) {
	mine, err := s.local.List(owner)
	if err != nil || owner == "" {
		return mine, err
	}
	ctx, cancel := s.f.ctx()
	defer cancel()
	ids, err := s.f.rdb.ZRevRange(ctx, s.ownerKey(owner), 0, -1).Result()
	if !s.f.result("batch_list", err) || len(ids) == 0 {
		return mine, nil
	}
	seen := make(map[string]bool, len(mine))
	for _, b := range mine {
		seen[b.ID] = true
	}
	var gets []*redis.StringCmd
	_, err = s.f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { // one round trip; a Cluster splits it by slot
		for _, id := range ids {
			if !seen[id] {
				gets = append(gets, p.Get(ctx, s.key(id)))
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		s.f.result("batch_list", err)
		return mine, nil
	}
	all := mine
	for _, g := range gets {
		var b batchapi.Batch
		if v, err := g.Bytes(); err == nil && json.Unmarshal(v, &b) == nil && b.Owner == owner {
			all = append(all, b)
		}
	}
	batchapi.SortNewestFirst(all)
	return all, nil
}
