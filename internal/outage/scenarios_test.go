package outage

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// Every scenario's faults are valid sim faults, and its alias a valid
// gateway configuration, with and without continue_on_failure.
func TestScenarioSetups(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	p := &provider{name: "primary", root: "http://127.0.0.1:1", url: "http://127.0.0.1:1/v1"}
	s := &provider{name: "secondary", root: "http://127.0.0.1:2", url: "http://127.0.0.1:2/v1"}
	for _, sc := range Scenarios {
		for _, cont := range []bool{false, true} {
			o := Options{Scenario: sc, Continue: cont}.withDefaults()
			if err := o.validate(); err != nil {
				t.Errorf("%s: %v", sc, err)
			}
			if _, err := sim.New(sim.Config{Faults: o.faults()}); err != nil {
				t.Errorf("%s: faults %+v: %v", sc, o.faults(), err)
			}
			if _, err := config.Parse("bench", []byte(fuseboxConfig(o, p, s, "t:")), none); err != nil {
				t.Errorf("%s, continue %v: the gateway refuses the alias:\n%s\n%v", sc, cont, FuseboxPolicy(o), err)
			}
		}
	}
	if o := (Options{Scenario: Slow}).withDefaults(); o.Spike != 3*time.Second || !strings.Contains(FuseboxPolicy(o), "hedge: {after: 800ms, max: 1, budget: 0.1}") {
		t.Errorf("slow: spike %v, policy\n%s; want 3s and a hedge after 800ms", o.Spike, FuseboxPolicy(o))
	}
	if o := (Options{Scenario: LatencySpike}).withDefaults(); o.Spike != 2*time.Second {
		t.Errorf("latency-spike: spike %v, want 2s", o.Spike)
	}
	for _, sc := range []Scenario{Stall, Partial} {
		if o := (Options{Scenario: sc}).withDefaults(); !o.Stream {
			t.Errorf("%s does not stream", sc)
		}
	}
	for _, sc := range []Scenario{Stall, Drip, Cut, HangHedge} {
		o := Options{Scenario: sc, Continue: true, CommitAfter: 4}.withDefaults()
		p := FuseboxPolicy(o)
		for _, want := range []string{"consecutive: 5, open: 5s, open_backoff: 1.5, max_open: 8s, background_probe: true",
			"same_target_wait: 0", "deadline: 30s, suspect_after: 1s, min_rate: auto, commit_after: 4}", "hedge: {after: 800ms, max: 1, budget: 0.1}", "continue_on_failure: true"} {
			if !strings.Contains(p, want) {
				t.Errorf("%s: policy lacks %q (examples/silent-failures.yaml's chat alias):\n%s", sc, want, p)
			}
		}
		if o.Open != 5*time.Second || o.Stream != (sc != HangHedge) {
			t.Errorf("%s: open %v, stream %v; want 5s, streamed but for hang-hedge", sc, o.Open, o.Stream)
		}
		if p := FuseboxPolicy(Options{Scenario: sc}); !strings.Contains(p, "continue_on_failure: false") {
			t.Errorf("%s without --continue: policy\n%s", sc, p)
		}
	}
	if err := (Options{Scenario: Overload529, Stream: true}).Validate(); err == nil || !strings.Contains(err.Error(), "stream") {
		t.Errorf("overload529 streamed: %v; want an error naming stream", err)
	}
	if err := (Options{Scenario: "meteor"}).Validate(); err == nil || !strings.Contains(err.Error(), "hang, slow, stall, flap, partial, reset") {
		t.Errorf("unknown scenario: %v; want the list of scenarios", err)
	}
}

