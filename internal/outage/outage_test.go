package outage

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOutageOrdering runs a 4-second outage and checks how the rows rank,
// not absolute times: the clients run on real clocks, on a machine that may
// be loaded and under -race.
func TestOutageOrdering(t *testing.T) {
	longScenarios(t)
	o := Options{
		Rate: 50, Duration: 4 * time.Second, StormStart: time.Second, StormLength: 2 * time.Second,
		Latency: 5 * time.Millisecond, P99: 10 * time.Millisecond, Open: 500 * time.Millisecond,
	}
	var res *Result
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := Run(ctx, o)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		res = r
		// A run starved of CPU (calls answered in 5 ms taking over 40×
		// that before the storm even starts) measures queueing, not the
		// clients: run it once more.
		if try == 2 || res.row(Naive) == nil || res.row(Naive).Latency.P50 < 40*float64(o.Latency)/float64(time.Millisecond) {
			break
		}
		t.Logf("run %d starved of CPU (naive p50 %s): once more", try, fmtMS(res.row(Naive).Latency.P50))
	}
	t.Log("\n" + res.Markdown())
	naive, rf, fb := res.row(Naive), res.row(RetryFailover), res.row(Fusebox)
	if naive == nil || rf == nil || fb == nil {
		t.Fatalf("rows %v; want one per client", res.Rows)
	}
	for _, r := range res.Rows {
		// Starved of CPU, the senders fall behind: only the total is exact.
		if r.Requests < 190 || r.StormRequests < 50 {
			t.Errorf("%s: %d requests, %d in the storm; want about 200 and 100", r.Client, r.Requests, r.StormRequests)
		}
		if r.RecoveryMS == nil {
			t.Errorf("%s: never back on the primary after the storm", r.Client)
		}
	}

	// Loaded, naive's retries may outlast the storm: it still fails often.
	if naive.StormFailure < 0.1 {
		t.Errorf("naive failed %s in the storm; want at least 10%%", pct(naive.StormFailure))
	}
	if fb.StormFailed >= naive.StormFailed || fb.StormFailed > rf.StormFailed+2 {
		t.Errorf("storm failures: fusebox %d, naive %d, retry+failover %d; want fusebox fewest", fb.StormFailed, naive.StormFailed, rf.StormFailed)
	}
	if 4*fb.PrimaryCalls >= rf.PrimaryCalls || 4*fb.PrimaryCalls >= naive.PrimaryCalls {
		t.Errorf("calls to the failing primary: fusebox %d, naive %d, retry+failover %d; want fusebox far fewer",
			fb.PrimaryCalls, naive.PrimaryCalls, rf.PrimaryCalls)
	}
	if naive.FailoverMS != nil {
		t.Errorf("naive failed over after %v ms; it has no failover", *naive.FailoverMS)
	}
	switch {
	case fb.FailoverMS == nil || rf.FailoverMS == nil:
		t.Errorf("failover: fusebox %s, retry+failover %s; want both", fmtOptMS(fb.FailoverMS), fmtOptMS(rf.FailoverMS))
	case *fb.FailoverMS >= *rf.FailoverMS:
		t.Errorf("failover: fusebox %s, retry+failover %s; want fusebox sooner", fmtOptMS(fb.FailoverMS), fmtOptMS(rf.FailoverMS))
	}
	// Latencies are not compared: starved of CPU (a loaded machine, -race)
	// every client's p50 is queueing, whatever it does.
	checkBreakerCycle(t, res.Transitions)
	checkOutputs(t, res)
}

// checkBreakerCycle checks that the breaker opened and ended closed.
func checkBreakerCycle(t *testing.T, ts []Transition) {
	t.Helper()
	if len(ts) == 0 || ts[0].To != "open" || ts[len(ts)-1].To != "closed" {
		t.Errorf("breaker transitions %+v; want it to open, then close again", ts)
	}
}

