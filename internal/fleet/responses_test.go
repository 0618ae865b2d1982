package fleet

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/responses"
)

// storedOf is a response of owner numbered n, padded to about pad bytes.
func storedOf(owner string, n, pad int) responses.Stored {
	id := "resp_" + strconv.FormatInt(int64(n)+0x1000_0000, 16)
	return responses.Stored{ID: id, Owner: owner, Created: start,
		Response: []byte(`{"id":"` + id + `","object":"response","pad":"` + strings.Repeat("x", pad) + `"}`),
		Input:    []responses.Item{{Type: "message", Role: "user", Content: []responses.Part{{Type: "input_text", Text: "hi"}}}}}
}

// A response stored on one replica is found, and deleted, on another;
// with Redis hung each replica finds what it stored itself.
func TestSharedResponseStore(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false, func(o *Options) { o.Timeout = 200 * time.Millisecond })
	a := fs[0].ResponseStore(responses.NewMemoryStore(0, 0), ResponseOptions{TTL: time.Hour})
	b := fs[1].ResponseStore(responses.NewMemoryStore(0, 0), ResponseOptions{TTL: time.Hour})
	st := responses.Stored{ID: "resp_0a1b", Owner: "web", Response: []byte(`{"id":"resp_0a1b","object":"response"}`),
		Input: []responses.Item{{Type: "message", Role: "user", Content: []responses.Part{{Type: "input_text", Text: "hi"}}}}, Created: time.Unix(1_800_000_000, 0)}
	if err := a.Put(st); err != nil {
		t.Fatal(err)
	}
	got, ok := b.Get("web", "resp_0a1b")
	if !ok || got.Owner != "web" || string(got.Response) != string(st.Response) || len(got.Input) != 1 || got.Input[0].Content[0].Text != "hi" {
		t.Fatalf("on the other replica: %v %+v", ok, got)
	}
	if _, ok := b.Get("batch", "resp_0a1b"); ok {
		t.Error("another owner finds it")
	}
	for _, id := range []string{"resp_0A1B", "../resp_0a1b", "resp_", "resp_0a1b}"} {
		if _, ok := b.Get("web", id); ok {
			t.Errorf("%q found", id)
		}
	}
	s := a.(*responseStore)
	if ttl := fs[0].rdb.PTTL(t.Context(), s.ownerTag("web")+"resp_0a1b").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("kept for %v, want at most the hour asked", ttl)
	}
	if b.Delete("batch", "resp_0a1b") {
		t.Fatal("another owner deleted it")
	}
	if !b.Delete("web", "resp_0a1b") {
		t.Fatal("delete on the other replica found nothing")
	}
	for name, r := range map[string]responses.Store{"the deleting replica": b, "the storing replica": a} {
		if _, ok := r.Get("web", "resp_0a1b"); ok {
			t.Errorf("found after delete on %s", name)
		}
	}
	srv.Pause()
	st.ID = "resp_0c"
	if err := a.Put(st); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Get("web", "resp_0c"); !ok {
		t.Error("with Redis hung, the replica that stored a response does not find it")
	}
	srv.Resume()
	if _, ok := a.Get("web", "resp_0c"); !ok {
		t.Error("once Redis is back, the replica that stored a response while it was hung does not find it")
	}
}

// A response over either bound alone is stored nowhere.
func TestSharedResponseTooLarge(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 1, false)
	local := responses.NewMemoryStore(0, 1<<30)
	s := fs[0].ResponseStore(local, ResponseOptions{MaxBytes: 8 << 20})
	for _, pad := range []int{MaxSharedResponse, 8<<20 + 1} {
		st := storedOf("web", pad, pad)
		if err := s.Put(st); !errors.Is(err, responses.ErrTooLarge) {
			t.Errorf("a response of %d bytes: %v, want ErrTooLarge", pad, err)
		}
		if _, ok := local.Get("web", st.ID); ok {
			t.Errorf("a response of %d bytes the fleet refused is kept on the replica", pad)
		}
	}
	small := fs[0].ResponseStore(local, ResponseOptions{MaxBytes: 1000})
	if err := small.Put(storedOf("web", 1, 1000)); !errors.Is(err, responses.ErrTooLarge) {
		t.Errorf("a response over the owner's byte bound: %v, want ErrTooLarge", err)
	}
}