// readStream reads streams as OpenAI's SDKs do: [DONE] or the end of the
// body ends them; a finish_reason makes them complete.
func TestReadStream(t *testing.T) {
	const (
		role   = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
		text   = "data: {\"choices\":[{\"delta\":{\"content\":\"Lorem\"},\"finish_reason\":null}]}\n\n"
		finish = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
		use    = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3}}\n\n"
		done   = "data: [DONE]\n\n"
	)
	for _, tc := range []struct {
		name, body string
		want       error // nil: complete
	}{
		{"complete", role + text + finish + use + done, nil},
		{"no [DONE]", role + text + finish + use, nil},
		{"no finish_reason", role + text + use + done, errStreamNoFinish},
		{"ends after content", role + text, errStreamNoFinish},
		{"error event", role + text + "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n", errStreamError},
		{"named error", role + "event: error\ndata: {\"type\":\"error\"}\n\n", errStreamError},
		{"cut inside an event", role + text + finish + "data: {\"choi", errStreamBroke},
		{"not JSON", role + "data: nope\n\n", errStreamBroke},
	} {
		var a answer
		err := readStream(strings.NewReader(tc.body), &a)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if a.firstByte.IsZero() {
			t.Errorf("%s: no first byte recorded", tc.name)
		}
		if tc.want == nil && a.usage != (usage{12, 3}) {
			t.Errorf("%s: usage %+v, want 12 in, 3 out", tc.name, a.usage)
		}
	}
}

// shortRun sets o up to run for 2 seconds (3 with a 2s storm) at 10
// requests per second, the storm from 0.5s, on providers answering in
// about 5 ms, the breaker open for 500ms, with a 3s client timeout; a rate
// or an open period set in o is kept.
func shortRun(o Options) Options {
	o.Rate, o.Open = cmp.Or(o.Rate, 10), cmp.Or(o.Open, 500*time.Millisecond)
	o.Latency, o.P99, o.clientTimeout = 5*time.Millisecond, 10*time.Millisecond, 3*time.Second
	o.StormStart, o.StormLength = 500*time.Millisecond, cmp.Or(o.StormLength, time.Second)
	o.Duration = o.StormStart + o.StormLength + 500*time.Millisecond
	return o
}

// checkRun checks what the benchmark guarantees whatever the gateway does:
// a row per client, every request counted, naive never on the secondary,
// the primary's calls counted.
func checkRun(t *testing.T, o Options, res *Result) {
	t.Helper()
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(res.Rows))
	}
	want := int(o.Rate * o.Duration.Seconds())
	stormWant := int(o.Rate * o.StormLength.Seconds())
	for i, w := range res.Rows {
		if w.Client != Clients[i] {
			t.Errorf("row %d is %s, want %s", i, w.Client, Clients[i])
		}
		// Senders starved of CPU (-race, a loaded machine, the runs at
		// once) fall behind by a few slots.
		if w.Requests != want || w.StormRequests < stormWant-3 || w.StormRequests > stormWant+3 {
			t.Errorf("%s: %d requests, %d in the storm; want %d and about %d", w.Client, w.Requests, w.StormRequests, want, stormWant)
		}
		if w.Client != Fusebox && w.ServedPrimary+w.ServedSecondary+w.Failed != w.Requests {
			t.Errorf("%s: served %d + %d, failed %d, of %d requests", w.Client, w.ServedPrimary, w.ServedSecondary, w.Failed, w.Requests)
		}
	}
	naive := res.row(Naive)
	if naive.ServedSecondary != 0 || naive.SecondaryCalls != 0 || naive.FailoverMS != nil {
		t.Errorf("naive reached the secondary: served %d, %d calls, failover %s", naive.ServedSecondary, naive.SecondaryCalls, fmtOptMS(naive.FailoverMS))
	}
	// Every request sent during the storm calls the primary at least once
	// (those sent at its very end may arrive after it).
	if naive.PrimaryCalls < int64(naive.StormRequests)-2 {
		t.Errorf("naive: %d calls to the primary in the storm for %d requests", naive.PrimaryCalls, naive.StormRequests)
	}
	if res.Options.Stream != (o.Stream || o.Scenario.Streams()) {
		t.Errorf("options report stream %v", res.Options.Stream)
	}
	md := res.Markdown()
	for _, g := range res.Goals {
		if !strings.Contains(md, g.Name) {
			t.Errorf("Markdown lacks the goal %q", g.Name)
		}
	}
	checkOutputs(t, res)
}

