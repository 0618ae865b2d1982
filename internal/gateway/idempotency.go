package gateway

import (
	"cmp"
	"crypto/sha256"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/cache"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/fleet"
	"github.com/fuseboxhq/fusebox/internal/lru"
	"github.com/fuseboxhq/fusebox/internal/sse"
)

// idempotency keeps the answers to requests that carry an Idempotency-Key,
// per client: the same key and body get the stored answer byte for byte;
// concurrent duplicates wait for the first; the same key with another body
// is refused. Only complete successful answers are kept, so a refused
// request (throttle, outage, no target) can be retried under its key.
// Records are bounded per client, in number and bytes, and a client's new
// records only ever push out its own oldest (internal/lru).
type idempotency struct {
	clk     clock.Clock
	records *lru.Set[[32]byte, *idemRecord]

	// mu guards ttl, maxBytes and the records' answers (stored and the
	// fields after it) until their done is closed.
	mu       sync.Mutex
	ttl      time.Duration
	maxBytes int64
}

// idemRecord is one key's request and, once done, its answer.
type idemRecord struct {
	hash    [32]byte
	done    chan struct{} // closed when the first request has finished
	stored  bool          // an answer was kept (the fields below are set)
	raw     bool          // body is the answer exactly as sent, stream or not
	ctype   string
	target  string
	body    []byte
	expires time.Time
}

// maxIdemKey is the longest Idempotency-Key accepted: keys are ids, and a
// long one would only cost memory.
const maxIdemKey = 255

// idemOverhead is what a record costs besides its answer, for the bounds.
const idemOverhead = 256

func newIdempotency(c config.Idempotency, clk clock.Clock) *idempotency {
	s := &idempotency{clk: clock.Or(clk), records: lru.New[[32]byte, *idemRecord](0, 0)}
	s.configure(c)
	return s
}

// configure sets the TTL and bounds; answers already kept keep their
// expiry.
func (s *idempotency) configure(c config.Idempotency) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ttl = cmp.Or(c.TTL, 24*time.Hour)
	s.maxBytes = int64(cmp.Or(c.MaxBytes, 4<<20))
	s.records.SetLimits(idemBounds(c))
}

// idemBounds returns the bounds of a client's records: how many, and how
// many bytes of answers. The fleet holds each client to the same in Redis.
func idemBounds(c config.Idempotency) (records int, bytes int64) {
	return cmp.Or(c.MaxRecords, 10_000), int64(cmp.Or(c.MaxClientBytes, 64<<20))
}

// keepFor returns how long an answer is kept.
func (s *idempotency) keepFor() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ttl
}

// maxAnswer returns the largest answer kept.
func (s *idempotency) maxAnswer() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxBytes
}

// idemKey is where a client's key for an endpoint is kept: the two are
// part of it, so neither another client nor another endpoint (chat and
// embeddings) can meet its answer.
func idemKey(client, endpoint, key string) [32]byte {
	return sha256.Sum256([]byte(client + "\x00" + endpoint + "\x00" + key))
}

// begin claims key k of client for a request with body. It returns the
// record and whether the caller owns it (must run the request and call
// end); a non-owner waits on rec.done. conflict reports the key in use
// with another body.
func (s *idempotency) begin(client string, k [32]byte, body []byte) (rec *idemRecord, owner, conflict bool) {
	hash := sha256.Sum256(body)
	now := s.clk.Now()
	if r, ok := s.records.Get(k); ok {
		s.mu.Lock() // end writes stored and expires under it
		expired := r.stored && !now.Before(r.expires)
		s.mu.Unlock()
		if !expired {
			if r.hash != hash {
				return nil, false, true
			}
			return r, false, false
		}
		s.records.Delete(k) // expired
	}
	r := &idemRecord{hash: hash, done: make(chan struct{})}
	s.records.Put(client, k, r, idemOverhead)
	return r, true, false
}

// end finishes the owner's request: a complete answer is kept until the
// TTL (within the client's bounds); anything else is forgotten so the key
// can be used again.
//
// raw marks a body kept exactly as it was sent (a Messages answer, stream
// or not), replayed byte for byte; otherwise it is a chat.completion,
// replayed as a stream when one is asked for.
func (s *idempotency) end(client string, k [32]byte, r *idemRecord, body []byte, ctype, target string, raw bool) {
	s.mu.Lock()
	keep := body != nil && int64(len(body)) <= s.maxBytes
	if keep {
		r.stored, r.raw, r.body, r.ctype, r.target = true, raw, body, ctype, target
		r.expires = s.clk.Now().Add(s.ttl)
	}
	s.mu.Unlock()
	cur, ok := s.records.Get(k)
	switch {
	case keep && ok && cur == r:
		s.records.Put(client, k, r, idemOverhead+int64(len(body))) // its size now
	case !keep && ok && cur == r:
		s.records.Delete(k)
	}
	close(r.done)
}

