package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "meteor"}, `scenario "meteor": want one of outage, throttle, latency-spike, hang, slow, stall, flap, partial, reset, drip, cut, hang-hedge, overload529`},
		{[]string{"--scenario", "drip", "--open", "0s"}, "--open must be positive"},
		{[]string{"--scenario", "overload529", "--stream"}, "stream: scenario overload529"},
		{[]string{"--scenario", "slow", "--spike", "0s"}, "--spike must be positive"},
		{[]string{"--rate", "0"}, "--rate and --duration must be positive"},
	} {
		var out bytes.Buffer
		err := Run(context.Background(), append([]string{"bench"}, tc.args...), &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench %v: %v; want an error saying %s", tc.args, err, tc.want)
		}
	}
}

// A partial run streams whatever --stream says, and --continue reaches the
// alias.
func TestBenchPartialStreamsWithContinue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := Run(ctx, []string{"bench", "--scenario", "partial", "--continue", "--rate", "10", "--duration", "2s",
		"--storm-start", "500ms", "--storm-length", "1s", "--latency", "5ms", "--json", path, "--progress-every", "400ms"}, &out, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"10 streamed req/s", "| naive |", "| retry+failover |", "| fusebox |", "storm TTFB p99", "continue_on_failure: true", " of 2s, ", "fusebox "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Options struct {
			Scenario string `json:"scenario"`
			Stream   bool   `json:"stream"`
			Continue bool   `json:"continue_on_failure"`
		} `json:"options"`
		Rows []struct{ Requests int } `json:"rows"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if o := res.Options; o.Scenario != "partial" || !o.Stream || !o.Continue || len(res.Rows) != 3 || res.Rows[0].Requests != 20 {
		t.Errorf("JSON options %+v, %d rows (%+v); want partial, streamed, continue, 3 rows of 20 requests", o, len(res.Rows), res.Rows)
	}
}

// overload529 runs from the command line: the report says the ladder is
// cross-cloud and checks its two goals, and the JSON names the scenario.
func TestBenchOverload529(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := Run(ctx, []string{"bench", "--scenario", "overload529", "--rate", "10", "--duration", "2s",
		"--storm-start", "500ms", "--storm-length", "1s", "--latency", "5ms", "--open", "500ms", "--json", path}, &out, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"overload529 — Claude on Anthropic answers 529 overloaded_error", "Claude on Bedrock healthy",
		"AWS Bedrock", "client-visible failure during the storm", "calls to the primary per request during the storm", "| fusebox |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Options struct {
			Scenario string `json:"scenario"`
		} `json:"options"`
		Goals []struct{ Name string } `json:"goals"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Options.Scenario != "overload529" || len(res.Goals) != 2 {
		t.Errorf("JSON scenario %q, goals %+v; want overload529 and its two goals", res.Options.Scenario, res.Goals)
	}
}

// cut runs from the command line, streamed without --stream, with and
// without --continue: the alias is examples/silent-failures.yaml's chat
// alias (breaker open 5s unless --open), continue_on_failure follows the
// flag, and the report checks issue 28's goals.
func TestBenchCutWithAndWithoutContinue(t *testing.T) {
	for _, cont := range []bool{false, true} {
		args := []string{"bench", "--scenario", "cut", "--rate", "10", "--duration", "2s",
			"--storm-start", "500ms", "--storm-length", "1s", "--latency", "5ms"}
		if cont {
			args = append(args, "--continue")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var out bytes.Buffer
		err := Run(ctx, args, &out, &out)
		cancel()
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		for _, want := range []string{"10 streamed req/s", "cut — the primary's streams send the role chunk and 2 content chunks, then the connection is reset",
			"suspect_after: 1s", "open: 5s, open_backoff: 1.5, max_open: 8s", "continue_on_failure: " + map[bool]string{false: "false", true: "true"}[cont],
			"the primary's breaker opens", "(want ≤ 6.00 s (open 5s + 1 s))"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("continue %v: output lacks %q:\n%s", cont, want, out.String())
			}
		}
	}
}
