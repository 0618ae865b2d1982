package jobs

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/fleet"
	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// testLease is the fleet lease of the adoption tests.
const testLease = 3 * time.Second

// workLeases are a fleet's leases on jobs, as Options.Leases (the
// gateway's adapter).
type workLeases struct{ *fleet.Work }

func (l workLeases) Adopt(id string, known int64) (int64, bool, int64, bool) {
	a := l.Work.Adopt(id, known)
	return a.Epoch, a.Adopted, a.Holder, a.Gone
}

// fleetRig is a simulated provider in front of replicas that share one
// Redis, the provider and the jobs on one fake clock.
type fleetRig struct {
	t     *testing.T
	clk   *clocktest.Clock
	redis *redistest.Server
	cfg   *config.Config
	up    *httptest.Server
	// fail, when set, is how the provider answers polls: it stands in
	// for an upstream that fails while a job is adopted.
	fail atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
}

// replica is one gateway of the rig: its jobs, its link to the fleet and
// what it settled.
type replica struct {
	rig   *fleetRig
	dir   string
	clk   *clocktest.Clock // its fleet's clock
	rdb   redis.UniversalClient
	fleet *fleet.Fleet
	jobs  *Jobs
	gw    *httptest.Server
	polls atomic.Int64 // polls it sent upstream

	// mu guards charges.
	mu      sync.Mutex
	charges []float64
}

func newFleetRig(t *testing.T, s sim.Jobs) *fleetRig {
	t.Helper()
	rig := &fleetRig{t: t, clk: clocktest.New(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)), redis: redistest.Start(t)}
	srv, err := sim.New(sim.Config{Name: "a", Clock: rig.clk, Jobs: s})
	if err != nil {
		t.Fatal(err)
	}
	rig.up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := rig.fail.Load(); f != nil && r.Method == http.MethodGet && (*f)(w, r) {
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { rig.up.CloseClientConnections(); rig.up.Close(); srv.Close() })
	yaml := "providers:\n  a: {type: openai, base_url: \"" + rig.up.URL + "/v1\", keys: [key-a]}\n" +
		"models:\n  - name: chat\n    targets: [{provider: a, model: m}]\n" +
		"jobs:\n  - name: video\n    poll_interval: 24h\n    timeouts: {poll: 2s}\n" +
		"    targets:\n      - {provider: a, model: sora-a, price: {per_second: 0.1, per_job: 0.5}}\n"
	if rig.cfg, err = config.Parse("test.yaml", []byte(yaml), func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
	return rig
}

// replica starts a replica on dir ("": a new one) whose fleet runs on
// fclk (nil: the rig's clock).
func (rig *fleetRig) replica(dir string, fclk *clocktest.Clock) *replica {
	t := rig.t
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	if fclk == nil {
		fclk = rig.clk
	}
	r := &replica{rig: rig, dir: dir, clk: fclk}
	var err error
	if r.rdb, err = fleet.Dial(config.StateURL(rig.redis.URL()), config.Fleet{}); err != nil {
		t.Fatal(err)
	}
	r.fleet = fleet.New(fleet.Options{Client: r.rdb, Timeout: 2 * time.Second, Sync: 10 * time.Millisecond,
		Lease: testLease, Clock: fclk, Log: slog.New(slog.DiscardHandler)})
	r.fleet.Start()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	counted := roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodGet && !strings.HasSuffix(req.URL.Path, "/content") {
			r.polls.Add(1)
		}
		return transport.RoundTrip(req)
	})
	r.jobs, err = New(Options{Aliases: rig.cfg.Jobs, Providers: rig.cfg.Providers, Dir: dir, Clock: rig.clk,
		Identify: identify, Transport: counted, Shared: r.fleet, Leases: workLeases{r.fleet.Work("job")},
		Reserve: r.reserve})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	r.jobs.Register(mux)
	r.gw = httptest.NewServer(mux)
	t.Cleanup(func() { r.kill(); r.fleet.Close(); transport.CloseIdleConnections() })
	return r
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reserve counts what the replica settles: a reservation's actual cost,
// or a cost charged with no reservation (an adopted job's).
func (r *replica) reserve(client string, usd float64) (func(float64), bool) {
	return func(actual float64) {
		if actual > 0 {
			r.mu.Lock()
			r.charges = append(r.charges, actual)
			r.mu.Unlock()
		}
	}, true
}

func (r *replica) charged() []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]float64(nil), r.charges...)
}

// kill stops the replica as kill -9 would: no cleanup of its own, its
// listener gone, its goroutines stopped and its Redis client closed, so
// that it neither renews its leases nor writes anything more.
func (r *replica) kill() {
	if r.gw == nil {
		return
	}
	r.gw.CloseClientConnections()
	r.gw.Close()
	r.rdb.Close()
	r.jobs.Close()
	r.gw = nil
}

func (r *replica) do(method, path string, body string) reply {
	r.rig.t.Helper()
	return r.doAs("studio", method, path, body)
}