// ownerState is what Redis holds of one owner's responses: the bytes of
// each response key, read by scanning (so that a key the index lost is
// counted too), the index's ids and the total it counts.
type ownerState struct {
	keys  map[string]int64
	index []string
	total int64
}

func readOwner(t *testing.T, s *responseStore, owner string) ownerState {
	t.Helper()
	ctx := context.Background()
	tag := s.ownerTag(owner)
	st := ownerState{keys: map[string]int64{}}
	for _, key := range scanAll(t, s, tag+"resp_*") {
		st.keys[strings.TrimPrefix(key, tag)] = s.f.rdb.StrLen(ctx, key).Val()
	}
	st.index = s.f.rdb.ZRange(ctx, tag+"i", 0, -1).Val()
	st.total, _ = s.f.rdb.HGet(ctx, tag+"s", "_total").Int64()
	return st
}

// check fails unless the owner's state is within the bounds and its
// index counts exactly its keys.
func (st ownerState) check(t *testing.T, owner string, o ResponseOptions) {
	t.Helper()
	var bytes int64
	for _, n := range st.keys {
		bytes += n
	}
	if len(st.keys) > o.MaxEntries || bytes > o.MaxBytes {
		t.Errorf("%q holds %d responses of %d bytes in Redis, bounds %d and %d", owner, len(st.keys), bytes, o.MaxEntries, o.MaxBytes)
	}
	if len(st.index) != len(st.keys) || st.total != bytes {
		t.Errorf("%q: the index counts %d responses of %d bytes, Redis holds %d of %d", owner, len(st.index), st.total, len(st.keys), bytes)
	}
	for _, id := range st.index {
		if _, ok := st.keys[id]; !ok {
			t.Errorf("%q: the index lists %s, which Redis does not hold", owner, id)
		}
	}
}

// scanAll returns the keys matching pattern, on every master of a Cluster.
func scanAll(t *testing.T, s *responseStore, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	scan := func(c redis.Cmdable) error {
		it := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			keys = append(keys, it.Val())
		}
		return it.Err()
	}
	var err error
	if cc, ok := s.f.rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(c)
		})
	} else {
		err = scan(s.f.rdb)
	}
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// An owner's responses past its bounds go oldest first, wherever they
// were stored; another owner's stay. An entry whose response expired is
// dropped from the index when a Put comes to it, without counting as
// evicted.
func TestSharedResponsesBoundedPerOwner(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	fs := linked(t, srv, 2, false, func(o *Options) { o.Clock = clk })
	o := ResponseOptions{TTL: time.Hour, MaxEntries: 3, MaxBytes: 1 << 20}
	a := fs[0].ResponseStore(responses.NewMemoryStore(0, 0), o).(*responseStore)
	b := fs[1].ResponseStore(responses.NewMemoryStore(0, 0), o).(*responseStore)
	if err := b.Put(storedOf("other", 100, 10)); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		clk.Advance(time.Millisecond)
		if err := []*responseStore{a, b}[i%2].Put(storedOf("web", i, 10)); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []bool{false, false, true, true, true} {
		if _, ok := b.Get("web", storedOf("web", i, 0).ID); ok != want {
			t.Errorf("response %d found %v, want %v", i, ok, want)
		}
	}
	if _, ok := a.Get("other", storedOf("other", 100, 0).ID); !ok {
		t.Error("another owner's response went")
	}
	readOwner(t, a, "web").check(t, "web", o)

	// The byte bound: each response about 300 KB under 1 MiB keeps three.
	for i := 10; i < 14; i++ {
		clk.Advance(time.Millisecond)
		if err := a.Put(storedOf("web", i, 300_000)); err != nil {
			t.Fatal(err)
		}
	}
	st := readOwner(t, a, "web")
	st.check(t, "web", o)
	if len(st.keys) != 3 {
		t.Errorf("%d responses of 300 KB kept under 1 MiB, want 3", len(st.keys))
	}

	// The oldest has expired (its key is gone): the next Put drops it
	// from the index and keeps the three newest.
	fs[0].rdb.Del(t.Context(), a.ownerTag("web")+storedOf("web", 11, 0).ID)
	clk.Advance(time.Millisecond)
	if err := a.Put(storedOf("web", 20, 10)); err != nil {
		t.Fatal(err)
	}
	st = readOwner(t, a, "web")
	st.check(t, "web", o)
	if len(st.keys) != 3 {
		t.Errorf("after an expiry %d responses kept, want 3: %v", len(st.keys), st.index)
	}
	if ttl := fs[0].rdb.PTTL(t.Context(), a.ownerTag("web")+"i").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("the index is kept %v, want the responses' hour", ttl)
	}

	// Delete keeps the index exact.
	if !b.Delete("web", storedOf("web", 20, 0).ID) {
		t.Fatal("Delete found nothing")
	}
	readOwner(t, a, "web").check(t, "web", o)
}

