package fleet

import (
	"context"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// An idempotency record is one hash per key, {prefix}{idem:<key>}: hash
// (of the request body), state (running, stored), owner (the replica
// running the request) and, once stored, the answer (body, ctype, target,
// raw). While it runs, the owner renews its lease every sync, so a record
// whose replica died is gone after Options.Lease; a stored one lives for the
// idempotency TTL. Replicas waiting on a running record read it every
// sync until it is stored, or gone (then one of them runs the request).

// DefaultLease is how long a running record outlives its replica's last
// renewal (Options.Lease).
const DefaultLease = 10 * time.Second

// Claim is what ClaimIdem found for a key.
type Claim int

// The claims.
const (
	// Owner: the key is this replica's to run; Store or Release it.
	Owner Claim = iota
	// Stored: another request's answer is kept; replay it.
	Stored
	// Running: another replica runs the request; Wait for it.
	Running
	// Conflict: the key was used with another body.
	Conflict
)

// IdemAnswer is an answer kept for an idempotency key.
type IdemAnswer struct {
	Body        []byte
	ContentType string
	Target      string
	// Raw: Body is the answer exactly as sent (stream or not); otherwise a
	// chat.completion.
	Raw bool
	// Client names the client key the answer is kept for, so that the
	// fleet bounds each client's records (Options.IdemRecords,
	// IdemClientBytes); it is not part of the record.
	Client string
}

// idemLeases are the running records this replica owns, renewed each
// sync.
type idemLeases struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func (f *Fleet) idemKey(k [32]byte) string {
	return f.o.Prefix + "{idem:" + hex.EncodeToString(k[:]) + "}"
}

// claimScript: KEYS record; ARGV body hash, owner, lease (ms).
var claimScript = redis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'hash', 'state', 'body', 'ctype', 'target', 'raw')
if r[1] then
  if r[1] ~= ARGV[1] then return {'conflict'} end
  if r[2] == 'stored' then return {'stored', r[3], r[4], r[5], r[6]} end
  return {'running'}
end
redis.call('HSET', KEYS[1], 'hash', ARGV[1], 'state', 'running', 'owner', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {'owner'}
`)

// ClaimIdem claims key k (already scoped to its client and endpoint) for
// a request whose body hashes to hash. An error means Redis could not be
// asked: the caller decides on its own records.
func (f *Fleet) ClaimIdem(k, hash [32]byte) (Claim, *IdemAnswer, error) {
	ctx, cancel := f.ctx()
	defer cancel()
	key := f.idemKey(k)
	vals, err := claimScript.Run(ctx, f.rdb, []string{key}, hex.EncodeToString(hash[:]), f.id, f.o.Lease.Milliseconds()).Slice()
	if !f.result("idempotency_claim", err) || len(vals) == 0 {
		f.fallback("idempotency_claim")
		if err == nil {
			err = errors.New("fleet: empty answer to an idempotency claim")
		}
		return 0, nil, err
	}
	switch toString(vals[0]) {
	case "owner":
		f.leases.mu.Lock()
		f.leases.keys[key] = struct{}{}
		f.leases.mu.Unlock()
		return Owner, nil, nil
	case "stored":
		if len(vals) == 5 {
			return Stored, &IdemAnswer{Body: []byte(toString(vals[1])), ContentType: toString(vals[2]),
				Target: toString(vals[3]), Raw: toString(vals[4]) == "1"}, nil
		}
	case "running":
		return Running, nil, nil
	case "conflict":
		return Conflict, nil, nil
	}
	return 0, nil, errors.New("fleet: unreadable idempotency record")
}

// WaitIdem waits for a key another replica runs, reading it every sync,
// until its answer is stored (Stored), the record is gone (Owner or
// Running again, as ClaimIdem finds it then) or ctx ends.
func (f *Fleet) WaitIdem(ctx context.Context, k, hash [32]byte) (Claim, *IdemAnswer, error) {
	for {
		t := f.clk.NewTimer(f.o.Sync)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, nil, ctx.Err()
		case <-t.C():
		}
		c, a, err := f.ClaimIdem(k, hash)
		if err != nil || c != Running {
			return c, a, err
		}
	}
}

// storeScript: KEYS record; ARGV owner, body, ctype, target, raw, ttl (ms).
var storeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'stored', 'body', ARGV[2], 'ctype', ARGV[3], 'target', ARGV[4], 'raw', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
`)

// StoreIdem keeps the answer of a key this replica owns for ttl, before
// the client sees the end of it, so that a resend to any replica finds
// it.
func (f *Fleet) StoreIdem(k [32]byte, a IdemAnswer, ttl time.Duration) {
	key := f.idemKey(k)
	f.unlease(key)
	raw := "0"
	if a.Raw {
		raw = "1"
	}
	// The client waits for this: Timeout, and the time to send the answer.
	ctx, cancel := context.WithTimeout(context.Background(), f.rtt.current()+sendTime(len(a.Body)))
	defer cancel()
	err := storeScript.Run(ctx, f.rdb, []string{key}, f.id, a.Body, a.ContentType, a.Target, raw, ttl.Milliseconds()).Err()
	if f.result("idempotency_store", err) { // "" (no client keys) is bounded as one client
		f.boundIdem(a.Client, key, len(a.Body), ttl)
	}
}

// sendTime is what n bytes take to reach Redis at 64 MiB/s, a pessimistic
// network's pace: the time a call carrying them is given beyond Timeout.
func sendTime(n int) time.Duration { return time.Duration(n) * time.Second / (64 << 20) }

// releaseScript: KEYS record; ARGV owner.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'running' then
  redis.call('DEL', KEYS[1])
end
return 1
`)

// ReleaseIdem frees a key this replica owns whose request kept no answer
// (it was refused, or its client left), so that it can be used again.
func (f *Fleet) ReleaseIdem(k [32]byte) {
	key := f.idemKey(k)
	f.unlease(key)
	ctx, cancel := f.ctx() // the request's end waits for it
	defer cancel()
	f.result("idempotency_release", releaseScript.Run(ctx, f.rdb, []string{key}, f.id).Err())
}

func (f *Fleet) unlease(key string) {
	f.leases.mu.Lock()
	delete(f.leases.keys, key)
	f.leases.mu.Unlock()
}

// renewScript: KEYS record; ARGV owner, lease (ms). Only a running record
// of this replica's is renewed: a stored one keeps its TTL.
var renewScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'running' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
`)

// renewLeases adds to pipe the renewal of every running record this
// replica owns.
func (f *Fleet) renewLeases(pipe redis.Pipeliner, ctx context.Context) {
	f.leases.mu.Lock()
	defer f.leases.mu.Unlock()
	ms := strconv.FormatInt(f.o.Lease.Milliseconds(), 10)
	for key := range f.leases.keys {
		renewScript.Eval(ctx, pipe, []string{key}, f.id, ms)
	}
}
