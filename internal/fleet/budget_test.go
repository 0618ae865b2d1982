package fleet

import (
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/limit"
)

// linked returns n fleets on srv, not started unless start, with a
// timeout generous for a loaded machine; tune, if given, changes their
// options (a short timeout for a hung Redis, a short lease).
func linked(t *testing.T, srv *redistest.Server, n int, start bool, tune ...func(*Options)) []*Fleet {
	t.Helper()
	return linkedOn(t, node(srv), n, start, tune...)
}

// linkedOn is linked on any Redis.
func linkedOn(t *testing.T, dial dialer, n int, start bool, tune ...func(*Options)) []*Fleet {
	t.Helper()
	var fs []*Fleet
	for range n {
		rdb := dial(t)
		o := Options{Client: rdb, Timeout: 2 * time.Second, Sync: 10 * time.Millisecond, Log: slog.New(slog.DiscardHandler)}
		for _, f := range tune {
			f(&o)
		}
		f := New(o)
		if start {
			f.Start()
		}
		t.Cleanup(func() { f.Close(); rdb.Close() })
		fs = append(fs, f)
	}
	return fs
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Concurrent reservations on three replicas never overshoot the budget:
// each fits only while the fleet's spending, every reservation held and
// itself fit; settling releases the reservation and counts the cost.
func TestLedgerReservationsHoldAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 3, false)
	now := start
	var mu sync.Mutex
	var held []Reservation
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			r, which := fs[i%3].Ledger("web").Reserve(now, 1, 10, 0)
			if which == "" {
				mu.Lock()
				held = append(held, r)
				mu.Unlock()
			} else if which != "daily" {
				t.Errorf("refused for %q, want daily", which)
			}
		})
	}
	wg.Wait()
	if len(held) != 10 {
		t.Fatalf("%d reservations of $1 fit a $10 budget across the fleet, want 10", len(held))
	}
	for i, r := range held {
		fs[i%3].Ledger("web").Settle(now, r, 0.5) // each cost half its reservation
	}
	for _, f := range fs {
		f.sync() // the settlements go with each replica's next round
	}
	day, _ := fs[0].Ledger("web").Spent(now)
	if _, which := fs[1].Ledger("web").Reserve(now, 5, 10, 0); which != "" {
		t.Errorf("$5 did not fit after $%g spent of $10", day)
	}
	if _, which := fs[2].Ledger("web").Reserve(now, 0.01, 10, 0); which != "daily" {
		t.Error("a reservation fit a budget spent and held to its limit")
	}
}

// A reservation never settled (its replica died) stops holding the budget
// after ReservationTTL.
func TestUnsettledReservationExpires(t *testing.T) {
	srv := redistest.Start(t)
	f := linked(t, srv, 1, false)[0]
	l := f.Ledger("web")
	if _, which := l.Reserve(start, 10, 10, 0); which != "" {
		t.Fatal("the first reservation did not fit")
	}
	if _, which := l.Reserve(start.Add(time.Minute), 1, 10, 0); which != "daily" {
		t.Fatal("a reservation fit beside one holding the whole budget")
	}
	if _, which := l.Reserve(start.Add(ReservationTTL+time.Second), 1, 10, 0); which != "" {
		t.Fatal("an unsettled reservation still held the budget after ReservationTTL")
	}
}

// Monthly limits hold over days, and the daily figure starts again each
// UTC day.
func TestLedgerPeriods(t *testing.T) {
	srv := redistest.Start(t)
	clk := clocktest.New(start) // the sync round reads the periods of its clock's now
	rdb := node(srv)(t)
	f := New(Options{Client: rdb, Timeout: 2 * time.Second, Clock: clk, Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { f.Close(); rdb.Close() })
	l := f.Ledger("web")
	r, _ := l.Reserve(start, 3, 4, 5)
	l.Settle(start, r, 3)
	l.f.sync()
	if _, which := l.Reserve(start, 2, 4, 5); which != "daily" {
		t.Errorf("refused for %q, want daily", which)
	}
	next := start.Add(24 * time.Hour)
	clk.Set(next)
	if _, which := l.Reserve(next, 2.5, 4, 5); which != "monthly" {
		t.Errorf("the next day, refused for %q, want monthly ($3 of $5 spent)", which)
	}
	if r, which := l.Reserve(next, 1.5, 4, 5); which != "" {
		t.Errorf("$1.5 of the month's $2 left was refused for %q", which)
	} else {
		l.Settle(next, r, 1.5)
		l.f.sync()
	}
	if d, m := l.Spent(next); !near(d, 1.5) || !near(m, 4.5) {
		t.Errorf("spent %g today, %g this month; want 1.5, 4.5", d, m)
	}
}

// With Redis hung, a replica admits one request of its own (its
// overdraft), within its share of what was left, and no second one until
// Redis knows the first; what is spent is kept, and merged into the
// fleet's figure when Redis is back.
func TestLedgerWithoutRedis(t *testing.T) {
	srv := redistest.Start(t)
	fs := linked(t, srv, 2, true, func(o *Options) { o.Timeout = 50 * time.Millisecond })
	a, b := fs[0].Ledger("web"), fs[1].Ledger("web")
	r, _ := a.Reserve(start, 1, 10, 0)
	a.Settle(start, r, 2) // the fleet knows $2
	waitFor(t, "two replicas alive", func() bool { return fs[0].Replicas() == 2 })
	srv.Pause()
	defer srv.Resume()
	if _, which := a.Reserve(start, 9, 10, 0); which != "daily" {
		t.Error("a request past what was left was admitted")
	}
	if _, which := a.Reserve(start, 4.5, 10, 0); which != Unconfirmed {
		t.Error("an overdraft past the replica's share ($8 left, two replicas) was admitted")
	}
	r, which := a.Reserve(start, 3, 10, 0)
	if which != "" || !r.local {
		t.Fatalf("without Redis: %+v %q; want the overdraft", r, which)
	}
	if _, which := a.Reserve(start, 0.01, 10, 0); which != Unconfirmed {
		t.Error("a second overdraft was admitted while Redis does not know the first")
	}
	a.Settle(start, r, 3)
	srv.Resume()
	var d float64
	waitFor(t, "the spending merged into the fleet's", func() bool {
		b.Reserve(start, 0.001, 0, 0) // reads the fleet's figure
		d, _ = b.Spent(start)
		return near(d, 5)
	})
	if _, which := a.Reserve(start, 1, 10, 0); which != "" {
		t.Errorf("refused for %q with Redis back", which)
	}
}

// On a Redis Cluster, reservations hold across replicas and a shared
// limit is leased by share, as on one node.
func TestLedgerAndLimitsOnACluster(t *testing.T) {
	c := redistest.StartCluster(t)
	fs := linkedOn(t, cluster(c), 3, true)
	var mu sync.Mutex
	held := 0
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			if _, which := fs[i%3].Ledger("web").Reserve(start, 1, 10, 0); which == "" {
				mu.Lock()
				held++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if held != 10 {
		t.Errorf("%d reservations of $1 fit a $10 budget on a Cluster, want 10", held)
	}
	full := limit.Limits{RequestsPerMinute: 300}
	p, err := limit.NewPacer(limit.PacerSettings{Limits: full})
	if err != nil {
		t.Fatal(err)
	}
	fs[0].ShareLimits("target:p/m", p, full)
	waitFor(t, "a third of the limit", func() bool { return p.Limits().RequestsPerMinute == 100 })
}
