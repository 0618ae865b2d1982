package keys

import (
	"context"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func openRedis(t *testing.T, url string, o Options) *Store {
	t.Helper()
	opt, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	o.Redis, o.Prefix = rdb, "test:"
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// waitFor polls cond, bounded; it is the message's arrival that is
// awaited, not a time that is asserted.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: not seen within 5s", what)
}

// With pub/sub, a key minted on one replica is seen by the other as soon
// as the message arrives; names are unique across the fleet.
func TestRedisStoreFollowsMessages(t *testing.T) {
	srv := redistest.Start(t)
	a, b := openRedis(t, srv.URL(), Options{}), openRedis(t, srv.URL(), Options{})
	ctx := context.Background()
	r, token, err := a.Mint(ctx, Spec{Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the key on the other replica", func() bool { return b.Snapshot().Lookup(token) != nil })
	if _, _, err := b.Mint(ctx, Spec{Name: "web"}); err != ErrNameTaken {
		t.Fatalf("the same name minted on another replica: %v", err)
	}
	if err := b.Revoke(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the revocation on the first replica", func() bool { return a.Snapshot().Lookup(token) == nil })
	if !a.Snapshot().Sealed() || !openRedis(t, srv.URL(), Options{}).Snapshot().Sealed() {
		t.Fatal("the fleet opened when its last key was revoked")
	}
}

// Without the message (lost), the poll finds the change: a revoked key
// is refused after one poll interval of the replica's clock, at most 1 s.
func TestRedisStorePollCatchesLostMessages(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	a := openRedis(t, srv.URL(), Options{})
	b := openRedis(t, srv.URL(), Options{Clock: clk, noPubSub: true})
	ctx := context.Background()
	r, token, err := a.Mint(ctx, Spec{Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Snapshot().Lookup(token) != nil {
		t.Fatal("seen before any poll (no message was to arrive)")
	}
	clk.WaitForTimers(1)
	clk.Advance(500 * time.Millisecond)
	waitFor(t, "the key after a poll", func() bool { return b.Snapshot().Lookup(token) != nil })
	if err := a.Revoke(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	clk.WaitForTimers(1)
	clk.Advance(500 * time.Millisecond)
	waitFor(t, "the revocation after a poll", func() bool { return b.Snapshot().Lookup(token) == nil })
}

// Two replicas changing one key at once lose neither change.
func TestRedisChangeConflict(t *testing.T) {
	srv := redistest.Start(t)
	a, b := openRedis(t, srv.URL(), Options{}), openRedis(t, srv.URL(), Options{})
	ctx := context.Background()
	r, _, _ := a.Mint(ctx, Spec{Name: "web"})
	waitFor(t, "the key on b", func() bool { return b.Snapshot().Get(r.ID) != nil })
	rpm, tpm := 5, 500
	if _, _, err := a.Change(ctx, r.ID, Patch{Limits: &PatchLimits{RPM: &rpm}}); err != nil {
		t.Fatal(err)
	}
	// b may not have seen a's change yet: its write conflicts, is retried.
	if _, _, err := b.Change(ctx, r.ID, Patch{Limits: &PatchLimits{TPM: &tpm}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both changes", func() bool {
		g := a.Snapshot().Get(r.ID)
		return g != nil && g.Limits == Limits{RPM: 5, TPM: 500}
	})
}
