package fleet

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// busy makes l's replica busy: n reservations of usd asked of Redis and
// settled at what they reserved, then a sync round, which leases it part
// of the budget.
func busy(t *testing.T, l *Ledger, n int, usd, daily float64) {
	t.Helper()
	for range n {
		r, which := l.Reserve(start, usd, daily, 0)
		if which != "" {
			t.Fatalf("refused for %q while making the replica busy", which)
		}
		l.Settle(start, r, usd)
	}
	l.f.sync()
}

// busyReplica returns one replica whose ledger for client "web" is busy with
// $0.40 of a $10 budget and holds a lease.
func busyReplica(t *testing.T) (*Fleet, *Ledger) {
	t.Helper()
	f := linked(t, redistest.Start(t), 1, false)[0]
	l := f.Ledger("web")
	busy(t, l, 40, 0.01, 10)
	if leaseHeld(t, l) <= 0 {
		t.Fatal("a busy replica holds no lease in Redis")
	}
	return f, l
}

// leaseHeld returns what Redis holds for l's replica's lease.
func leaseHeld(t *testing.T, l *Ledger) float64 {
	t.Helper()
	v, err := l.f.rdb.HGet(context.Background(), l.key+":ra", l.leaseID()).Float64()
	if err != nil {
		return 0
	}
	return v
}

// A busy replica admits from its lease without asking Redis: with Redis
// hung, its requests are still admitted from the lease (not decided on
// local figures), and what they cost reaches the fleet's figure exactly
// once Redis answers again.
func TestBusyReplicaAdmitsFromItsLease(t *testing.T) {
	srv := redistest.Start(t)
	var fallbacks atomic.Int64
	f := linked(t, srv, 1, false, func(o *Options) {
		o.Timeout = 50 * time.Millisecond
		o.OnFallback = func(string) { fallbacks.Add(1) }
	})[0]
	l := f.Ledger("web")
	busy(t, l, 20, 0.01, 100)
	if held := leaseHeld(t, l); held <= 0 {
		t.Fatal("a busy replica holds no lease in Redis")
	}
	srv.Pause()
	var rs []Reservation
	for range 5 {
		r, which := l.Reserve(start, 0.01, 100, 0)
		if which != "" || !r.leased {
			srv.Resume()
			t.Fatalf("with a lease and Redis hung: %+v %q; want a leased reservation", r, which)
		}
		rs = append(rs, r)
	}
	srv.Resume()
	if n := fallbacks.Load(); n != 0 {
		t.Errorf("%d decisions fell back to local figures; the lease needs no Redis", n)
	}
	for _, r := range rs {
		l.Settle(start, r, 0.02) // each cost twice its estimate
	}
	f.sync()
	f.sync()
	if d, _ := l.Spent(start); !near(d, 20*0.01+5*0.02) {
		t.Errorf("the fleet's figure is $%g, want $%g", d, 20*0.01+5*0.02)
	}
}

// A lease counts as held: another replica cannot reserve what a busy one
// leased; once the busy one goes idle, its lease is given back within
// LeaseAhead rounds and the whole budget is there for the others, to the
// cent.
func TestIdleReplicaGivesItsLeaseBack(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, false)
	a, b := fs[0].Ledger("web"), fs[1].Ledger("web")
	busy(t, a, 40, 0.01, 10)
	held := leaseHeld(t, a)
	if held <= 0 {
		t.Fatal("a busy replica holds no lease")
	}
	left := 10 - 40*0.01
	if _, which := b.Reserve(start, left, 10, 0); which != "daily" {
		t.Errorf("another replica reserved all that was left beside a $%g lease", held)
	}
	for range LeaseAhead + 2 {
		fs[0].sync()
	}
	if held := leaseHeld(t, a); held != 0 {
		t.Errorf("an idle replica still holds $%g", held)
	}
	if _, which := b.Reserve(start, left, 10, 0); which != "" {
		t.Errorf("$%g, all that was left, refused for %q after the lease went back", left, which)
	}
}

// A replica that stops gives its lease back at once.
func TestStoppingReplicaGivesItsLeaseBack(t *testing.T) {
	f, l := busyReplica(t)
	f.Close()
	if held := leaseHeld(t, l); held != 0 {
		t.Errorf("a stopped replica still holds $%g", held)
	}
}

