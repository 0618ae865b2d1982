package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	bench "github.com/fuseboxhq/fusebox/internal/outage" // demo.go has a func outage
	"github.com/spf13/cobra"
)

type benchOptions struct {
	bench.Options
	scenario string
	jsonPath string
	svgPath  string
	// rateSet and durationSet: --rate and --duration were given (mcp-hang
	// has defaults of its own).
	rateSet, durationSet bool
}

func benchCommand() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Reproduce a provider outage against simulated providers and compare a naive client, retry+failover and Fusebox",
		Long: `bench sends steady traffic through three clients at once, each to its own
pair of simulated providers (same seeds), while the primary fails for a
while: a naive client (3 retries with backoff), retry+failover without a
breaker, and Fusebox. It prints a Markdown table, checks Fusebox's row
against the goals, and can write the figures as JSON and a chart as SVG.

Scenarios, by how the primary fails during the storm:
  outage         503 to every call
  throttle       429 with Retry-After; the breaker must stay closed
  latency-spike  answers --spike (default 2s) later than usual
  hang           accepts every call and sends nothing, not even headers
  slow           answers --spike (default 3s) later; Fusebox hedges
  stall          streams 2 content chunks, then nothing (streamed requests)
  flap           503 for 1s, healthy for 1s, in turn
  partial        streams the whole answer, then ends without data: [DONE]
                 (streamed requests)
  reset          resets the connection before any byte
  drip           streams its first content, then a chunk every 2s and never
                 its end (streamed requests)
  cut            streams 2 content chunks, then resets the connection
                 (streamed requests)
  hang-hedge     as hang, while Fusebox hedges after 800ms
  overload529    a cross-cloud ladder: Claude on Anthropic (type anthropic)
                 answers 529 overloaded_error; Claude on Bedrock (type
                 bedrock, SigV4) serves; the clients send Anthropic
                 Messages requests (not streamed)
  jobs           video jobs: capacity refusals replayed for their key,
                 queue_full, answers lost after the job was made; a naive
                 client with the same key, one with a new key per retry,
                 and Fusebox (docs/JOBS.md)
  mcp-hang       an agent's read-only tool calls through /mcp (--rate,
                 default 20/s here) while one of the tool server's two
                 replicas hangs for 10s (docs/MCP.md)

--stream streams the requests of any scenario but overload529; stall,
partial, drip and cut always stream. --continue sets continue_on_failure on
Fusebox's alias. stall, drip, cut and hang-hedge run Fusebox with the chat
alias of examples/silent-failures.yaml (breaker open 5s unless --open).
--replicas 3 puts three Fusebox gateways behind its client, each request
to the next in turn; with --state redis://… they share their breakers, so
the outage is learned once for the fleet instead of once per replica.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Scenario = bench.Scenario(o.scenario)
			o.rateSet, o.durationSet = cmd.Flags().Changed("rate"), cmd.Flags().Changed("duration")
			// Unset, these follow the flags they depend on: the storm from
			// half of --duration for a sixth of it, p99 from --latency,
			// the spike from --scenario.
			if err := positiveIfSet(cmd, "storm-start", &o.StormStart); err != nil {
				return err
			}
			if err := positiveIfSet(cmd, "storm-length", &o.StormLength); err != nil {
				return err
			}
			if err := positiveIfSet(cmd, "p99", &o.P99); err != nil {
				return err
			}
			if err := positiveIfSet(cmd, "spike", &o.Spike); err != nil {
				return err
			}
			if err := positiveIfSet(cmd, "open", &o.Open); err != nil {
				return err
			}
			return runBench(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", string(bench.Outage), "how the primary fails: "+scenarioNames())
	f.Float64Var(&o.Rate, "rate", 80, "requests per second, per client")
	f.DurationVar(&o.Duration, "duration", 2*time.Minute, "how long each client sends")
	f.DurationVar(&o.StormStart, "storm-start", 0, "when the storm begins (default: half of --duration, 1m0s)")
	f.DurationVar(&o.StormLength, "storm-length", 0, "how long the storm lasts (default: a sixth of --duration, 20s)")
	f.DurationVar(&o.Latency, "latency", 250*time.Millisecond, "median latency of the simulated providers")
	f.DurationVar(&o.P99, "p99", 0, "99th-percentile latency of the simulated providers (default: 900ms, or 2 × --latency if more)")
	f.DurationVar(&o.Spike, "spike", 0, "extra latency of the primary during a latency-spike or slow storm (default: 2s for latency-spike, 3s for slow)")
	f.DurationVar(&o.RetryAfter, "retry-after", 2*time.Second, "Retry-After of the primary's 429s during a throttle storm")
	f.DurationVar(&o.Open, "open", 0, "how long Fusebox's breaker stays open before a probe (default: 3s; 5s for stall, drip, cut and hang-hedge)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the simulated providers")
	f.BoolVar(&o.Stream, "stream", false, "stream every request (stall, partial, drip and cut always do)")
	f.BoolVar(&o.Continue, "continue", false, "set continue_on_failure: true on Fusebox's alias")
	f.IntVar(&o.CommitAfter, "commit-after", 4, "timeouts.commit_after of the silent scenarios' alias, as examples/silent-failures.yaml has it; 0: none")
	f.IntVar(&o.Replicas, "replicas", 1, "Fusebox gateways serving its client, requests spread over them in turn")
	f.StringVar(&o.State, "state", "memory", "the gateways' state: memory (each its own) or a Redis URL, redis://host:port/db (shared)")
	f.DurationVar(&o.ProgressEvery, "progress-every", 10*time.Second, "print a line of progress this often")
	f.StringVar(&o.jsonPath, "json", "", "write the figures as JSON to this file")
	f.StringVar(&o.svgPath, "svg", "", "write the chart as SVG to this file")
	return cmd
}

// progressLine is one line of a run's progress: where it is, and each
// client's requests ended and failed so far.
func progressLine(p bench.Progress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %v of %v, %s:", p.Elapsed.Round(time.Second), p.Duration, p.Phase)
	for i, c := range p.Clients {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %d ended, %d failed", c.Client, c.Ended, c.Failed)
	}
	return b.String()
}

// runJobsBench runs the jobs scenario: the same jobs asked for by a naive
// client that retries with the same key, one that takes a new key per
// retry, and Fusebox, against simulated video providers.
func runJobsBench(ctx context.Context, o benchOptions, out io.Writer) error {
	fmt.Fprintln(out, "fusebox bench: scenario jobs; three clients at once...")
	res, err := bench.RunJobs(ctx, bench.JobsOptions{Seed: o.Seed})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprint(out, res.Markdown())
	if o.jsonPath != "" {
		return writeJSON(o.jsonPath, res)
	}
	return nil
}

// writeJSON writes a bench's figures as indented JSON to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// scenarioNames lists the scenarios for the --scenario help.
func scenarioNames() string {
	names := make([]string, 0, len(bench.Scenarios)+1)
	for _, s := range bench.Scenarios {
		names = append(names, string(s))
	}
	return strings.Join(append(names, string(bench.Jobs), string(bench.MCPHang)), ", ")
}

// positiveIfSet checks a duration flag whose default (0) bench.Options derives
// from the others: given, it must be positive.
func positiveIfSet(cmd *cobra.Command, name string, d *time.Duration) error {
	if cmd.Flags().Changed(name) && *d <= 0 {
		return fmt.Errorf("bench: --%s must be positive", name)
	}
	return nil
}

func runBench(ctx context.Context, o benchOptions, out io.Writer) error {
	if o.Scenario == bench.Jobs { // its own engine: jobs, not a request rate
		return runJobsBench(ctx, o, out)
	}
	if o.Scenario == bench.MCPHang { // tool calls, not model requests
		return runMCPBench(ctx, o, out)
	}
	if o.Rate <= 0 || o.Duration <= 0 {
		return fmt.Errorf("bench: --rate and --duration must be positive")
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	streamed := ""
	if o.Stream || o.Scenario.Streams() {
		streamed = " streamed"
	}
	fmt.Fprintf(out, "fusebox bench: scenario %s, %g%s req/s per client for %v; three clients at once...\n", o.Scenario, o.Rate, streamed, o.Duration)
	o.Progress = func(p bench.Progress) { fmt.Fprintln(out, progressLine(p)) }
	res, err := bench.Run(ctx, o.Options)
	fmt.Fprintln(out)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	fmt.Fprint(out, res.Markdown())
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, res); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nJSON: %s\n", o.jsonPath)
	}
	if o.svgPath != "" {
		var b bytes.Buffer
		if err := res.WriteSVG(&b); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if err := os.WriteFile(o.svgPath, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		fmt.Fprintf(out, "chart: %s\n", o.svgPath)
	}
	return nil
}