func (r *replica) doAs(client, method, path string, body string) reply {
	r.rig.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, r.gw.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+client)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.gw.Client().Do(req)
	if err != nil {
		r.rig.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// synced waits until the fleet has the job's record in state, advancing
// fclk a sync round at a time.
func (rig *fleetRig) synced(fclk *clocktest.Clock, reader *replica, id, state string) {
	rig.t.Helper()
	waitFor(rig.t, "the fleet to have "+id+" "+state, func() bool {
		fclk.Advance(10 * time.Millisecond)
		rec, ok := reader.jobs.fromFleet(id)
		return ok && rec.State == state
	})
}

// A job submitted on A, whose replica is killed before it ends, is
// adopted by B once A's lease has ended: B polls the provider and sees it
// complete, settles its cost, serves its content and deletes it; C, which
// raced B for it, answers from the fleet's record. A, restarted on its
// directory, yields the job: it settles nothing and forgets its record.
func TestJobOfADeadReplicaIsAdopted(t *testing.T) {
	rig := newFleetRig(t, sim.Jobs{RunTime: 7 * time.Second, ContentBytes: 4 << 10})
	a, b, c := rig.replica("", nil), rig.replica("", nil), rig.replica("", nil)
	v := a.do(http.MethodPost, "/v1/videos", videoBody).object(t)
	rig.synced(rig.clk, b, v.ID, stateInProgress)
	a.kill()
	if got := b.do(http.MethodGet, "/v1/videos/"+v.ID, "").object(t); got.Status != stateInProgress {
		t.Fatalf("B while A's lease runs: %s", got.Status)
	}
	if r := b.do(http.MethodDelete, "/v1/videos/"+v.ID, ""); r.status != http.StatusConflict {
		t.Fatalf("a delete on B while A's lease runs: %d %s", r.status, r.body)
	}
	rig.clk.Advance(testLease + 5*time.Second) // the provider has finished; A's lease has ended
	if r := b.doAs("intruder", http.MethodGet, "/v1/videos/"+v.ID, ""); r.status != http.StatusNotFound {
		t.Fatalf("another client's poll: %d %s", r.status, r.body)
	}
	if _, held := b.fleet.Work("job").Holds(v.ID); held {
		t.Fatal("another client's poll adopted the job")
	}
	var wg sync.WaitGroup
	var statuses [2]string
	for i, r := range []*replica{b, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = r.do(http.MethodGet, "/v1/videos/"+v.ID, "").object(t).Status
		}()
	}
	wg.Wait()
	owner, other := b, c
	if _, held := c.fleet.Work("job").Holds(v.ID); held {
		owner, other = c, b
	}
	if _, held := other.fleet.Work("job").Holds(v.ID); held {
		t.Fatal("both replicas adopted the job")
	}
	if got := owner.do(http.MethodGet, "/v1/videos/"+v.ID, "").object(t); got.Status != stateCompleted {
		t.Fatalf("the adopter's poll: %s (racing polls saw %v)", got.Status, statuses)
	}
	if r := other.do(http.MethodGet, "/v1/videos/"+v.ID+"/content", ""); r.status != http.StatusOK || len(r.body) != 4<<10 {
		t.Errorf("content from the other replica: %d, %d bytes", r.status, len(r.body))
	}
	if r := owner.do(http.MethodGet, "/v1/videos/"+v.ID+"/content", ""); r.status != http.StatusOK || len(r.body) != 4<<10 {
		t.Errorf("content from the adopter: %d, %d bytes", r.status, len(r.body))
	}
	if got := owner.charged(); len(got) != 1 || !near(got[0], 0.1*8+0.5) {
		t.Errorf("the adopter charged %v, want [1.3] once", got)
	}
	a2 := rig.replica(a.dir, nil) // A back on its directory
	if r := a2.do(http.MethodGet, "/v1/videos/"+v.ID, ""); r.status != http.StatusOK {
		t.Fatalf("restarted A: %d %s", r.status, r.body)
	}
	if _, here := a2.jobs.store.get(v.ID); here {
		t.Error("restarted A kept the job another replica adopted")
	}
	a2.jobs.sweep()
	if got := append(a2.charged(), other.charged()...); len(got) != 0 {
		t.Errorf("settled again elsewhere: %v", got)
	}
	if r := owner.do(http.MethodDelete, "/v1/videos/"+v.ID, ""); r.status != http.StatusOK {
		t.Fatalf("delete on the adopter: %d %s", r.status, r.body)
	}
	rig.synced(rig.clk, a2, v.ID, stateDeleted)
	if r := a2.do(http.MethodGet, "/v1/videos/"+v.ID, ""); r.status != http.StatusNotFound {
		t.Errorf("the deleted job on A: %d", r.status)
	}
	if got := owner.charged(); len(got) != 1 {
		t.Errorf("the adopter charged %v after the delete", got)
	}
}

