package fleet

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// replica is one process of a test fleet: its link and one target's
// breaker.
type replica struct {
	f      *Fleet
	b      *breaker.Breaker
	health chan bool
	logs   *syncBuffer
	events chan breaker.Transition
}

// dialer returns a new client of one Redis (a node or a Cluster).
type dialer func(t *testing.T) redis.UniversalClient

// node dials srv.
func node(srv *redistest.Server) dialer {
	return func(t *testing.T) redis.UniversalClient {
		rdb, err := Dial(config.StateURL(srv.URL()), config.Fleet{})
		if err != nil {
			t.Fatal(err)
		}
		return rdb
	}
}

// cluster dials c as a Redis Cluster.
func cluster(c *redistest.Cluster) dialer {
	return func(t *testing.T) redis.UniversalClient {
		addrs := c.Addrs()
		rdb, err := Dial(config.StateURL("redis://"+addrs[0]), config.Fleet{Cluster: true, Addrs: addrs[1:]})
		if err != nil {
			t.Fatal(err)
		}
		return rdb
	}
}

// sentinel dials the master s's Sentinel watches.
func sentinel(s *redistest.Sentinel) dialer {
	return func(t *testing.T) redis.UniversalClient {
		rdb, err := Dial(config.StateURL("redis://"+s.Sentinel.Addr), config.Fleet{MasterName: s.Name})
		if err != nil {
			t.Fatal(err)
		}
		return rdb
	}
}

// fleetOf starts n replicas sharing target "p/m" through srv; their
// breakers run on clk, each with cfg.
func fleetOf(t *testing.T, srv *redistest.Server, clk *clocktest.Clock, n int, cfg breaker.Config) []*replica {
	t.Helper()
	return fleetOn(t, node(srv), clk, n, cfg, 50*time.Millisecond)
}

// fleetOn is fleetOf on any Redis, each call to it bounded by timeout.
func fleetOn(t *testing.T, dial dialer, clk *clocktest.Clock, n int, cfg breaker.Config, timeout time.Duration) []*replica {
	t.Helper()
	var rs []*replica
	for range n {
		rdb := dial(t)
		r := &replica{health: make(chan bool, 16), logs: &syncBuffer{}, events: make(chan breaker.Transition, 64)}
		r.f = New(Options{Client: rdb, Timeout: timeout, Sync: 10 * time.Millisecond,
			Log: slog.New(slog.NewTextHandler(r.logs, nil)), OnHealth: func(up bool) { r.health <- up }})
		bc := cfg
		bc.Name, bc.Clock = "p/m", clk
		bc.OnStateChange = func(tr breaker.Transition) { r.events <- tr }
		attach := r.f.Join("p/m", &bc)
		var err error
		if r.b, err = breaker.New(bc); err != nil {
			t.Fatal(err)
		}
		attach(r.b)
		r.f.Start()
		t.Cleanup(func() { r.f.Close(); rdb.Close() })
		rs = append(rs, r)
	}
	return rs
}

// waitFor polls cond until it holds; the bound is generous, for a loaded
// machine: what is asserted is that it happens, not how fast.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cond()
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func fail(b *breaker.Breaker) bool {
	p, err := b.Allow()
	if err != nil {
		return false
	}
	p.Failure()
	return true
}

func succeed(b *breaker.Breaker) bool {
	p, err := b.Allow()
	if err != nil {
		return false
	}
	p.Success()
	return true
}

// start is the tests' "now": the real hour, as Redis expires records by
// the real clock. A fixed date passed on that day only and failed on every
// later one, its day's records expired the moment they were written.
var start = time.Now().UTC().Truncate(time.Hour)

// A trip on one replica opens the breaker on every other, with the same
// open-until deadline, though they saw no failure.
func TestTripReachesEveryReplica(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	rs := fleetOf(t, srv, clk, 3, breaker.Config{ConsecutiveFailures: 3, OpenDuration: 10 * time.Second})
	for range 3 {
		fail(rs[0].b)
	}
	if rs[0].b.State() != breaker.StateOpen {
		t.Fatal("replica A did not trip")
	}
	until := rs[0].b.Snapshot().OpenUntil
	for i, r := range rs[1:] {
		waitFor(t, "the trip on replica "+string(rune('B'+i)), func() bool { return r.b.State() == breaker.StateOpen })
		if got := r.b.Snapshot().OpenUntil; !got.Equal(until.Truncate(time.Millisecond)) && !got.Equal(until) {
			t.Errorf("replica %c open until %v, A until %v", 'B'+i, got, until)
		}
		if _, err := r.b.Allow(); err == nil {
			t.Errorf("replica %c admitted a call to the tripped target", 'B'+i)
		}
	}
}

