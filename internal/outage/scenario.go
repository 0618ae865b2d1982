package outage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// Scenario names how the primary fails during the storm.
type Scenario string

// The scenarios.
const (
	// Outage: the primary answers every call with 503.
	Outage Scenario = "outage"
	// Throttle: the primary answers every call with 429 and a Retry-After
	// of Options.RetryAfter. A breaker must not open on throttling; the
	// traffic should pace and spill to the secondary.
	Throttle Scenario = "throttle"
	// LatencySpike: the primary answers, but Options.Spike later than
	// usual. Fusebox's breaker trips on the slow-call rate.
	LatencySpike Scenario = "latency-spike"
	// Hang: the primary accepts every call and sends nothing, not even
	// headers, until the caller gives up.
	Hang Scenario = "hang"
	// Slow: the primary answers, but Options.Spike (3s unless set) later
	// than usual. Fusebox hedges to the secondary.
	Slow Scenario = "slow"
	// Stall: the clients stream; the primary's streams send the role chunk
	// and 2 content chunks, then nothing until the caller gives up.
	Stall Scenario = "stall"
	// Flap: the primary answers every call with 503 for a second, then is
	// healthy for a second, and so on through the storm.
	Flap Scenario = "flap"
	// Partial: the clients stream; the primary's streams carry the whole
	// answer (content, finish_reason "stop", usage) and then end cleanly
	// without data: [DONE].
	Partial Scenario = "partial"
	// Reset: the primary resets the connection of every call before
	// sending a byte.
	Reset Scenario = "reset"
	// Drip: the clients stream; the primary's streams send their first
	// content as usual, then one content chunk every 2 s, and never their
	// end.
	Drip Scenario = "drip"
	// Cut: the clients stream; the primary's streams send the role chunk
	// and 2 content chunks, then the connection is reset.
	Cut Scenario = "cut"
	// HangHedge: the primary accepts every call and sends nothing, not
	// even headers, until the caller gives up, as in Hang, while Fusebox
	// hedges: the winning hedge must not leave the primary's breaker
	// closed.
	HangHedge Scenario = "hang-hedge"
	// Overload529 is the cross-cloud ladder: the primary is Claude on
	// Anthropic's Messages API and answers every call with 529
	// overloaded_error; the secondary is the same model on AWS Bedrock
	// (InvokeModel, SigV4), healthy. The clients speak the Messages API,
	// without streaming.
	Overload529 Scenario = "overload529"
)

// Scenarios lists every Scenario.
var Scenarios = []Scenario{Outage, Throttle, LatencySpike, Hang, Slow, Stall, Flap, Partial, Reset, Drip, Cut, HangHedge, Overload529}

// Streams reports whether the scenario's fault hits streams only, so that
// its clients stream whatever Options.Stream says.
func (s Scenario) Streams() bool { return s == Stall || s == Partial || s == Drip || s == Cut }

// silent reports whether the scenario is one of the slow, dripping and
// half-broken answers (stall, drip, cut, hang-hedge), whose Fusebox alias
// is the chat alias of examples/silent-failures.yaml (see FuseboxPolicy).
func (s Scenario) silent() bool { return s == Stall || s == Drip || s == Cut || s == HangHedge }

// crossCloud reports whether the scenario's providers are Claude on
// Anthropic and on Bedrock, called with the Messages API, rather than two
// OpenAI-compatible hosts.
func (s Scenario) crossCloud() bool { return s == Overload529 }

// flapHalf is how long the Flap scenario's primary fails, and then how
// long it is healthy, in turn.
const flapHalf = time.Second

// stallAfter is how many content chunks the Stall and Cut scenarios'
// streams send before they stall or are cut.
const stallAfter = 2

// dripEvery is the time between two content chunks of the Drip
// scenario's streams.
const dripEvery = 2 * time.Second

