package outage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
)

// alias is the model name Fusebox's client asks for.
const alias = "smart"

// The timeouts and hedge of Fusebox's alias, as an operator would set them
// for every scenario: a first byte within 2s, no stream silent for 10s.
const (
	fuseboxTTFB  = 2 * time.Second
	fuseboxIdle  = 10 * time.Second
	fuseboxTotal = 120 * time.Second
	hedgeAfter   = 800 * time.Millisecond
	hedgeBudget  = 0.1
)

// The chat alias of examples/silent-failures.yaml, which the silent
// scenarios' Fusebox runs with (the defaults block folded in): 5
// consecutive failures trip; open 5s, × 1.5 after each failed probe up to
// 8s, a background probe at its end; a first content within 2s, no
// silence over 10s, a target suspect once every stream on it is silent
// 1s, streams that keep a third of their target's own recent pace
// (min_rate: auto), the first 4 content events held (commit_after, from
// Options.CommitAfter), 30s for a whole request; a hedge after 800ms.
const (
	silentConsecutive  = 5
	silentOpen         = 5 * time.Second
	silentMaxOpen      = 8 * time.Second
	silentSuspectAfter = time.Second
	silentDeadline     = 30 * time.Second
)

// FuseboxPolicy returns the blocks of the alias that Fusebox's client
// calls, as YAML, tuned as an operator would keep them: trip after 3
// consecutive failures (503s, resets, timeouts; 429s never count), stay
// open o.Open (fixed: the scenario's storm is short, so the default growth
// of the open period would only delay the return), then let 1 probe
// through; retry once on the last target,
// within a 20% budget; a first byte within 2s, no stream silent for 10s,
// 120s in all. For LatencySpike the breaker also trips when half of the
// last 20 calls (at least 10) took more than o.P99 + o.Spike/2; for Slow
// a request with no answer after 800ms is hedged to the secondary, for at
// most 10% of requests. o.Continue adds continue_on_failure: true.
//
// The silent scenarios (Stall, Drip, Cut, HangHedge) run with the chat
// alias of examples/silent-failures.yaml instead, as a user would copy
// it: see silentPolicy.
func FuseboxPolicy(o Options) string {
	o = o.withDefaults()
	if o.Scenario.silent() {
		return silentPolicy(o)
	}
	b := fmt.Sprintf("consecutive: 3, open: %v, open_backoff: 1, probes: 1", o.Open)
	if o.Scenario == LatencySpike {
		b = fmt.Sprintf("window_calls: 20, min_calls: 10, slow_call: %v, slow_call_rate: 0.5, ", slowCall(o)) + b
	}
	p := "breaker: {" + b + "}\n" +
		"retry: {attempts: 2, base: 100ms, max: 1s, budget: 0.2}\n" +
		fmt.Sprintf("timeouts: {ttfb: %s, idle: %s, total: %s}\n", yamlDuration(fuseboxTTFB), yamlDuration(fuseboxIdle), yamlDuration(fuseboxTotal))
	if o.Scenario == Slow {
		p += fmt.Sprintf("hedge: {after: %s, max: 1, budget: %g}\n", yamlDuration(hedgeAfter), hedgeBudget)
	}
	if o.Continue {
		p += "continue_on_failure: true\n"
	}
	return p
}

// silentPolicy is the chat alias of examples/silent-failures.yaml with
// the file's defaults block written out, its open period o.Open (5s
// unless set), o.Continue's continue_on_failure and o.CommitAfter's
// commit_after.
func silentPolicy(o Options) string {
	p := fmt.Sprintf("breaker: {consecutive: %d, open: %s, open_backoff: 1.5, max_open: %s, background_probe: true}\n",
		silentConsecutive, yamlDuration(o.Open), yamlDuration(max(silentMaxOpen, o.Open))) +
		"retry: {attempts: 2, same_target_wait: 0}\n" +
		fmt.Sprintf("timeouts: {ttfb: %s, idle: %s, total: 10m, deadline: %s, suspect_after: %s, min_rate: auto}\n",
			yamlDuration(fuseboxTTFB), yamlDuration(fuseboxIdle), yamlDuration(silentDeadline), yamlDuration(silentSuspectAfter)) +
		fmt.Sprintf("hedge: {after: %s, max: 1, budget: %g}\n", yamlDuration(hedgeAfter), hedgeBudget)
	if o.CommitAfter > 0 {
		p = strings.Replace(p, "min_rate: auto}", fmt.Sprintf("min_rate: auto, commit_after: %d}", o.CommitAfter), 1)
	}
	p += fmt.Sprintf("continue_on_failure: %v\n", o.Continue)
	return p
}

