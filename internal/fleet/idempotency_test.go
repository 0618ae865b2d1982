package fleet

import (
	"log/slog"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// An idempotency key claimed by a replica that died (it stopped renewing
// the lease) is free again after the lease; one kept is replayed from any
// replica, and never for another body.
func TestIdempotencyRecords(t *testing.T) {
	srv := redistest.Start(t)
	var fs []*Fleet
	for range 2 {
		rdb, err := Dial(config.StateURL(srv.URL()), config.Fleet{})
		if err != nil {
			t.Fatal(err)
		}
		f := New(Options{Client: rdb, Timeout: 2 * time.Second, Sync: 10 * time.Millisecond, Lease: 300 * time.Millisecond,
			Log: slog.New(slog.DiscardHandler)})
		f.Start()
		t.Cleanup(func() { f.Close(); rdb.Close() })
		fs = append(fs, f)
	}
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
	// Redis expires keys on its own clock, which no test can drive: wait
	// out three leases; the record outlives them only by renewal.
	time.Sleep(3 * a.o.Lease)
	if c, _, _ := b.ClaimIdem(k2, h); c != Running {
		t.Errorf("a running request's key was freed while its replica lived: %v", c)
	}
	a.ReleaseIdem(k2)
	if c, _, _ := b.ClaimIdem(k2, h); c != Owner {
		t.Errorf("a released key: %v, want Owner", c)
	}
}
