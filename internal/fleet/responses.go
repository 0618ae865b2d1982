package fleet

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/internal/responses"
)

// With fleet state, the Responses API's stored responses are the fleet's:
// {prefix}{resp:<id>} → the stored response as JSON, expiring after the
// store's TTL, so previous_response_id and GET /v1/responses/{id} work on
// any replica. Each replica keeps its own copy of what it stored as well,
// the one asked while Redis cannot be.

// DefaultResponseTTL is how long the fleet keeps a stored response when
// the configuration sets no ttl: Redis's memory is bounded by time.
const DefaultResponseTTL = 30 * 24 * time.Hour

// MaxSharedResponse bounds one stored response in Redis.
const MaxSharedResponse = 4 << 20

// ResponseStore returns a store of the fleet's, with local as this
// replica's own copy; ttl 0 means DefaultResponseTTL.
func (f *Fleet) ResponseStore(local responses.Store, ttl time.Duration) responses.Store {
	if ttl <= 0 {
		ttl = DefaultResponseTTL
	}
	return &responseStore{f: f, local: local, ttl: ttl}
}

type responseStore struct {
	f     *Fleet
	local responses.Store
	ttl   time.Duration
}

func (s *responseStore) key(id string) string { return s.f.o.Prefix + "{resp:" + id + "}" }

// Get reads the fleet's response; without Redis, or when Redis has none
// (it was stored while Redis was down), this replica's copy.
func (s *responseStore) Get(id string) (responses.Stored, bool) {
	if !responses.ValidID(id) {
		return responses.Stored{}, false
	}
	ctx, cancel := s.f.ctx()
	defer cancel()
	v, err := s.f.rdb.Get(ctx, s.key(id)).Bytes()
	if !s.f.result("response_get", err) {
		s.f.fallback("response_get")
		return s.local.Get(id)
	}
	var st responses.Stored
	if errors.Is(err, redis.Nil) || json.Unmarshal(v, &st) != nil || st.ID != id {
		return s.local.Get(id)
	}
	return st, true
}

// Put stores st here and in the fleet.
func (s *responseStore) Put(st responses.Stored) error {
	if err := s.local.Put(st); err != nil {
		return err
	}
	v, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if len(v) > MaxSharedResponse {
		return responses.ErrTooLarge
	}
	ctx, cancel := s.f.ctx()
	defer cancel()
	if err := s.f.rdb.Set(ctx, s.key(st.ID), v, s.ttl).Err(); !s.f.result("response_put", err) {
		s.f.fallback("response_put") // kept here: this replica still finds it
	}
	return nil
}

// Delete removes the response here and in the fleet.
func (s *responseStore) Delete(id string) bool {
	if !responses.ValidID(id) {
		return false
	}
	here := s.local.Delete(id)
	ctx, cancel := s.f.ctx()
	defer cancel()
	n, err := s.f.rdb.Del(ctx, s.key(id)).Result()
	s.f.result("response_delete", err)
	return here || n > 0
}