// Options configure a run. The zero value of each field means the default
// documented on it; the defaults are the laptop-sized outage: 80 req/s for
// 2 minutes, a 20 s storm from 60 s.
type Options struct {
	// Scenario is how the primary fails. "": Outage.
	Scenario Scenario
	// Rate is the requests per second each client sends. 0: 80.
	Rate float64
	// Duration is how long each client sends. 0: 2 minutes.
	Duration time.Duration
	// StormStart is when the storm begins, since the start. 0: half of
	// Duration.
	StormStart time.Duration
	// StormLength is how long it lasts. 0: a sixth of Duration.
	StormLength time.Duration
	// Latency is the median latency of both providers. 0: 250ms.
	Latency time.Duration
	// P99 is their 99th-percentile latency. 0: 900ms, or 2 × Latency if
	// that is more.
	P99 time.Duration
	// Spike is the extra latency of the LatencySpike and Slow scenarios.
	// 0: 2s for LatencySpike, 3s for Slow.
	Spike time.Duration
	// RetryAfter is the wait the Throttle scenario's 429s ask for. 0: 2s.
	RetryAfter time.Duration
	// Open is how long Fusebox's breaker stays open before a probe. 0: 3s;
	// 5s for Stall, Drip, Cut and HangHedge, as in
	// examples/silent-failures.yaml.
	Open time.Duration
	// Seed seeds the simulated providers; each client's pair gets the same
	// seeds.
	Seed uint64
	// Stream makes every client stream its requests (stream: true, with
	// usage) and read the events until data: [DONE] or the end of the
	// body. Stall, Partial, Drip and Cut stream whatever Stream says.
	Stream bool
	// Continue sets continue_on_failure: true on Fusebox's alias: a stream
	// that breaks after content reached the client goes on from the next
	// target.
	Continue bool
	// CommitAfter sets timeouts.commit_after on the silent scenarios'
	// alias: a stream is held until that many content events came, so one
	// that drips, stalls or is cut before then fails over unseen
	// (examples/silent-failures.yaml has 4; fusebox bench's default). 0:
	// none.
	CommitAfter int
	// Replicas is how many Fusebox gateways serve Fusebox's client, its
	// requests spread over them in turn, as a load balancer would. 0: 1.
	Replicas int
	// State is the gateways' state: "memory" (each its own) or a Redis
	// URL (shared, as a fleet). "": memory.
	State string
	// Progress, if set, is told how the run goes every ProgressEvery.
	Progress func(Progress)
	// ProgressEvery is how often Progress is called. 0: 10 s.
	ProgressEvery time.Duration

	// clientTimeout bounds one request of a client, retries included.
	// 0: 30s. Only tests shorten it, to keep hangs and stalls short.
	clientTimeout time.Duration
}

// withDefaults returns o with its zero fields filled.
func (o Options) withDefaults() Options {
	o.Scenario = cmp.Or(o.Scenario, Outage)
	o.Rate = cmp.Or(o.Rate, 80)
	o.Duration = cmp.Or(o.Duration, 2*time.Minute)
	o.StormStart = cmp.Or(o.StormStart, o.Duration/2)
	o.StormLength = cmp.Or(o.StormLength, o.Duration/6)
	o.Latency = cmp.Or(o.Latency, 250*time.Millisecond)
	o.P99 = cmp.Or(o.P99, max(900*time.Millisecond, 2*o.Latency))
	if o.Spike == 0 {
		o.Spike = 2 * time.Second
		if o.Scenario == Slow {
			o.Spike = 3 * time.Second
		}
	}
	o.Stream = o.Stream || o.Scenario.Streams()
	o.clientTimeout = cmp.Or(o.clientTimeout, 30*time.Second)
	o.RetryAfter = cmp.Or(o.RetryAfter, 2*time.Second)
	if o.Open == 0 {
		o.Open = 3 * time.Second
		if o.Scenario.silent() {
			o.Open = silentOpen
		}
	}
	o.Replicas = cmp.Or(o.Replicas, 1)
	o.State = cmp.Or(o.State, "memory")
	o.ProgressEvery = cmp.Or(o.ProgressEvery, 10*time.Second)
	return o
}

// Validate reports the first bad field of o, once defaults are filled.
func (o Options) Validate() error { return o.withDefaults().validate() }

// validate reports the first bad field of o, defaults filled.
func (o Options) validate() error {
	switch {
	case !slices.Contains(Scenarios, o.Scenario):
		return fmt.Errorf("outage: scenario %q: want one of %s", o.Scenario, scenarioList())
	case !(o.Rate > 0 && o.Rate <= 10000):
		return fmt.Errorf("outage: rate %g: want more than 0 and at most 10000 requests per second", o.Rate)
	case o.Duration < 0 || o.StormStart < 0 || o.StormLength < 0:
		return fmt.Errorf("outage: duration, storm start and storm length must not be negative")
	case o.StormStart+o.StormLength > o.Duration:
		return fmt.Errorf("outage: the storm (%v from %v) ends after the run (%v)", o.StormLength, o.StormStart, o.Duration)
	case o.Latency < 0 || o.P99 < o.Latency:
		return fmt.Errorf("outage: latency %v, p99 %v: want 0 ≤ latency ≤ p99", o.Latency, o.P99)
	case o.Spike < 0 || o.RetryAfter < 0 || o.Open < 0:
		return fmt.Errorf("outage: spike, retry-after and open must not be negative")
	case o.Replicas < 1 || o.Replicas > 16:
		return fmt.Errorf("outage: replicas %d: want 1 to 16", o.Replicas)
	case o.Scenario.crossCloud() && o.Stream:
		return fmt.Errorf("outage: stream: scenario %s calls Bedrock's InvokeModel, which the clients do not stream", o.Scenario)
	case o.State != "memory" && !strings.HasPrefix(o.State, "redis://") && !strings.HasPrefix(o.State, "rediss://"):
		return fmt.Errorf("outage: state %q: want memory or a redis:// URL", o.State)
	}
	return nil
}