// An owner that hangs (its fleet link stalled past its lease) and comes
// back has lost its job to the replica that adopted it: its settlement is
// refused, and it yields the job, polling it no more.
func TestReturningOwnerYields(t *testing.T) {
	rig := newFleetRig(t, sim.Jobs{RunTime: 7 * time.Second})
	aclk := clocktest.New(rig.clk.Now())
	a, b := rig.replica("", aclk), rig.replica("", nil)
	v := a.do(http.MethodPost, "/v1/videos", videoBody).object(t)
	rig.synced(aclk, b, v.ID, stateInProgress)
	rig.clk.Advance(testLease + 5*time.Second) // A's fleet link stalls: no renewal
	if got := b.do(http.MethodGet, "/v1/videos/"+v.ID, "").object(t); got.Status != stateCompleted {
		t.Fatalf("the adopter's poll: %s", got.Status)
	}
	// A comes back before its renewal round: its poll sees the job end,
	// but the settlement is B's.
	if r := a.do(http.MethodGet, "/v1/videos/"+v.ID, ""); r.status != http.StatusOK {
		t.Fatalf("A's poll: %d %s", r.status, r.body)
	}
	if got := a.charged(); len(got) != 0 {
		t.Errorf("the returning owner charged %v", got)
	}
	if _, held := a.fleet.Work("job").Holds(v.ID); held {
		t.Error("the returning owner still holds the job")
	}
	a.do(http.MethodGet, "/v1/videos/"+v.ID, "")
	if _, here := a.jobs.store.get(v.ID); here {
		t.Error("the returning owner kept its record")
	}
	before := a.polls.Load()
	rig.clk.Advance(48 * time.Hour)
	a.jobs.sweep()
	if a.polls.Load() != before {
		t.Error("the returning owner polled the job again")
	}
	if got := b.charged(); len(got) != 1 {
		t.Errorf("the adopter charged %v, want once", got)
	}
}

// While the provider hangs or fails, an adopted job stays as it was (no
// state invented, nothing settled); once the provider answers, the
// adopter completes and settles it.
func TestAdoptionThroughAFailingUpstream(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(w http.ResponseWriter, r *http.Request) bool
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) bool {
			http.Error(w, `{"error":{"message":"boom","type":"server_error"}}`, http.StatusInternalServerError)
			return true
		}},
		{"garbage", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"other","status":"completed"`)
			return true
		}},
		{"hang before headers", func(w http.ResponseWriter, r *http.Request) bool {
			<-r.Context().Done()
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newFleetRig(t, sim.Jobs{RunTime: 7 * time.Second})
			a, b := rig.replica("", nil), rig.replica("", nil)
			v := a.do(http.MethodPost, "/v1/videos", videoBody).object(t)
			rig.synced(rig.clk, b, v.ID, stateInProgress)
			a.kill()
			rig.fail.Store(&tc.fail)
			rig.clk.Advance(testLease + 5*time.Second)
			done := make(chan reply)
			go func() { done <- b.do(http.MethodGet, "/v1/videos/"+v.ID, "") }()
			var r reply
			if tc.name == "hang before headers" {
				waitFor(t, "the poll to be sent", func() bool { return b.polls.Load() > 0 })
				waitFor(t, "the poll's watchdog", func() bool {
					select {
					case r = <-done:
						return true
					default:
						rig.clk.Advance(time.Second)
						return false
					}
				})
			} else {
				r = <-done
			}
			if got := r.object(t); got.Status != stateInProgress {
				t.Fatalf("through a failing upstream: %s", got.Status)
			}
			if _, held := b.fleet.Work("job").Holds(v.ID); !held {
				t.Fatal("B did not adopt the job")
			}
			if got := b.charged(); len(got) != 0 {
				t.Fatalf("settled while the upstream failed: %v", got)
			}
			rig.fail.Store(nil)
			if got := b.do(http.MethodGet, "/v1/videos/"+v.ID, "").object(t); got.Status != stateCompleted {
				t.Fatalf("after the upstream came back: %s", got.Status)
			}
			if got := b.charged(); len(got) != 1 {
				t.Errorf("charged %v, want once", got)
			}
		})
	}
}

// With no client polling, the sweep of another replica adopts the dead
// replica's job and completes it: the delay is bounded by the lease and
// one poll interval.
func TestSweepAdoptsOrphans(t *testing.T) {
	rig := newFleetRig(t, sim.Jobs{RunTime: 7 * time.Second})
	a, b := rig.replica("", nil), rig.replica("", nil)
	v := a.do(http.MethodPost, "/v1/videos", videoBody).object(t)
	rig.synced(rig.clk, b, v.ID, stateInProgress)
	a.kill()
	b.jobs.sweep()
	if _, held := b.fleet.Work("job").Holds(v.ID); held {
		t.Fatal("adopted under a live lease")
	}
	rig.clk.Advance(testLease + 5*time.Second)
	b.jobs.sweep() // adopts it; the poll interval is 24h, so its poll waits
	rig.clk.Advance(24 * time.Hour)
	b.jobs.sweep() // the background sweep may be at it too
	waitFor(t, "the adopted job to be completed and settled", func() bool {
		rec, ok := b.jobs.store.get(v.ID)
		return ok && rec.State == stateCompleted && rec.Settled && len(b.charged()) > 0
	})
	if got := b.charged(); len(got) != 1 {
		t.Errorf("charged %v", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