// yamlDuration writes d as the configuration reads it: whole milliseconds
// below a second ("800ms"), seconds otherwise ("120s").
func yamlDuration(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// slowCall is the duration from which the LatencySpike scenario's breaker
// counts a call as slow: above the normal tail, below the spike.
func slowCall(o Options) time.Duration { return o.P99 + o.Spike/2 }

// fuseboxConfig is the whole gateway configuration, as YAML, so that it
// goes through the same parsing and validation as a user's file.
func fuseboxConfig(o Options, primary, secondary *provider, prefix string) string {
	var b strings.Builder
	b.WriteString("listen: 127.0.0.1:0\n")
	if o.State != "memory" {
		// A prefix of the run's own: nothing left from another run counts.
		fmt.Fprintf(&b, "state: %s\nfleet: {prefix: %q}\n", o.State, prefix)
	}
	b.WriteString("providers:\n")
	if o.Scenario.crossCloud() {
		b.WriteString(crossCloudProviders(primary, secondary))
	} else {
		for _, p := range []*provider{primary, secondary} {
			fmt.Fprintf(&b, "  %s: {type: openai, base_url: %q, keys: [sim-key]}\n", p.name, p.url)
		}
	}
	fmt.Fprintf(&b, "models:\n  - name: %s\n    strategy: fallback\n    targets:\n", alias)
	m := targetModel(o.Scenario)
	pp, sp := prices(o.Scenario)
	fmt.Fprintf(&b, "      - {provider: %s, model: %s, price: {input: %g, output: %g}}\n", primary.name, m, pp.input, pp.output)
	fmt.Fprintf(&b, "      - {provider: %s, model: %s, price: {input: %g, output: %g}}\n", secondary.name, m, sp.input, sp.output)
	for line := range strings.Lines(FuseboxPolicy(o)) {
		b.WriteString("    " + line)
	}
	return b.String()
}

// fusebox is o.Replicas gateways serving on loopback ports, recording
// the first one's breaker transitions. It is safe for concurrent use.
type fusebox struct {
	urls []string // the API roots, ending in /v1
	next atomic.Uint64
	stop context.CancelFunc
	done chan error
	gws  []*gateway.Server

	// mu guards transitions.
	mu          sync.Mutex
	transitions []breaker.Transition
}

// startFusebox starts o.Replicas gateways in front of primary and
// secondary.
func startFusebox(o Options, primary, secondary *provider) (_ *fusebox, err error) {
	none := func(string) (string, bool) { return "", false }
	prefix := fmt.Sprintf("fusebox-bench:%d:", time.Now().UnixNano())
	cfg, err := config.Parse("bench", []byte(fuseboxConfig(o, primary, secondary, prefix)), none)
	if err != nil {
		return nil, fmt.Errorf("outage: gateway configuration: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	f := &fusebox{done: make(chan error, o.Replicas), stop: stop}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	for i := range o.Replicas {
		gwo := gateway.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if i == 0 {
			gwo.OnTransition = f.record
		}
		gw, err := gateway.New(gwo)
		if err != nil {
			return nil, err
		}
		f.gws = append(f.gws, gw)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		f.urls = append(f.urls, "http://"+ln.Addr().String()+"/v1")
		go func() { f.done <- gw.ListenAndServe(ctx, ln, time.Second) }()
	}
	return f, nil
}

// url returns the API root of the replica the next request goes to, in
// turn.
func (f *fusebox) url() string { return f.urls[(f.next.Add(1)-1)%uint64(len(f.urls))] }

func (f *fusebox) record(t breaker.Transition) {
	f.mu.Lock()
	f.transitions = append(f.transitions, t)
	f.mu.Unlock()
}

// transitionsSince returns the transitions of the primary's breaker, timed
// from t0.
func (f *fusebox) transitionsSince(t0 time.Time) []Transition {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Transition
	for _, t := range f.transitions {
		if !strings.HasPrefix(t.Name, "primary/") {
			continue
		}
		out = append(out, Transition{
			AtMS: ms(t.At.Sub(t0)), From: t.From.String(), To: t.To.String(), Reason: t.Reason.String(),
		})
	}
	return out
}

// close stops the gateways and waits for them.
func (f *fusebox) close() {
	f.stop()
	for range f.urls {
		<-f.done
	}
	for _, gw := range f.gws {
		gw.Close()
	}
}