// The fleet's window is what trips: three replicas that each see a third
// of the failures, each below min_calls alone, all trip.
func TestFailuresSpreadOverTheFleetTrip(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	rs := fleetOf(t, srv, clk, 3, breaker.Config{Window: 10 * time.Second, MinCalls: 9, FailureRate: 0.5,
		ConsecutiveFailures: 100, OpenDuration: 10 * time.Second})
	for _, r := range rs {
		for range 3 {
			fail(r.b) // 3 calls each: below min_calls 9 alone
		}
		if r.b.State() != breaker.StateClosed {
			t.Fatal("a replica tripped on its own third")
		}
	}
	for i, r := range rs {
		waitFor(t, "the fleet's window to trip replica "+string(rune('A'+i)), func() bool { return r.b.State() == breaker.StateOpen })
	}
}

// Half-open is fleet-wide: one probe across all replicas, and its success
// closes the breaker everywhere.
func TestHalfOpenProbesAreFleetWide(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	// Redis is up throughout: a timeout as long as fleetOf's 50 ms would
	// let a claim on a starved machine fall back to a local probe, and
	// the verdict depend on the load.
	rs := fleetOn(t, node(srv), clk, 3, breaker.Config{ConsecutiveFailures: 1, OpenDuration: 5 * time.Second, HalfOpenProbes: 1}, 5*time.Second)
	fail(rs[0].b)
	for _, r := range rs {
		waitFor(t, "every replica open", func() bool { return r.b.State() == breaker.StateOpen })
	}
	clk.Advance(5 * time.Second) // the open period ends on every replica
	var admitted []*breaker.Permit
	var who []int
	for i, r := range rs {
		if p, err := r.b.Allow(); err == nil {
			admitted = append(admitted, &p)
			who = append(who, i)
		}
	}
	if len(admitted) != 1 {
		t.Fatalf("%d probes admitted across the fleet, want 1", len(admitted))
	}
	admitted[0].Success()
	for i, r := range rs {
		waitFor(t, "the close seen by replica "+string(rune('A'+i)), func() bool { return r.b.State() == breaker.StateClosed })
	}
	if !succeed(rs[(who[0]+1)%3].b) {
		t.Error("a replica refused a call after the fleet closed")
	}
}

// An operator's force-open on one replica reaches the others, and so does
// the reset that ends it.
func TestForceOpenReachesEveryReplica(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	rs := fleetOf(t, srv, clk, 2, breaker.Config{ConsecutiveFailures: 5})
	rs[0].b.ForceOpen()
	waitFor(t, "the force-open on B", func() bool { return rs[1].b.State() == breaker.StateForcedOpen })
	rs[0].b.Reset()
	waitFor(t, "the reset on B", func() bool { return rs[1].b.State() == breaker.StateClosed })
}

// Outcomes from before a fleet transition do not count after it.
func TestOutcomesBeforeATransitionDoNotCount(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	cfg := breaker.Config{Window: 10 * time.Second, MinCalls: 4, FailureRate: 0.5, ConsecutiveFailures: 100,
		OpenDuration: 5 * time.Second, HalfOpenProbes: 1}
	rs := fleetOf(t, srv, clk, 2, cfg)
	fail(rs[0].b)
	fail(rs[0].b) // 2 of the 4 calls min_calls needs, published
	waitFor(t, "A's outcomes published", func() bool { return windowCalls(t, srv, rs[0]) == 2 })
	rs[1].b.ForceOpen() // a fleet transition, then its end
	waitFor(t, "the force-open on A", func() bool { return rs[0].b.State() == breaker.StateForcedOpen })
	rs[1].b.Reset()
	waitFor(t, "the reset on A", func() bool { return rs[0].b.State() == breaker.StateClosed })
	fail(rs[1].b)
	fail(rs[1].b) // with A's two from before: 4 failures, but those are past
	waitFor(t, "B's outcomes published", func() bool { return windowCalls(t, srv, rs[1]) == 2 })
	for range 5 {
		rs[0].f.sync() // rounds that would have judged the window
	}
	if st := rs[0].b.State(); st != breaker.StateClosed {
		t.Fatalf("A is %v: outcomes from before the transition counted", st)
	}
}

// windowCalls returns the calls in r's current window of the fleet.
func windowCalls(t *testing.T, srv *redistest.Server, r *replica) int64 {
	t.Helper()
	r.f.mu.Lock()
	s := r.f.breakers["p/m"]
	r.f.mu.Unlock()
	s.mu.Lock()
	gen := s.known.gen
	s.mu.Unlock()
	var n int64
	for _, k := range s.windowKeys(gen, r.f.clk.Now()) {
		v, _ := r.f.rdb.HGet(t.Context(), k, "calls").Int64()
		n += v
	}
	return n
}

