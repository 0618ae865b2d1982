package keys

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/redis/go-redis/v9"
)

// Options configure a Store. Exactly one of File and Redis is set.
type Options struct {
	// File is the JSON file the keys are kept in (written atomically,
	// mode 0600), for a gateway with state: memory.
	File string
	// Redis holds the keys of a fleet (state: redis://…); Prefix starts
	// every Redis key and channel name.
	Redis  redis.UniversalClient
	Prefix string
	// Poll is how often a fleet's replica checks the keys' version, in
	// case a change's message was lost. 0: 500ms.
	Poll time.Duration
	// Clock is the time source. nil: the system clock.
	Clock clock.Clock
	// OnChange, if set, is told of each new snapshot (after a change here
	// or, in a fleet, on another replica). It must not block.
	OnChange func(*Snapshot)

	// noPubSub leaves the messages out, so that only the poll follows
	// other replicas (tests of the poll).
	noPubSub bool
}

// Store is the minted keys. It is safe for concurrent use.
type Store struct {
	o    Options
	clk  clock.Clock
	b    backend
	snap atomic.Pointer[Snapshot]
	// mu serialises refreshes, so that an older read never replaces a
	// newer snapshot.
	mu   sync.Mutex
	stop chan struct{}
	done chan struct{}
}

// Snapshot is the keys at one moment; read-only.
type Snapshot struct {
	byHash map[[32]byte]*Record
	byID   map[string]*Record
	sealed bool
}

// Lookup returns the record of token, or nil. The token is hashed and
// the hash looked up: the lookup's timing depends on the hash, which
// tells nothing of a token near the one sent.
func (s *Snapshot) Lookup(token string) *Record {
	if !strings.HasPrefix(token, tokenPrefix) {
		return nil
	}
	return s.byHash[Sum(token)]
}

// Get returns the record id, or nil.
func (s *Snapshot) Get(id string) *Record { return s.byID[id] }

// List returns the records, by name.
func (s *Snapshot) List() []Record {
	out := make([]Record, 0, len(s.byID))
	for _, r := range s.byID {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Len is how many keys there are.
func (s *Snapshot) Len() int { return len(s.byID) }

// Sealed reports whether a key was ever minted: a gateway with minted
// keys, or one whose last was revoked, is never open.
func (s *Snapshot) Sealed() bool { return s.sealed || len(s.byID) > 0 }

func newSnapshot(recs []Record, sealed bool) *Snapshot {
	s := &Snapshot{byHash: make(map[[32]byte]*Record, len(recs)), byID: make(map[string]*Record, len(recs)), sealed: sealed}
	for i := range recs {
		r := &recs[i]
		var h [32]byte
		if n, err := decodeHash(r.Hash, h[:]); err == nil && n == 32 {
			s.byHash[h] = r
		}
		s.byID[r.ID] = r
	}
	return s
}

// Open reads the keys and, in a fleet, starts following other replicas'
// changes until Close.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	s := &Store{o: o, clk: clock.Or(o.Clock)}
	switch {
	case o.Redis != nil:
		s.b = newRedisBackend(o.Redis, o.Prefix)
	case o.File != "":
		s.b = &fileBackend{path: o.File}
	default:
		return nil, errors.New("keys: neither a file nor Redis to keep the keys in")
	}
	if err := s.Refresh(ctx); err != nil {
		return nil, err
	}
	if rb, ok := s.b.(*redisBackend); ok {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.follow(rb)
	}
	return s, nil
}

// Close stops following the fleet's changes.
func (s *Store) Close() {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
}

// Snapshot returns the keys in force.
func (s *Store) Snapshot() *Snapshot { return s.snap.Load() }

// Refresh reads the keys again.
func (s *Store) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, sealed, err := s.b.load(ctx)
	if err != nil {
		return err
	}
	snap := newSnapshot(recs, sealed)
	s.snap.Store(snap)
	if s.o.OnChange != nil {
		s.o.OnChange(snap)
	}
	return nil
}

// Mint creates a key for spec and returns its record and its token: the
// one time the token is known.
func (s *Store) Mint(ctx context.Context, spec Spec) (Record, string, error) {
	now := s.clk.Now().UTC()
	token := newToken()
	sum := Sum(token)
	r := Record{ID: newID(), Name: spec.Name, Hash: encodeHash(sum[:]), Hint: hint(token), Models: spec.Models,
		Limits: spec.Limits, Budget: spec.Budget, Weight: max(spec.Weight, 1), Created: now, Updated: now, Rev: 1}
	if err := s.b.create(ctx, r); err != nil {
		return Record{}, "", err
	}
	return r, token, s.Refresh(ctx)
}

// Change applies p to the key id and returns the record, with its new
// token when p rotates it ("" otherwise). A change that races another
// replica's is tried again on the newer record.
func (s *Store) Change(ctx context.Context, id string, p Patch) (Record, string, error) {
	for try := 0; ; try++ {
		cur := s.Snapshot().Get(id)
		if cur == nil {
			return Record{}, "", ErrNotFound
		}
		r, token := p.apply(*cur, s.clk.Now().UTC())
		err := s.b.replace(ctx, r)
		if errors.Is(err, ErrConflict) && try < 50 {
			if err := s.Refresh(ctx); err != nil {
				return Record{}, "", err
			}
			continue
		}
		if err != nil {
			return Record{}, "", err
		}
		return r, token, s.Refresh(ctx)
	}
}

// Revoke deletes the key id: from the next request on it is refused
// (on every replica of a fleet within a second). Requests it let in
// before finish.
func (s *Store) Revoke(ctx context.Context, id string) error {
	if err := s.b.remove(ctx, id); err != nil {
		return err
	}
	return s.Refresh(ctx)
}

// follow keeps a fleet replica's snapshot current: at once on another
// replica's message, and every Poll in case a message was lost.
func (s *Store) follow(rb *redisBackend) {
	defer close(s.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var msgs <-chan *redis.Message
	if !s.o.noPubSub {
		sub := rb.subscribe(ctx)
		defer sub.Close()
		msgs = sub.Channel()
	}
	t := s.clk.NewTimer(s.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-msgs:
			s.refreshQuietly(ctx)
		case <-t.C():
			if rb.stale(ctx) {
				s.refreshQuietly(ctx)
			}
			t.Reset(s.o.Poll)
		}
	}
}

// refreshQuietly refreshes, keeping the snapshot it has when Redis
// cannot answer (the next poll tries again).
func (s *Store) refreshQuietly(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = s.Refresh(ctx)
}