// checkGoal checks that the goals include one named name.
func checkGoal(t *testing.T, res *Result, name string) {
	t.Helper()
	for _, g := range res.Goals {
		if g.Name == name {
			return
		}
	}
	t.Errorf("no goal %q among %+v", name, res.Goals)
}

// TestScenarios runs each scenario short, all at once (most of a run is
// waiting: hung calls wait for the client timeout), and checks what the
// benchmark itself guarantees, not Fusebox's figures.
func TestScenarios(t *testing.T) {
	runScenarios(t, []scenarioCase{
		{"hang", Options{Scenario: Hang}, checkHang},
		{"slow", Options{Scenario: Slow, Spike: time.Second}, checkSlow},
		{"stall", Options{Scenario: Stall}, checkStall},
		{"stall continue", Options{Scenario: Stall, Continue: true}, checkStallContinue},
		// Two seconds of storm: 503s for one, healthy for the next.
		{"flap", Options{Scenario: Flap, StormLength: 2 * time.Second}, checkFlap},
		{"partial", Options{Scenario: Partial}, checkPartial},
		{"reset", Options{Scenario: Reset}, checkReset},
		{"streamed outage", Options{Scenario: Outage, Stream: true}, checkStreamedOutage},
	})
}

// scenarioCase is a short run and what to check of its result.
type scenarioCase struct {
	name  string
	o     Options
	check func(t *testing.T, res *Result)
}

// runScenarios runs the cases short (shortRun), all at once, the runs
// starved of CPU again up to twice, and checks each in a subtest.
func runScenarios(t *testing.T, cases []scenarioCase) {
	t.Helper()
	results, errs := make([]*Result, len(cases)), make([]error, len(cases))
	for try := 1; try <= 3; try++ {
		var todo []int
		for i, res := range results {
			if try == 1 || (errs[i] == nil && starved(res)) {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			break
		}
		if try > 1 {
			t.Logf("try %d: %d runs starved of CPU, once more", try, len(todo))
		}
		var wg sync.WaitGroup
		for _, i := range todo {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				results[i], errs[i] = Run(ctx, shortRun(cases[i].o))
			})
		}
		wg.Wait()
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := results[i]
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			t.Log("\n" + res.Markdown())
			if starved(res) {
				// Calls answered in 5 ms took far longer: the run measured
				// the machine's load, not the clients.
				t.Skipf("starved of CPU three times (naive's p95 outside the storm %s)", fmtMS(res.row(Naive).HealthyLatency.P95))
			}
			checkRun(t, shortRun(c.o), res)
			c.check(t, res)
		})
	}
}

// starved reports whether a run was starved of CPU: calls that the
// providers answer in about 5 ms took over 40 times that outside the storm.
func starved(res *Result) bool {
	n := res.row(Naive)
	return n == nil || n.HealthyLatency.P95 > 40*res.Options.LatencyMS
}

func checkHang(t *testing.T, res *Result) {
	// Without a breaker or a timeout shorter than the request's, a hung
	// call takes the whole client timeout: naive and retry+failover fail
	// every request the primary holds.
	for _, w := range []*Row{res.row(Naive), res.row(RetryFailover)} {
		if w.StormFailed < w.StormRequests-2 || w.StormLatency.P50 < 2900 {
			t.Errorf("%s: failed %d of %d in the storm, p50 %s; want all, after the 3s client timeout",
				w.Client, w.StormFailed, w.StormRequests, fmtMS(w.StormLatency.P50))
		}
	}
	checkGoal(t, res, "p99 during the storm")
	checkGoal(t, res, "calls to the primary per request after the breaker opens")
}