// With Redis hung (SIGSTOP), nothing waits on it past the timeout: a
// half-open probe is decided locally, the replica says Redis is lost once,
// and when Redis is back what was seen meanwhile is merged.
func TestRedisHungThenBack(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	rs := fleetOf(t, srv, clk, 2, breaker.Config{Window: 10 * time.Second, MinCalls: 6, FailureRate: 0.5,
		ConsecutiveFailures: 100, OpenDuration: 5 * time.Second})
	srv.Pause()
	defer srv.Resume()
	a := rs[0]
	waitFor(t, "A to see Redis lost", func() bool { return !a.f.Up() })
	if up := <-a.health; up {
		t.Fatal("the first health report was up")
	}
	for range 3 {
		fail(a.b) // seen while Redis is down: 3 of the 6 min_calls
	}
	began := time.Now()
	a.f.mu.Lock()
	sa := a.f.breakers["p/m"]
	a.f.mu.Unlock()
	if !sa.probeGate() {
		t.Error("a probe permit without Redis was refused; the local breaker should decide")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the probe permit waited %v on a hung Redis", d)
	}
	srv.Resume()
	waitFor(t, "A to see Redis back", func() bool { return a.f.Up() })
	for range 3 {
		fail(rs[1].b) // with A's three from the outage: 6 failures
	}
	waitFor(t, "the merged outcomes to trip B", func() bool { return rs[1].b.State() == breaker.StateOpen })
	if n := bytes.Count(a.logs.Bytes(), []byte("Redis unreachable")); n != 1 {
		t.Errorf("Redis lost was logged %d times, want once per episode:\n%s", n, a.logs.Bytes())
	}
}

// A Redis that restarts empty loses nothing that matters: the replicas go
// on, and a trip after it still reaches all.
func TestRedisRestarted(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	rs := fleetOf(t, srv, clk, 2, breaker.Config{ConsecutiveFailures: 2, OpenDuration: 5 * time.Second})
	fail(rs[0].b)
	fail(rs[0].b)
	waitFor(t, "the first trip on B", func() bool { return rs[1].b.State() == breaker.StateOpen })
	clk.Advance(5 * time.Second)
	p, err := rs[0].b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	p.Success()
	waitFor(t, "the close on B", func() bool { return rs[1].b.State() == breaker.StateClosed })
	srv.Restart()
	fail(rs[1].b)
	fail(rs[1].b)
	waitFor(t, "a trip after the restart on A", func() bool { return rs[0].b.State() == breaker.StateOpen })
}

// Announcements are read whole or not at all.
func TestParseAnnouncement(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
		a  announcement
	}{
		{"e1|3|open|1764590400000|openai/gpt-4.1", true, announcement{"openai/gpt-4.1", fleetState{"e1", 3, "open", 1764590400000}}},
		{"e1|4|closed|0|a|b", true, announcement{"a|b", fleetState{"e1", 4, "closed", 0}}},
		{"e1|x|open|1|t", false, announcement{}},
		{"|1|open|1|t", false, announcement{}},
		{"e1|1|open|t", false, announcement{}},
		{"", false, announcement{}},
	} {
		a, ok := parseAnnouncement(tc.in)
		if ok != tc.ok || a != tc.a {
			t.Errorf("parseAnnouncement(%q) = %+v, %v; want %+v, %v", tc.in, a, ok, tc.a, tc.ok)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

// On a Redis Cluster of three masters the breakers behave as on one node:
// a trip reaches every replica, failures spread over them trip the
// fleet's window, one probe across the fleet closes it for all.
func TestBreakersOnACluster(t *testing.T) {
	c := redistest.StartCluster(t)
	clk := clocktest.New(start)
	// A permit asked of a Cluster on a loaded machine can take longer than
	// the usual 50 ms (a redirect, a script loaded on first use), and a
	// permit not answered in time is decided locally, as it should be:
	// what this test asserts is the fleet-wide count, so it waits longer.
	rs := fleetOn(t, cluster(c), clk, 3, breaker.Config{Window: 10 * time.Second, MinCalls: 9, FailureRate: 0.5,
		ConsecutiveFailures: 100, OpenDuration: 5 * time.Second, HalfOpenProbes: 1}, 2*time.Second)
	for _, r := range rs {
		for range 3 {
			fail(r.b)
		}
	}
	for i, r := range rs {
		waitFor(t, "the fleet's window to trip replica "+string(rune('A'+i)), func() bool { return r.b.State() == breaker.StateOpen })
	}
	clk.Advance(5 * time.Second)
	admitted := 0
	var probe breaker.Permit
	for _, r := range rs {
		if p, err := r.b.Allow(); err == nil {
			admitted++
			probe = p
		}
	}
	if admitted != 1 {
		t.Fatalf("%d probes admitted across the fleet on a Cluster, want 1; logs:\n%s\n%s\n%s", admitted, rs[0].logs.Bytes(), rs[1].logs.Bytes(), rs[2].logs.Bytes())
	}
	probe.Success()
	for i, r := range rs {
		waitFor(t, "the close on replica "+string(rune('A'+i)), func() bool { return r.b.State() == breaker.StateClosed })
	}
}

// Through a Sentinel, replicas find the master and share a trip as on one
// node.
func TestBreakersThroughASentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	clk := clocktest.New(start)
	rs := fleetOn(t, sentinel(s), clk, 2, breaker.Config{ConsecutiveFailures: 2, OpenDuration: 5 * time.Second}, 2*time.Second)
	fail(rs[0].b)
	fail(rs[0].b)
	waitFor(t, "the trip on the other replica", func() bool { return rs[1].b.State() == breaker.StateOpen })
}
