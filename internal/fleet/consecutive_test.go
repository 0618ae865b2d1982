package fleet

import (
	"strconv"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// fleetRun returns the fleet's run of consecutive failures of r's target
// in its current generation, as Redis holds it.
func fleetRun(t *testing.T, r *replica) int64 {
	t.Helper()
	r.f.mu.Lock()
	s := r.f.breakers["p/m"]
	r.f.mu.Unlock()
	s.mu.Lock()
	gen := s.known.gen
	s.mu.Unlock()
	n, _ := r.f.rdb.Get(t.Context(), s.key+":c:"+strconv.FormatUint(gen, 10)).Int64()
	return n
}

// Consecutive failures are counted across the fleet: three replicas that
// each see one failure of three trip together, though none saw three.
func TestConsecutiveFailuresAcrossTheFleet(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	rs := fleetOf(t, srv, clk, 3, breaker.Config{ConsecutiveFailures: 3, OpenDuration: 10 * time.Second})
	for _, r := range rs {
		fail(r.b)
		if r.b.State() != breaker.StateClosed {
			t.Fatal("a replica tripped on one failure of three")
		}
	}
	for i, r := range rs {
		waitFor(t, "the fleet's run to trip replica "+string(rune('A'+i)), func() bool { return r.b.State() == breaker.StateOpen })
	}
}

// A success anywhere ends the fleet's run: two failures, a success on
// another replica, then one failure make a run of one, and nobody trips.
func TestASuccessAnywhereEndsTheRun(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start)
	rs := fleetOf(t, srv, clk, 3, breaker.Config{ConsecutiveFailures: 3, OpenDuration: 10 * time.Second})
	fail(rs[0].b)
	fail(rs[1].b)
	waitFor(t, "a run of two", func() bool { return fleetRun(t, rs[0]) == 2 })
	succeed(rs[2].b)
	waitFor(t, "the success to end the run", func() bool { return fleetRun(t, rs[0]) == 0 })
	fail(rs[0].b)
	waitFor(t, "a run of one", func() bool { return fleetRun(t, rs[0]) == 1 })
	for i, r := range rs {
		if st := r.b.State(); st != breaker.StateClosed {
			t.Errorf("replica %c is %v after a run of one", 'A'+i, st)
		}
	}
}
