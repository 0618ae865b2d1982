package fleet

import (
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// An idempotency key claimed by a replica that died (it stopped renewing
// the lease) is free again after the lease; one kept is replayed from any
// replica, and never for another body.
func TestIdempotencyRecords(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false, func(o *Options) { o.Lease = time.Second })
	a, b := fs[0], fs[1]
	k, h, other := [32]byte{1}, [32]byte{2}, [32]byte{3}
	if c, _, err := a.ClaimIdem(k, h); err != nil || c != Owner {
		t.Fatalf("first claim: %v %v", c, err)
	}
	if c, _, _ := b.ClaimIdem(k, h); c != Running {
		t.Fatalf("a claim beside a running one: %v, want Running", c)
	}
	if c, _, _ := b.ClaimIdem(k, other); c != Conflict {
		t.Fatalf("another body: %v, want Conflict", c)
	}
	a.unlease(a.idemKey(k)) // a dies: nobody renews its lease
	waitFor(t, "the dead replica's lease to expire", func() bool {
		c, _, _ := b.ClaimIdem(k, h)
		return c == Owner
	})
	b.StoreIdem(k, IdemAnswer{Body: []byte(`{"id":"x"}`), ContentType: "application/json", Target: "p/m"}, time.Hour)
	c, ans, _ := a.ClaimIdem(k, h)
	if c != Stored || string(ans.Body) != `{"id":"x"}` || ans.Target != "p/m" || ans.Raw {
		t.Fatalf("after the store: %v %+v", c, ans)
	}
	// A live owner's lease is renewed past Lease while its request runs.
	k2 := [32]byte{4}
	if c, _, _ := a.ClaimIdem(k2, h); c != Owner {
		t.Fatal("claim k2")
	}
	// As if most of the lease had run out: a's sync round renews it.
	key := a.idemKey(k2)
	a.rdb.PExpire(t.Context(), key, a.o.Lease/4) // still there when the round runs on a loaded machine
	a.sync()
	if ttl := a.rdb.PTTL(t.Context(), key).Val(); ttl < a.o.Lease/2 {
		t.Errorf("a running request's lease was not renewed: %v left", ttl)
	}
	if c, _, _ := b.ClaimIdem(k2, h); c != Running {
		t.Errorf("a running request's key was freed while its replica lived: %v", c)
	}
	a.ReleaseIdem(k2)
	if c, _, _ := b.ClaimIdem(k2, h); c != Owner {
		t.Errorf("a released key: %v, want Owner", c)
	}
}

// A client's records in Redis are bounded in count and bytes: past either
// its oldest go, and another client's records are never touched.
func TestIdempotencyRecordsBoundedPerClient(t *testing.T) {
	srv := redistest.Start(t)
	f := linked(t, srv, 1, false, func(o *Options) { o.IdemRecords, o.IdemClientBytes = 3, 1000 })[0]
	h := [32]byte{0xff}
	store := func(k [32]byte, client string, size int) {
		t.Helper()
		if c, _, err := f.ClaimIdem(k, h); err != nil || c != Owner {
			t.Fatalf("claim %x: %v %v", k[0], c, err)
		}
		f.StoreIdem(k, IdemAnswer{Body: make([]byte, size), Client: client}, time.Hour)
		f.sync() // indexes it, and deletes what the bound evicts
	}
	stored := func(k [32]byte) bool {
		c, _, _ := f.ClaimIdem(k, h)
		if c == Owner {
			f.ReleaseIdem(k)
		}
		return c == Stored
	}
	store([32]byte{100}, "other", 10)
	for i := range byte(5) {
		store([32]byte{i}, "hostile", 10)
	}
	for i := range byte(5) {
		if want := i >= 2; stored([32]byte{i}) != want {
			t.Errorf("record %d of 5, bound 3: stored %v, want %v", i+1, !want, want)
		}
	}
	if !stored([32]byte{100}) {
		t.Error("another client's record went with the hostile client's")
	}
	store([32]byte{9}, "hostile", 900)  // 20 + 900 fits 1000 ...
	store([32]byte{10}, "hostile", 900) // ... and this does not: the older go
	if stored([32]byte{9}) || !stored([32]byte{10}) {
		t.Error("past the byte bound, the oldest records did not go first")
	}
	if !stored([32]byte{100}) {
		t.Error("another client's record went past the byte bound")
	}
}