// idempotent runs the idempotency protocol for a request with a key. It
// reports true when the request has been answered (a replay, a conflict,
// or the client gone while waiting); otherwise the exchange runs and
// reports its answer through keep.
func (x *exchange) idempotent(body []byte) bool {
	key := x.r.Header.Get("Idempotency-Key")
	if key == "" || x.s.idem == nil {
		return false
	}
	if len(key) > maxIdemKey {
		x.error(http.StatusBadRequest, "invalid_request_error", "idempotency_key_too_long", "",
			"The Idempotency-Key is "+strconv.Itoa(len(key))+" bytes long; the limit is "+strconv.Itoa(maxIdemKey)+".")
		return true
	}
	scoped := idemKey(x.client, x.r.URL.Path, key)
	for {
		rec, owner, conflict := x.s.idem.begin(x.client, scoped, body)
		switch {
		case conflict:
			x.idemConflict(key)
			return true
		case owner:
			x.idemKey, x.idemRec = scoped, rec
			return x.s.fleet != nil && x.idemFleet(key, body)
		}
		select {
		case <-rec.done:
		case <-x.r.Context().Done():
			return true
		}
		if rec.stored {
			x.replay(rec)
			return true
		}
		// The first request was refused and not kept: this one goes ahead.
	}
}

// idemFleet runs the protocol with the fleet's record of the key, for a
// request that owns it on this replica: another replica's kept answer is
// replayed (and kept here for local duplicates), one running elsewhere is
// waited for, another body is refused. It reports true when the request
// has been answered. Without Redis the replica's own record decides.
func (x *exchange) idemFleet(key string, body []byte) bool {
	hash := sha256.Sum256(body)
	c, a, err := x.s.fleet.ClaimIdem(x.idemKey, hash)
	if err == nil && c == fleet.Running {
		if h := x.s.testHookIdemWait; h != nil {
			h()
		}
		c, a, err = x.s.fleet.WaitIdem(x.r.Context(), x.idemKey, hash)
	}
	switch {
	case err != nil && x.r.Context().Err() != nil:
		x.idemEnd(nil, "", "", false) // the client left while waiting
		return true
	case err != nil:
		return false // Redis unreachable: this replica's record decides
	case c == fleet.Owner:
		x.idemShared = true
		return false
	case c == fleet.Conflict:
		x.idemEnd(nil, "", "", false)
		x.idemConflict(key)
		return true
	case c == fleet.Stored:
		x.idemEnd(a.Body, a.ContentType, a.Target, a.Raw) // kept here too, for local duplicates
		x.replay(&idemRecord{stored: true, raw: a.Raw, body: a.Body, ctype: a.ContentType, target: a.Target})
		return true
	}
	return false // Running again: the record changed hands; run it here
}

// idemConflict refuses a key already used with another body.
func (x *exchange) idemConflict(key string) {
	x.error(http.StatusUnprocessableEntity, "invalid_request_error", "idempotency_key_reused", "",
		"The Idempotency-Key "+strconv.Quote(key)+" was already used with a different request body. Use a new key for a new request.")
}

// replay writes a stored answer again, as a stream if one was asked for.
func (x *exchange) replay(rec *idemRecord) {
	h := x.w.Header()
	h.Set("X-Fusebox-Idempotent-Replay", "true")
	if !rec.raw {
		x.writeEntry(cache.Entry{Body: rec.body, ContentType: rec.ctype, Target: rec.target})
		return
	}
	h.Set("X-Fusebox-Target", rec.target)
	x.localHeaders()
	if rec.ctype == "text/event-stream" {
		sse.SetHeaders(h)
	} else {
		h.Set("Content-Type", rec.ctype)
		h.Set("Content-Length", strconv.Itoa(len(rec.body)))
	}
	x.w.WriteHeader(http.StatusOK)
	x.w.Write(rec.body)
}

// captureForReplay starts copying the answer as it is sent when this
// request owns an idempotency key: a Messages answer is kept as it was
// sent.
func (x *exchange) captureForReplay() {
	if x.idemRec != nil {
		x.rec.capture(x.s.idem.maxAnswer())
	}
}

// keepSent stores the answer sent, as captured, for replays of this
// request's idempotency key.
func (x *exchange) keepSent(contentType, target string) {
	if x.idemRec == nil {
		return
	}
	if body := x.rec.copied(); body != nil {
		x.idemEnd(body, contentType, target, true)
	}
}

// idemEnd ends this request's hold on its idempotency key, if it owns
// one: body (nil: nothing kept, the key is free again) is kept here and,
// with a fleet, for every replica, before the client sees its end.
func (x *exchange) idemEnd(body []byte, ctype, target string, raw bool) {
	if x.idemRec == nil {
		return
	}
	if x.idemShared {
		if body != nil && int64(len(body)) <= x.s.idem.maxAnswer() {
			x.s.fleet.StoreIdem(x.idemKey, fleet.IdemAnswer{Body: body, ContentType: ctype, Target: target, Raw: raw, Client: x.client}, x.s.idem.keepFor())
		} else {
			x.s.fleet.ReleaseIdem(x.idemKey)
		}
	}
	x.s.idem.end(x.client, x.idemKey, x.idemRec, body, ctype, target, raw)
	x.idemRec = nil
}