// A lease granted under a budget's old limits admits nothing once a
// request names new ones (a reload lowered the budget): that request asks
// Redis, which judges it by the new limits.
func TestLeaseStopsWhenTheLimitsChange(t *testing.T) {
	_, l := busyReplica(t)
	if r, which := l.Reserve(start, 0.01, 10, 0); which != "" || !r.leased {
		t.Fatalf("under the lease's limits: %+v %q; want a leased reservation", r, which)
	}
	if r, which := l.Reserve(start, 0.01, 0.40, 0); which != "daily" || r.leased {
		t.Errorf("with the budget lowered to what is spent: %+v %q; want refused by Redis", r, which)
	}
}

// A request the lease cannot cover gives up the lease's free part before
// it asks Redis, so it is not refused for what its own replica holds
// unused.
func TestReserveGivesUpTheLeaseFirst(t *testing.T) {
	_, l := busyReplica(t)
	left := 10 - 40*0.01
	if _, which := l.Reserve(start, left, 10, 0); which != "" {
		t.Fatalf("$%g, all that was left, refused for %q beside the replica's own lease", left, which)
	}
	if held := leaseHeld(t, l); held != 0 {
		t.Errorf("the lease kept $%g after giving up its free part", held)
	}
}

// Near the end of a budget no lease is granted: a share that would not
// hold four requests is not worth holding others' requests back for.
func TestNoLeaseNearTheEndOfABudget(t *testing.T) {
	srv := redistest.Start(t)
	f := linked(t, srv, 1, false)[0]
	l := f.Ledger("web")
	busy(t, l, 9, 1, 10) // $1 left: an eighth of it is below four requests of $1
	if held := leaseHeld(t, l); held != 0 {
		t.Errorf("a lease of $%g was granted with $1 of $10 left", held)
	}
	if _, which := l.Reserve(start, 1, 10, 0); which != "" {
		t.Errorf("the last dollar was refused for %q", which)
	}
}

// Three busy replicas hammering one budget with leases never admit more
// than it holds, and leave little of it unspent.
func TestLeasesNeverOvershootABudget(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 3, false)
	const budget, usd = 5.0, 0.01
	// The sync rounds run back to back beside the requests, on each
	// replica, rather than on a timer.
	done := make(chan struct{})
	var rounds sync.WaitGroup
	for _, f := range fs {
		rounds.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					f.sync()
				}
			}
		})
	}
	var mu sync.Mutex
	var admitted float64
	var leased int
	var wg sync.WaitGroup
	for g := range 30 {
		wg.Go(func() {
			l := fs[g%3].Ledger("web")
			for range 60 {
				r, which := l.Reserve(start, usd, budget, 0)
				if which != "" {
					continue
				}
				mu.Lock()
				admitted += usd
				if r.leased {
					leased++
				}
				mu.Unlock()
				runtime.Gosched() // the request runs
				l.Settle(start, r, usd)
			}
		})
	}
	wg.Wait()
	close(done)
	rounds.Wait()
	for _, f := range fs {
		f.sync() // the last settlements out
	}
	if admitted > budget+1e-9 {
		t.Errorf("$%g admitted of a $%g budget", admitted, budget)
	}
	if leased == 0 {
		t.Error("no request was admitted from a lease; the test does not test leases")
	}
	t.Logf("$%.2f admitted of $%g, %d from leases", admitted, budget, leased)
	for _, f := range fs {
		f.sync() // each reads the figure the others settled
		if d, _ := f.Ledger("web").Spent(start); !near(d, admitted) {
			t.Errorf("a replica's figure is $%g, want the $%g admitted", d, admitted)
		}
	}
	if left := budget - admitted; left > 0.5 {
		t.Errorf("$%g of $%g left unspent by 1,800 requests of $%g", left, budget, usd)
	}
}

// A settlement reaches Redis once, even when a round that timed out
// arrives after all and the next round sends it again.
func TestSettlementAppliedOnce(t *testing.T) {
	srv := redistest.Start(t)
	f := linked(t, srv, 1, false)[0]
	l := f.Ledger("web")
	day, month := l.periods(start)
	st := settlement{id: newSettlementID(), cost: 1.5, day: day, month: month}
	for range 3 {
		pipe := f.rdb.Pipeline()
		l.settle(pipe, context.Background(), st)
		if _, err := pipe.Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	spent, _ := f.rdb.HGet(context.Background(), day, "spent").Float64()
	if !near(spent, 1.5) {
		t.Errorf("a settlement sent three times counts $%g, want $1.5", spent)
	}
}
