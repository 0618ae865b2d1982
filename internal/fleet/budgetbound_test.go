package fleet

import (
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// boundCase is one draw of the budget's bound property: how many
// replicas, how Redis answers them, and the requests they admit.
type boundCase struct {
	replicas, workers, each int
	timeout                 time.Duration
	usd, budget             float64
	seed                    uint64
}

// drawBoundCase draws a case from rt.
func drawBoundCase(rt *rapid.T) boundCase {
	usd := rapid.Float64Range(0.01, 1).Draw(rt, "usd")
	return boundCase{
		replicas: rapid.IntRange(1, 4).Draw(rt, "replicas"),
		workers:  rapid.IntRange(1, 12).Draw(rt, "workers"),
		each:     rapid.IntRange(1, 8).Draw(rt, "each"),
		timeout:  time.Duration(rapid.IntRange(1, 4).Draw(rt, "timeout_ms")) * time.Millisecond,
		usd:      usd,
		budget:   usd * rapid.Float64Range(0.5, 30).Draw(rt, "budget_in_requests"),
		seed:     rapid.Uint64().Draw(rt, "seed"),
	}
}

// admitAll runs c's requests on replicas dialling addr: each worker
// reserves c.usd c.each times and settles it at what it reserved (the
// worst case), while each replica's sync loop runs. It returns what was
// admitted. The fleets are closed before it returns.
func admitAll(rt *rapid.T, addr, prefix string, c boundCase) float64 {
	var fs []*Fleet
	var rdbs []redis.UniversalClient
	for range c.replicas {
		rdb, err := Dial(config.StateURL("redis://"+addr), config.Fleet{})
		if err != nil {
			rt.Fatal(err)
		}
		f := New(Options{Client: rdb, Prefix: prefix, Timeout: c.timeout, Sync: 2 * time.Millisecond,
			Log: slog.New(slog.DiscardHandler)})
		f.Start()
		fs, rdbs = append(fs, f), append(rdbs, rdb)
	}
	var mu sync.Mutex
	var admitted float64
	var wg sync.WaitGroup
	for w := range c.workers {
		wg.Go(func() {
			l := fs[w%c.replicas].Ledger("web")
			for range c.each {
				r, which := l.Reserve(start, c.usd, c.budget, 0)
				if which != "" {
					continue
				}
				mu.Lock()
				admitted += r.USD()
				mu.Unlock()
				time.Sleep(time.Millisecond) // the request runs
				l.Settle(start, r, r.USD())
			}
		})
	}
	wg.Wait()
	for i, f := range fs {
		f.Close()
		rdbs[i].Close()
	}
	return admitted
}

// checkBound fails rt when what was admitted passes the budget by more
// than one request's estimate per replica (docs/FLEET.md).
func checkBound(rt *rapid.T, c boundCase, admitted float64) {
	if most := c.budget + float64(c.replicas)*c.usd; admitted > most+1e-9 {
		rt.Fatalf("$%g admitted of a $%g budget by %d replicas at $%g a request; the bound is $%g",
			admitted, c.budget, c.replicas, c.usd, most)
	}
}

// Whatever Redis's latency and the replicas' timeout, the fleet admits no
// more than a budget and one request's estimate per replica: Redis slowed
// by a proxy that holds a random share of the chunks sent to it for up to
// a few timeouts, so that calls time out, some of them applied by Redis
// all the same.
func TestBudgetBoundWithASlowRedis(t *testing.T) {
	srv := redistest.Start(t)
	slow := redistest.SlowDown(t, srv)
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		c := drawBoundCase(rt)
		share := rapid.Float64Range(0, 1).Draw(rt, "slow_share")
		most := time.Duration(rapid.IntRange(0, 4).Draw(rt, "max_delay_in_timeouts")) * c.timeout
		rng := rand.New(rand.NewPCG(c.seed, 1))
		slow.SetDelay(func() time.Duration {
			if most <= 0 || rng.Float64() >= share {
				return 0
			}
			return time.Duration(rng.Int64N(int64(most)))
		})
		defer slow.SetDelay(nil)
		run++
		checkBound(rt, c, admitAll(rt, slow.Addr, "slow"+strconv.Itoa(run)+":", c))
	})
}

// The same with a real Redis hung (SIGSTOP) for random spans while the
// replicas admit.
func TestBudgetBoundWithRedisHung(t *testing.T) {
	srv := redistest.Start(t)
	defer srv.Resume()
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		c := drawBoundCase(rt)
		rng := rand.New(rand.NewPCG(c.seed, 2))
		stop := make(chan struct{})
		var hangs sync.WaitGroup
		hangs.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(rng.Int64N(int64(5 * time.Millisecond)))):
				}
				srv.Pause()
				time.Sleep(time.Duration(rng.Int64N(int64(10 * time.Millisecond))))
				srv.Resume()
			}
		})
		run++
		admitted := admitAll(rt, srv.Addr, "hung"+strconv.Itoa(run)+":", c)
		close(stop)
		hangs.Wait()
		checkBound(rt, c, admitted)
	})
}