// owners of the hammer: a hostile client's name that spells key syntax,
// and two others that must not feel it.
var hammerOwners = []string{"evil}:i{resp:", "web", ""}

// A hostile client stores many responses, small and huge, from four
// replicas at once, one of them behind a proxy that holds chunks past its
// timeout (so that some Puts time out while Redis runs them all the
// same), while two other clients store a few each. After it, each
// owner's responses in Redis are within its bounds and counted exactly by
// its index, and the others' are all there.
func TestSharedResponsesHammer(t *testing.T) {
	srv := redistest.Start(t)
	slow := redistest.SlowDown(t, srv)
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	slow.SetDelay(func() time.Duration {
		rngMu.Lock()
		defer rngMu.Unlock()
		switch {
		case rng.IntN(16) == 0: // past even a stored response's patience
			return TimeoutCeiling(2*time.Millisecond) + time.Duration(rng.IntN(30))*time.Millisecond
		case rng.IntN(4) == 0:
			return time.Duration(rng.IntN(8)) * time.Millisecond
		}
		return 0
	})
	var timedOut atomic.Int64
	o := ResponseOptions{TTL: time.Hour, MaxEntries: 8, MaxBytes: 256 << 10}
	fs := linked(t, srv, 3, false)
	fs = append(fs, linkedOn(t, func(t *testing.T) redis.UniversalClient {
		rdb, err := Dial(config.StateURL(slow.URL()), config.Fleet{})
		if err != nil {
			t.Fatal(err)
		}
		return rdb
	}, 1, false, func(o *Options) {
		o.Timeout = 2 * time.Millisecond
		o.OnError = func(string) { timedOut.Add(1) }
	})...)
	stores := make([]*responseStore, len(fs))
	for i, f := range fs {
		stores[i] = f.ResponseStore(responses.NewMemoryStore(0, 1<<30), o).(*responseStore)
	}
	// The others' responses, within their bounds, stored before and
	// during the storm.
	for i, owner := range hammerOwners[1:] {
		for j := range 3 {
			if err := stores[j].Put(storedOf(owner, 1000*(i+1)+j, 1000)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			s := stores[w%len(stores)]
			for i := range 30 {
				n := 100_000 + w*1000 + i
				pad := []int{10, 5_000, 60_000, 200_000, 256 << 10}[(w+i)%5]
				err := s.Put(storedOf(hammerOwners[0], n, pad))
				if err != nil && !errors.Is(err, responses.ErrTooLarge) {
					t.Error(err)
				}
				if i%7 == 0 {
					s.Delete(hammerOwners[0], storedOf("", n-3, 0).ID)
				}
			}
		})
	}
	for i, owner := range hammerOwners[1:] {
		wg.Go(func() {
			if err := stores[1].Put(storedOf(owner, 1000*(i+1)+3, 1000)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	slow.Close() // what it still holds never reaches Redis: the checks read a settled state
	for _, owner := range hammerOwners {
		readOwner(t, stores[0], owner).check(t, owner, o)
	}
	for i, owner := range hammerOwners[1:] {
		for j := range 4 {
			if _, ok := stores[2].Get(owner, storedOf(owner, 1000*(i+1)+j, 0).ID); !ok {
				t.Errorf("%q's response %d went in the storm", owner, j)
			}
		}
		if st := readOwner(t, stores[0], owner); len(st.keys) != 4 {
			t.Errorf("%q holds %d responses, want its 4", owner, len(st.keys))
		}
	}
	if st := readOwner(t, stores[0], hammerOwners[0]); len(st.keys) == 0 {
		t.Error("the hostile client kept nothing: the bound was not exercised")
	}
	if timedOut.Load() == 0 {
		t.Error("no call of the slow replica timed out: the storm was not exercised")
	}
}

// On a Redis Cluster each owner's keys are in one slot: the scripts run,
// and the bounds hold, as on one node.
func TestSharedResponsesOnACluster(t *testing.T) {
	c := redistest.StartCluster(t)
	fs := linkedOn(t, cluster(c), 2, false)
	o := ResponseOptions{TTL: time.Hour, MaxEntries: 4, MaxBytes: 1 << 20}
	a := fs[0].ResponseStore(responses.NewMemoryStore(0, 0), o).(*responseStore)
	b := fs[1].ResponseStore(responses.NewMemoryStore(0, 0), o).(*responseStore)
	owners := []string{"web", "batch", "mobile", "{x}"}
	for i := range 24 {
		owner := owners[i%len(owners)]
		if err := []*responseStore{a, b}[i%2].Put(storedOf(owner, i, 100)); err != nil {
			t.Fatal(err)
		}
	}
	for _, owner := range owners {
		st := readOwner(t, a, owner)
		st.check(t, owner, o)
		if len(st.keys) != 4 {
			t.Errorf("%q holds %d responses, want 4", owner, len(st.keys))
		}
	}
	if _, ok := a.Get("web", storedOf("web", 20, 0).ID); !ok {
		t.Error("a response stored on the other replica is not found")
	}
	if !a.Delete("web", storedOf("web", 20, 0).ID) {
		t.Error("Delete found nothing")
	}
	readOwner(t, a, "web").check(t, "web", o)
}

// With Redis down each replica stores and finds its own, and after Redis
// comes back (empty) the fleet's bound applies again.
func TestSharedResponsesRedisDown(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false, func(o *Options) { o.Timeout = 200 * time.Millisecond })
	o := ResponseOptions{TTL: time.Hour, MaxEntries: 2, MaxBytes: 1 << 20}
	a := fs[0].ResponseStore(responses.NewMemoryStore(0, 0), o).(*responseStore)
	b := fs[1].ResponseStore(responses.NewMemoryStore(0, 0), o).(*responseStore)
	srv.Stop()
	if err := a.Put(storedOf("web", 1, 10)); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Get("web", storedOf("web", 1, 0).ID); !ok {
		t.Error("with Redis down the replica that stored a response does not find it")
	}
	if _, ok := b.Get("web", storedOf("web", 1, 0).ID); ok {
		t.Error("with Redis down another replica finds it")
	}
	srv.Restart()
	if _, ok := a.Get("web", storedOf("web", 1, 0).ID); !ok {
		t.Error("after Redis came back the replica that stored a response while it was down does not find it")
	}
	for i := 2; i < 6; i++ {
		if err := b.Put(storedOf("web", i, 10)); err != nil {
			t.Fatal(err)
		}
	}
	st := readOwner(t, a, "web")
	st.check(t, "web", o)
	if len(st.keys) != 2 {
		t.Errorf("after Redis came back %q holds %d responses, want 2", "web", len(st.keys))
	}
}