func checkSlow(t *testing.T, res *Result) {
	naive := res.row(Naive)
	if naive.StormFailed != 0 || naive.StormLatency.P50 < 1000 {
		t.Errorf("naive: failed %d in the storm, p50 %s; want none, each a second late", naive.StormFailed, fmtMS(naive.StormLatency.P50))
	}
	if fb := res.row(Fusebox); fb.PrimaryCalls+fb.SecondaryCalls < int64(fb.StormRequests)-1 {
		t.Errorf("fusebox: %d + %d calls for %d requests in the storm", fb.PrimaryCalls, fb.SecondaryCalls, fb.StormRequests)
	}
	if !strings.Contains(res.Policy, "hedge: {after: 800ms") {
		t.Errorf("slow policy without a hedge:\n%s", res.Policy)
	}
	checkGoal(t, res, "p99 during the storm")
	checkGoal(t, res, "extra upstream calls during the storm (hedges, retries)")
}

func checkStall(t *testing.T, res *Result) {
	for _, w := range []*Row{res.row(Naive), res.row(RetryFailover)} {
		if w.StormFailed < w.StormRequests-2 {
			t.Errorf("%s: failed %d of %d stalled streams; want all", w.Client, w.StormFailed, w.StormRequests)
		}
		if w.TTFB.P50 <= 0 {
			t.Errorf("%s: no TTFB recorded for the streams outside the storm", w.Client)
		}
	}
	if g := res.Goals[0]; g.Name != "client-visible failure during the storm" || g.Want != "≤ 2.0%" {
		t.Errorf("first goal %+v; want failures ≤ 2.0%% without continue_on_failure", g)
	}
}

func checkStallContinue(t *testing.T, res *Result) {
	if g := res.Goals[0]; g.Want != "0%" || !strings.Contains(res.Policy, "continue_on_failure: true") {
		t.Errorf("goal wants %s, policy\n%s; want 0%% and continue_on_failure", g.Want, res.Policy)
	}
}

func checkFlap(t *testing.T, res *Result) {
	naive := res.row(Naive)
	// Requests sent early in the failing second fail all 4 calls (the
	// backoff adds up to 700ms at most); those of the healthy second never
	// fail.
	if naive.StormFailed == 0 || naive.StormFailed > naive.StormRequests/2+1 || naive.PrimaryCalls <= int64(naive.StormRequests) {
		t.Errorf("naive: failed %d of %d, %d calls to the primary; want some failures, in the failing half only, and retries",
			naive.StormFailed, naive.StormRequests, naive.PrimaryCalls)
	}
	checkGoal(t, res, "client-visible failure during the storm")
}

func checkPartial(t *testing.T, res *Result) {
	// Streams without [DONE] that carried a finish_reason are complete.
	for _, w := range []*Row{res.row(Naive), res.row(RetryFailover)} {
		if w.Failed != 0 || w.ServedPrimary != w.Requests || w.StormTTFB.P50 <= 0 {
			t.Errorf("%s: failed %d, served %d by the primary of %d, storm TTFB %s; want every stream complete, from the primary",
				w.Client, w.Failed, w.ServedPrimary, w.Requests, fmtMS(w.StormTTFB.P50))
		}
	}
	checkGoal(t, res, "client-visible failure during the storm")
}

func checkReset(t *testing.T, res *Result) {
	naive, rf := res.row(Naive), res.row(RetryFailover)
	// Requests sent in the first 0.3s of the storm have all 4 calls reset;
	// the others at least their first.
	if naive.StormFailed < 2 || naive.PrimaryCalls < 2*int64(naive.StormRequests) {
		t.Errorf("naive: failed %d of %d, %d calls to the primary; want most failed after retries", naive.StormFailed, naive.StormRequests, naive.PrimaryCalls)
	}
	if rf.StormFailed != 0 || rf.FailoverMS == nil || rf.ServedSecondary == 0 {
		t.Errorf("retry+failover: failed %d, failover %s, served %d by the secondary; want every reset request served there",
			rf.StormFailed, fmtOptMS(rf.FailoverMS), rf.ServedSecondary)
	}
	checkGoal(t, res, "calls to the primary per request after the breaker opens")
}