// checkOutputs checks that the JSON and SVG renderings are well formed.
func checkOutputs(t *testing.T, res *Result) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || len(back.Rows) != 3 || len(back.Goals) == 0 {
		t.Errorf("JSON round trip: %v, %d rows, %d goals", err, len(back.Rows), len(back.Goals))
	}
	var svg bytes.Buffer
	if err := res.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&svg)
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
	if md := res.Markdown(); !strings.Contains(md, "| fusebox |") || !strings.Contains(md, "client-visible failure during the storm") {
		t.Errorf("Markdown lacks the fusebox row or the failure goal:\n%s", md)
	}
}

func TestOptionsRejectStormAfterTheRun(t *testing.T) {
	_, err := Run(context.Background(), Options{Duration: 10 * time.Second, StormStart: 8 * time.Second, StormLength: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "ends after the run") {
		t.Fatalf("Run = %v; want an error about the storm ending after the run", err)
	}
}

func TestPercentiles(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(100 - i) // 100 … 1, unsorted
	}
	got := percentiles(v)
	if want := (Percentiles{P50: 50, P95: 95, P99: 99}); got != want {
		t.Errorf("percentiles(1…100) = %+v; want %+v", got, want)
	}
	if got := percentiles(nil); got != (Percentiles{}) {
		t.Errorf("percentiles(nil) = %+v; want zero", got)
	}
}

// TestReplicasShareTheOutage runs a short outage through three Fusebox
// replicas, with their own state and then sharing it on Redis: shared,
// the fleet learns the outage once and sends the dead primary fewer
// calls. It compares the two runs, not absolute counts.
func TestReplicasShareTheOutage(t *testing.T) {
	longScenarios(t)
	redis := redistest.Start(t)
	calls := map[string]int64{}
	for _, state := range []string{"memory", redis.URL()} {
		o := Options{
			Rate: 60, Duration: 4 * time.Second, StormStart: time.Second, StormLength: 2 * time.Second,
			Latency: 5 * time.Millisecond, P99: 10 * time.Millisecond, Open: 500 * time.Millisecond,
			Replicas: 3, State: state,
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := Run(ctx, o)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		fb := res.row(Fusebox)
		if fb == nil || fb.StormFailed > 0 {
			t.Fatalf("state %s: fusebox row %+v; want no failure in the storm", state, fb)
		}
		if res.Options.Replicas != 3 || (state != "memory") != strings.HasPrefix(res.Options.State, "redis://") {
			t.Errorf("options reported %+v", res.Options)
		}
		calls[res.Options.State] = fb.PrimaryCalls
		t.Logf("state %s: %d calls to the dead primary from 3 replicas", res.Options.State, fb.PrimaryCalls)
	}
	if shared, alone := calls[redis.URL()], calls["memory"]; shared >= alone {
		t.Errorf("sharing state on Redis, the fleet sent the dead primary %d calls; alone, %d: want fewer shared", shared, alone)
	}
}

// Progress names the phase of the run and each client's counts.
func TestProgressPhases(t *testing.T) {
	o := Options{Duration: time.Minute, StormStart: 20 * time.Second, StormLength: 10 * time.Second}.withDefaults()
	r := &rig{kind: Fusebox}
	r.counts.add(false)
	r.counts.add(true)
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{{0, "before the storm"}, {20 * time.Second, "storm"}, {30*time.Second - 1, "storm"}, {30 * time.Second, "after the storm"}} {
		p := o.progressAt(tc.at, []*rig{r})
		if p.Phase != tc.want || p.Duration != time.Minute || len(p.Clients) != 1 || p.Clients[0] != (ClientProgress{Client: Fusebox, Ended: 2, Failed: 1}) {
			t.Errorf("at %v: %+v; want phase %q and fusebox 2 ended, 1 failed", tc.at, p, tc.want)
		}
	}
}

// The outage scenario file is what fusebox bench runs by default.
func TestOutageScenarioFileIsTheBenchs(t *testing.T) {
	c, err := sim.LoadScenario("../../examples/scenarios/outage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{}.withDefaults()
	want := simConfig(o, "primary", 1)
	want.Faults = o.faults()
	// The whole provider: name, seed, latency, output, limits, jobs,
	// models and faults.
	if !reflect.DeepEqual(c, want) {
		t.Errorf("examples/scenarios/outage.yaml is\n%+v\nfusebox bench runs its primary as\n%+v", c, want)
	}
}