// scenarioList names the scenarios, comma-separated.
func scenarioList() string {
	names := make([]string, len(Scenarios))
	for i, s := range Scenarios {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// stormEnd is when the storm ends, since the start.
func (o Options) stormEnd() time.Duration { return o.StormStart + o.StormLength }

// inStorm reports whether a request sent at t (since the start) was sent
// during the storm.
func (o Options) inStorm(t time.Duration) bool { return t >= o.StormStart && t < o.stormEnd() }

// faults are the primary's faults for the scenario, counted from when they
// are set (the start of the run).
func (o Options) faults() []sim.Fault {
	from, to := o.StormStart, o.stormEnd()
	f := sim.Fault{Fraction: 1, From: from, To: to}
	switch o.Scenario {
	case Throttle:
		f.Kind, f.RetryAfter = sim.Throttle, o.RetryAfter
	case LatencySpike, Slow:
		f.Kind, f.Extra = sim.LatencySpike, o.Spike
	case Hang, HangHedge:
		f.Kind = sim.Hang
	case Stall:
		f.Kind, f.AfterChunks = sim.Stall, stallAfter
	case Drip:
		f.Kind, f.Extra = sim.Drip, dripEvery
	case Cut:
		f.Kind, f.AfterChunks = sim.Reset, stallAfter
	case Flap:
		f.Kind, f.Status, f.Every, f.For = sim.ErrorStorm, 503, 2*flapHalf, flapHalf
	case Partial:
		f.Kind = sim.NoDone
	case Reset:
		f.Kind = sim.Reset
	case Overload529:
		f.Kind, f.Status = sim.ErrorStorm, 529
	default:
		f.Kind, f.Status = sim.ErrorStorm, 503
	}
	return []sim.Fault{f}
}

// Run runs the scenario for the three clients at once and returns what
// they saw. It takes about o.Duration, plus the time the last requests
// need to end. When ctx ends early, Run stops sending and reports on what
// was sent.
func Run(ctx context.Context, o Options) (*Result, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	var rigs []*rig
	defer func() {
		for _, r := range rigs {
			r.close()
		}
	}()
	for _, c := range Clients {
		r, err := newRig(c, o)
		if err != nil {
			return nil, err
		}
		rigs = append(rigs, r)
	}
	t0 := time.Now()
	for _, r := range rigs {
		if err := r.primary.sim.SetFaults(o.faults()); err != nil {
			return nil, err
		}
	}
	var wg sync.WaitGroup
	storm := make([]stormStats, len(rigs))
	wg.Go(func() { watchStorm(ctx, t0, o, rigs, storm) })
	for _, r := range rigs {
		wg.Go(func() { r.records = drive(ctx, t0, o, r.send, &r.counts) })
	}
	stop := reportProgress(t0, o, rigs)
	wg.Wait()
	stop()
	res := &Result{Options: o.report(), Policy: FuseboxPolicy(o), Start: t0}
	for i, r := range rigs {
		row := summarize(o, t0, r, storm[i])
		if r.kind == Fusebox {
			res.Transitions = r.gw.transitionsSince(t0)
			row.AfterOpen = afterOpen(o, t0, r, res.Transitions)
		}
		res.Rows = append(res.Rows, row)
	}
	res.Goals = res.checkGoals(o)
	return res, nil
}

// stormStats are a rig's providers' counts at the storm's start and end.
type stormStats struct{ atStart, atEnd snapshot }

// snapshot is the counts of a rig's two providers.
type snapshot struct{ primary, secondary sim.Stats }

// watchStorm snapshots the providers' stats when the storm starts and when
// it ends (or when ctx ends, for a run cut short).
func watchStorm(ctx context.Context, t0 time.Time, o Options, rigs []*rig, out []stormStats) {
	snap := func(set func(*stormStats, snapshot)) {
		for i, r := range rigs {
			set(&out[i], snapshot{r.primary.sim.Stats(), r.secondary.sim.Stats()})
		}
	}
	sleepUntil(ctx, t0.Add(o.StormStart))
	snap(func(s *stormStats, st snapshot) { s.atStart = st })
	sleepUntil(ctx, t0.Add(o.stormEnd()))
	snap(func(s *stormStats, st snapshot) { s.atEnd = st })
}

// sleepUntil waits until t or until ctx ends, and reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