// --stream streams a scenario whose fault is not streams-only.
func checkStreamedOutage(t *testing.T, res *Result) {
	if rf := res.row(RetryFailover); rf.StormFailed != 0 || rf.StormTTFB.P50 <= 0 {
		t.Errorf("retry+failover: failed %d streamed requests, storm TTFB %s; want none failed, TTFB recorded", rf.StormFailed, fmtMS(rf.StormTTFB.P50))
	}
	if md := res.Markdown(); !strings.Contains(md, "storm TTFB p99") {
		t.Error("a streamed run's table has no TTFB columns")
	}
}

// TestOverload529 runs the cross-cloud scenario short, on its own: its
// clients sign, translate and retry more than the others', and run
// alongside them they would starve every run of CPU. 120 requests in a
// 4s storm, and the default 3s open period, so that the calls that open
// the breaker and its probe weigh about what they weigh in a default run
// (1600 requests in the storm), with room for a call or two in flight
// when the breaker opens.
func TestOverload529(t *testing.T) {
	longScenarios(t)
	o := shortRun(Options{Scenario: Overload529, Rate: 30, StormLength: 4 * time.Second, Open: 3 * time.Second})
	var res *Result
	for try := 1; try <= 3; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := Run(ctx, o)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res = r; !starved(res) {
			break
		}
		t.Logf("try %d starved of CPU (naive's p95 outside the storm %s)", try, fmtMS(res.row(Naive).HealthyLatency.P95))
	}
	t.Log("\n" + res.Markdown())
	if starved(res) {
		t.Skip("starved of CPU three times")
	}
	checkRun(t, o, res)
	checkOverload529(t, res)
}

// Claude on Anthropic answers 529 for the storm, Claude on Bedrock stays
// healthy: Fusebox's client sees no failure, and the overloaded primary
// gets at most 0.05 calls per request sent during the storm.
func checkOverload529(t *testing.T, res *Result) {
	naive, rf, fb := res.row(Naive), res.row(RetryFailover), res.row(Fusebox)
	if naive.StormFailed == 0 || naive.PrimaryCalls <= int64(naive.StormRequests) {
		t.Errorf("naive: failed %d of %d, %d calls to the primary; want failures after retries on the 529s",
			naive.StormFailed, naive.StormRequests, naive.PrimaryCalls)
	}
	// The SigV4-signed InvokeModel calls reach a sim that checks
	// SigV4 against the run's keys.
	if rf.StormFailed != 0 || rf.ServedSecondary == 0 {
		t.Errorf("retry+failover: failed %d in the storm, %d served by Bedrock; want none failed, some served there", rf.StormFailed, rf.ServedSecondary)
	}
	if fb.StormFailed != 0 || fb.Failed != 0 {
		t.Errorf("fusebox: failed %d in the storm, %d in all; want none", fb.StormFailed, fb.Failed)
	}
	if fb.ServedSecondary < fb.StormRequests-3 || fb.ServedPrimary == 0 {
		t.Errorf("fusebox: served %d by Anthropic, %d by Bedrock, %d requests in the storm; want the storm's on Bedrock, the rest on Anthropic",
			fb.ServedPrimary, fb.ServedSecondary, fb.StormRequests)
	}
	perRequest := float64(fb.PrimaryCalls) / float64(fb.StormRequests)
	if fb.StormRequests == 0 || perRequest > 0.05 {
		t.Errorf("fusebox: %d calls to the primary for %d requests in the storm (%.3f per request); want at most 0.05",
			fb.PrimaryCalls, fb.StormRequests, perRequest)
	}
	if len(res.Goals) != 2 {
		t.Fatalf("goals %+v; want failures and calls per request", res.Goals)
	}
	for _, g := range res.Goals {
		if !g.Pass {
			t.Errorf("goal %q failed: got %s, want %s", g.Name, g.Got, g.Want)
		}
	}
	checkGoal(t, res, "calls to the primary per request during the storm")
	if md := res.Markdown(); !strings.Contains(md, "AWS Bedrock") || !strings.Contains(md, "$3/$15") {
		t.Errorf("the report does not say the ladder is cross-cloud or price Claude from the catalog:\n%s", md)
	}
}
