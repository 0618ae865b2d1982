package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
)

// Settings against silent failures: adaptive and whole-request timeouts,
// suspect targets, hedges, same-target retries, continued streams, breaker
// recovery and refused keys.

func parseOK(t *testing.T, lines ...string) *Config {
	t.Helper()
	c, err := Parse("f.yaml", doc(lines...), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	buildAll(t, c)
	return c
}

func TestAutoTimeoutsInherit(t *testing.T) {
	c := parseOK(t,
		"providers:",
		"  openai: {timeouts: {ttfb: auto}}",
		"  anthropic: {timeouts: {idle: 20s}}",
		"defaults:",
		"  timeouts: {ttfb: 45s, idle: auto}",
		"models:",
		"  - name: inherits",
		"    targets: [{provider: openai, model: gpt}, {provider: anthropic, model: claude}]",
		"  - name: fixed",
		"    timeouts: {ttfb: 3s}",
		"    targets: [{provider: openai, model: gpt}]",
		"  - name: own-auto",
		"    timeouts: {ttfb: Auto, idle: \" auto \"}",
		"    targets: [{provider: anthropic, model: claude}]",
	)
	ms := 3750 * time.Millisecond
	tests := []struct {
		name string
		got  Timeouts
		want Timeouts
	}{
		{"defaults.timeouts", c.Defaults.Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 45 * time.Second, Idle: 30 * time.Second, AutoIdle: true, Total: 10 * time.Minute, SuspectAfter: ms, AutoSuspect: true}},
		{"providers.openai", c.Providers["openai"].Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 45 * time.Second, AutoTTFB: true, Idle: 30 * time.Second, AutoIdle: true, Total: 10 * time.Minute, SuspectAfter: ms, AutoSuspect: true}},
		{"providers.anthropic (a duration beats an inherited auto)", c.Providers["anthropic"].Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 45 * time.Second, Idle: 20 * time.Second, Total: 10 * time.Minute, SuspectAfter: 2500 * time.Millisecond, AutoSuspect: true}},
		{"inherits → openai (the provider's auto)", c.Models[0].Targets[0].Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 45 * time.Second, AutoTTFB: true, Idle: 30 * time.Second, AutoIdle: true, Total: 10 * time.Minute, SuspectAfter: ms, AutoSuspect: true}},
		{"inherits → anthropic", c.Models[0].Targets[1].Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 45 * time.Second, Idle: 20 * time.Second, Total: 10 * time.Minute, SuspectAfter: 2500 * time.Millisecond, AutoSuspect: true}},
		{"fixed → openai (the alias's ttfb beats the provider's auto)", c.Models[1].Targets[0].Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 3 * time.Second, Idle: 30 * time.Second, AutoIdle: true, Total: 10 * time.Minute, SuspectAfter: ms, AutoSuspect: true}},
		{"own-auto (alias block)", c.Models[2].Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 45 * time.Second, AutoTTFB: true, Idle: 30 * time.Second, AutoIdle: true, Total: 10 * time.Minute, SuspectAfter: ms, AutoSuspect: true}},
		{"own-auto → anthropic (auto under the provider's ceiling)", c.Models[2].Targets[0].Timeouts,
			Timeouts{Connect: 5 * time.Second, TTFB: 45 * time.Second, AutoTTFB: true, Idle: 20 * time.Second, AutoIdle: true, Total: 10 * time.Minute, SuspectAfter: 2500 * time.Millisecond, AutoSuspect: true}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, tt.got, tt.want)
		}
	}
}

func TestAutoCeilingIsTheBuiltInOrNone(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {}}",
		"defaults: {timeouts: {ttfb: auto, idle: 0}}",
		"models:",
		"  - name: a",
		"    timeouts: {idle: auto, ttfb: auto, total: 30s}", // auto skips the ttfb ≤ total check
		"    targets: [{provider: openai, model: m}]",
	)
	if d := c.Defaults.Timeouts; d.TTFB != DefaultTTFBTimeout || !d.AutoTTFB || d.Idle != 0 || d.AutoIdle || d.SuspectAfter != 0 {
		t.Errorf("defaults.timeouts = %+v, want ttfb auto under the built-in 60s, idle off", d)
	}
	if got := c.Models[0].Targets[0].Timeouts; got.TTFB != DefaultTTFBTimeout || !got.AutoTTFB || got.Idle != 0 || !got.AutoIdle || got.SuspectAfter != 0 {
		t.Errorf("target timeouts = %+v, want idle auto with no ceiling and suspect_after off", got)
	}
}

func TestAutoFromEnvironment(t *testing.T) {
	c, err := Parse("f.yaml", with("defaults: {timeouts: {ttfb: \"${TTFB:-auto}\"}}"), envOf(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Defaults.Timeouts.AutoTTFB || c.Defaults.Timeouts.TTFB != DefaultTTFBTimeout {
		t.Errorf("defaults.timeouts = %+v, want auto from ${TTFB:-auto}", c.Defaults.Timeouts)
	}
}

func TestSuspectAfterDefaults(t *testing.T) {
	c := parseOK(t,
		"providers:",
		"  openai: {timeouts: {idle: 1s}}",
		"  anthropic: {timeouts: {suspect_after: 2s, idle: 40s}}",
		"  groq: {type: openai, base_url: http://127.0.0.1:1/v1, timeouts: {idle: 0}}",
		"defaults:",
		"  timeouts: {idle: 16s}",
		"models:",
		"  - name: a",
		"    timeouts: {idle: 8s}",
		"    targets: [{provider: openai, model: m}, {provider: anthropic, model: m}, {provider: groq, model: m}]",
		"  - name: off",
		"    timeouts: {suspect_after: 0}",
		"    targets: [{provider: anthropic, model: m}]",
	)
	a := c.Models[0]
	for _, tt := range []struct {
		name      string
		got, want time.Duration
	}{
		{"defaults (16s/8)", c.Defaults.Timeouts.SuspectAfter, 2 * time.Second},
		{"openai (1s/8, raised to 250ms)", c.Providers["openai"].Timeouts.SuspectAfter, 250 * time.Millisecond},
		{"anthropic (its own)", c.Providers["anthropic"].Timeouts.SuspectAfter, 2 * time.Second},
		{"groq (idle 0: off)", c.Providers["groq"].Timeouts.SuspectAfter, 0},
		{"alias a (its idle 8s/8)", a.Timeouts.SuspectAfter, time.Second},
		{"a → openai (from the alias's idle, not the provider's)", a.Targets[0].Timeouts.SuspectAfter, time.Second},
		{"a → anthropic (the provider set it)", a.Targets[1].Timeouts.SuspectAfter, 2 * time.Second},
		{"a → groq (the alias's idle beats the provider's 0)", a.Targets[2].Timeouts.SuspectAfter, time.Second},
		{"off → anthropic (explicit 0)", c.Models[1].Targets[0].Timeouts.SuspectAfter, 0},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: suspect_after = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestDeadlineIsTheAlias(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {}}",
		"defaults: {timeouts: {deadline: 30s}}",
		"models:",
		"  - {name: a, timeouts: {deadline: 5s}, targets: [{provider: openai, model: m}]}",
		"  - {name: b, targets: [{provider: openai, model: m}]}",
		"  - {name: c, timeouts: {deadline: 0}, targets: [{provider: openai, model: m}]}",
	)
	for i, want := range []time.Duration{5 * time.Second, 30 * time.Second, 0} {
		m := c.Models[i]
		if m.Timeouts.Deadline != want || m.Targets[0].Timeouts.Deadline != want {
			t.Errorf("%s: deadline = %v (target %v), want %v", m.Name, m.Timeouts.Deadline, m.Targets[0].Timeouts.Deadline, want)
		}
	}
	if d := parseOK(t, valid...).Defaults.Timeouts.Deadline; d != 0 {
		t.Errorf("default deadline = %v, want 0", d)
	}
}

func TestHedgeSettings(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {}, anthropic: {}}",
		"models:",
		"  - name: hedged",
		"    targets: [{provider: openai, model: a}, {provider: anthropic, model: b}, {provider: openai, model: c}]",
		"    hedge: {after: 800ms}",
		"  - name: percentile",
		"    targets: [{provider: openai, model: a}, {provider: anthropic, model: b}, {provider: openai, model: c}]",
		"    hedge: {after: p99.9, max: 2, budget: 0.05}",
		"  - name: plain",
		"    targets: [{provider: openai, model: a}, {provider: anthropic, model: b}]",
		"  - name: empty",
		"    targets: [{provider: openai, model: a}]",
		"    hedge:",
	)
	for i, want := range []Hedge{
		{After: 800 * time.Millisecond, Max: 1, Budget: 0.1},
		{AfterQuantile: 0.999, Max: 2, Budget: 0.05},
		{},
		{},
	} {
		if got := c.Models[i].Hedge; got != want {
			t.Errorf("%s: hedge = %+v, want %+v", c.Models[i].Name, got, want)
		}
		if got := c.Models[i].Hedge.Enabled(); got != (i < 2) {
			t.Errorf("%s: Enabled() = %v", c.Models[i].Name, got)
		}
	}
}

func TestParsePercentile(t *testing.T) {
	for in, want := range map[string]float64{"p50": 0.5, "p95": 0.95, "p99": 0.99, "p99.9": 0.999, "p75.5": 0.755, "p90.0": 0.9} {
		if got, ok := parsePercentile(in); !ok || got != want {
			t.Errorf("parsePercentile(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"p", "p5", "p49", "p49.9", "p100", "p99.95", "p95.", "p.5", "p9x", "p-9", "p+9", "p 95"} {
		if got, ok := parsePercentile(in); ok {
			t.Errorf("parsePercentile(%q) = %v, want an error", in, got)
		}
	}
}

func TestBreakerRecoveryDefaults(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {}}",
		"defaults: {breaker: {consecutive: 3, background_probe: true}}",
		"models:",
		"  - {name: builtin, targets: [{provider: openai, model: m}]}",
		"  - {name: long-open, breaker: {open: 30s}, targets: [{provider: openai, model: m}]}",
		"  - {name: short-open, breaker: {open: 2s, background_probe: false}, targets: [{provider: openai, model: m}]}",
		"  - name: explicit",
		"    breaker: {open: 10s, open_backoff: 2, max_open: 1m}",
		"    targets: [{provider: openai, model: m}]",
		"  - {name: zeros, breaker: {open: 0, open_backoff: 0, max_open: 0}, targets: [{provider: openai, model: m}]}",
	)
	builtin := Breaker{Consecutive: 3, Open: 5 * time.Second, OpenBackoff: 1.5, MaxOpen: 8 * time.Second, BackgroundProbe: true}
	if c.Defaults.Breaker != builtin {
		t.Errorf("defaults.breaker = %+v, want %+v", c.Defaults.Breaker, builtin)
	}
	for i, want := range []Breaker{
		builtin,
		{Consecutive: 3, Open: 30 * time.Second, OpenBackoff: 1.5, MaxOpen: 30 * time.Second, BackgroundProbe: true},
		{Consecutive: 3, Open: 2 * time.Second, OpenBackoff: 1.5, MaxOpen: 8 * time.Second},
		{Consecutive: 3, Open: 10 * time.Second, OpenBackoff: 2, MaxOpen: time.Minute, BackgroundProbe: true},
		builtin,
	} {
		if got := c.Models[i].Breaker; got != want {
			t.Errorf("%s: breaker = %+v, want %+v", c.Models[i].Name, got, want)
		}
	}
	if _, err := breaker.New(c.Defaults.Breaker.Settings()); err != nil {
		t.Errorf("defaults.breaker: %v", err)
	}
}

func TestBreakerMaxOpenFollowsInheritedOpen(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {}}",
		"defaults: {breaker: {open: 20s}}",
		"models:",
		"  - {name: inherits, targets: [{provider: openai, model: m}]}",
		"  - {name: shorter, breaker: {open: 3s}, targets: [{provider: openai, model: m}]}",
	)
	if b := c.Defaults.Breaker; b.Open != 20*time.Second || b.MaxOpen != 20*time.Second {
		t.Errorf("defaults.breaker = %+v, want open = max_open = 20s", b)
	}
	if b := c.Models[0].Breaker; b.Open != 20*time.Second || b.MaxOpen != 20*time.Second {
		t.Errorf("inherits: breaker = %+v, want open = max_open = 20s", b)
	}
	if b := c.Models[1].Breaker; b.Open != 3*time.Second || b.MaxOpen != 8*time.Second {
		t.Errorf("shorter: breaker = %+v, want max_open 8s from its own open", b)
	}
}

func TestSameTargetWait(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {}}",
		"models:",
		"  - {name: builtin, targets: [{provider: openai, model: m}]}",
		"  - {name: off, retry: {same_target_wait: 0s}, targets: [{provider: openai, model: m}]}",
	)
	if c.Defaults.Retry.SameTargetWait != 2*time.Second || c.Models[0].Retry.SameTargetWait != 2*time.Second {
		t.Errorf("same_target_wait = %v, %v, want 2s", c.Defaults.Retry.SameTargetWait, c.Models[0].Retry.SameTargetWait)
	}
	if got := c.Models[1].Retry.SameTargetWait; got != 0 {
		t.Errorf("off: same_target_wait = %v, want 0", got)
	}
	c = parseOK(t,
		"providers: {openai: {}}",
		"defaults: {retry: {same_target_wait: 500ms}}",
		"models: [{name: a, retry: {attempts: 2}, targets: [{provider: openai, model: m}]}]",
	)
	if got := c.Models[0].Retry.SameTargetWait; got != 500*time.Millisecond {
		t.Errorf("inherited same_target_wait = %v, want 500ms", got)
	}
}

func TestAuthRestAndProbe(t *testing.T) {
	c := parseOK(t,
		"providers:",
		"  openai: {}",
		"  anthropic: {auth_rest: 1h, auth_probe: 1m}",
		"models: [{name: a, targets: [{provider: openai, model: m}]}]",
	)
	if p := c.Providers["openai"]; p.AuthRest != 5*time.Minute || p.AuthProbe != 0 {
		t.Errorf("openai: auth_rest, auth_probe = %v, %v; want 5m, 0", p.AuthRest, p.AuthProbe)
	}
	if p := c.Providers["anthropic"]; p.AuthRest != time.Hour || p.AuthProbe != time.Minute {
		t.Errorf("anthropic: auth_rest, auth_probe = %v, %v; want 1h, 1m", p.AuthRest, p.AuthProbe)
	}
}

func TestContinueOnFailure(t *testing.T) {
	for _, word := range []string{"true", "True", "yes", "on", "\"true\""} {
		c := parseOK(t,
			"providers: {openai: {}}",
			"models: [{name: a, continue_on_failure: "+word+", targets: [{provider: openai, model: m}, {provider: openai, model: n}]}]",
		)
		if !c.Models[0].ContinueOnFailure {
			t.Errorf("continue_on_failure: %s decoded as false", word)
		}
	}
	c := parseOK(t, valid...)
	if c.Models[0].ContinueOnFailure {
		t.Error("continue_on_failure defaults to true, want false")
	}
	c = parseOK(t, "providers: {openai: {}}",
		"models: [{name: a, continue_on_failure: off, targets: [{provider: openai, model: m}]}]")
	if c.Models[0].ContinueOnFailure {
		t.Error("continue_on_failure: off decoded as true")
	}
}

// TestCarelessFile is written the way people write YAML in a hurry: block
// and flow styles mixed, words in capitals, quoted durations, empty values,
// YAML 1.1 booleans.
func TestCarelessFile(t *testing.T) {
	c := parseOK(t,
		"providers:",
		"  openai:",
		"    keys: [k]",
		"    auth_rest: \"10m\"",
		"    auth_probe: 30s",
		"    timeouts:",
		"      ttfb: AUTO",
		"      idle:",
		"defaults:",
		"  timeouts: {idle: 10s, deadline: ' 2m '}",
		"  retry:",
		"    same_target_wait: 1s",
		"models:",
		"- name: fast",
		"  hedge:",
		"    after: P95",
		"  continue_on_failure: Yes",
		"  targets:",
		"  - provider: openai",
		"    model: a",
		"  - {provider: openai, model: b}",
		"  retry: {same_target_wait: 0}",
		"  breaker:",
		"    background_probe: on",
	)
	p, m := c.Providers["openai"], c.Models[0]
	if p.AuthRest != 10*time.Minute || p.AuthProbe != 30*time.Second {
		t.Errorf("provider = %+v", p)
	}
	tt := m.Targets[0].Timeouts
	if !tt.AutoTTFB || tt.TTFB != DefaultTTFBTimeout || tt.Idle != 10*time.Second || tt.AutoIdle || tt.Deadline != 2*time.Minute || tt.SuspectAfter != 1250*time.Millisecond {
		t.Errorf("target timeouts = %+v", tt)
	}
	if m.Hedge != (Hedge{AfterQuantile: 0.95, Max: 1, Budget: 0.1}) || !m.ContinueOnFailure || !m.Breaker.BackgroundProbe {
		t.Errorf("alias = %+v", m)
	}
	if c.Defaults.Retry.SameTargetWait != time.Second || m.Retry.SameTargetWait != 0 {
		t.Errorf("same_target_wait = %v, %v", c.Defaults.Retry.SameTargetWait, m.Retry.SameTargetWait)
	}
}

func TestStringShowsWords(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {}}",
		"models:",
		"  - name: a",
		"    timeouts: {ttfb: auto}",
		"    hedge: {after: p99.9}",
		"    continue_on_failure: true",
		"    targets: [{provider: openai, model: m}, {provider: openai, model: n}]",
	)
	s := c.String()
	for _, want := range []string{"ttfb: auto # at most 1m0s", "after: p99.9", "continue_on_failure: true", "auth_rest: 5m0s", "same_target_wait: 2s"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}

func TestSilentFailureErrors(t *testing.T) {
	two := func(extra ...string) []byte {
		return doc(append([]string{
			"providers: {openai: {keys: [k]}}", // 1
			"models:",                          // 2
			"  - name: smart",                  // 3
			"    targets: [{provider: openai, model: a}, {provider: openai, model: b}]", // 4
		}, extra...)...)
	}
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"a word that is not auto", with("defaults: {timeouts: {ttfb: automatic}}"),
			[]string{`f.yaml:8: defaults.timeouts.ttfb: bad duration "automatic" (want a number and a unit: 200ms, 5s, 2m, 1h; or auto)`}},
		{"auto in a list", with("defaults: {timeouts: {idle: [auto]}}"),
			[]string{`f.yaml:8: defaults.timeouts.idle: want a duration or auto, got a list`}},
		{"auto where it is not offered", with("defaults: {timeouts: {total: auto}}"),
			[]string{`f.yaml:8: defaults.timeouts.total: bad duration "auto" (want a number and a unit: 200ms, 5s, 2m, 1h)`}},
		{"deadline on a provider", doc(
			"providers:",
			"  openai: {timeouts: {deadline: 30s}}",
			oneAlias),
			[]string{`f.yaml:2: providers.openai.timeouts.deadline: deadline bounds a whole request, across targets: set it in the alias's timeouts or in defaults.timeouts`}},
		{"negative deadline and suspect_after", with("defaults: {timeouts: {deadline: -1s, suspect_after: -5ms}}"),
			[]string{
				`f.yaml:8: defaults.timeouts.deadline: must not be negative, got -1s`,
				`f.yaml:8: defaults.timeouts.suspect_after: must not be negative, got -5ms`,
			}},
		{"suspect_after not below idle", with("defaults: {timeouts: {idle: 10s, suspect_after: 10s}}"),
			[]string{`f.yaml:8: defaults.timeouts.suspect_after: suspect_after (10s) is not below idle (10s): streams would time out before the target is suspected`}},
		{"commit_after above its cap", with("defaults: {timeouts: {commit_after: 33}}"),
			[]string{`f.yaml:8: defaults.timeouts.commit_after: commit_after (33) is above 32: a held stream's events are kept in memory until it commits`}},
		{"negative commit_after", with("defaults: {timeouts: {commit_after: -1}}"),
			[]string{`f.yaml:8: defaults.timeouts.commit_after: must not be negative, got -1`}},
		{"hedge without after", two("    hedge: {max: 1}"),
			[]string{`f.yaml:5: models[0].hedge.after: hedge needs after: a duration such as 800ms, or a percentile such as p95`}},
		{"empty hedge", two("    hedge: {}"),
			[]string{`f.yaml:5: models[0].hedge.after: hedge needs after: a duration such as 800ms, or a percentile such as p95`}},
		{"hedge after 0", two("    hedge:", "      after: 0s"),
			[]string{`f.yaml:6: models[0].hedge.after: hedge needs after: a duration such as 800ms, or a percentile such as p95`}},
		{"hedge after without a unit", two("    hedge: {after: 800}"),
			[]string{`f.yaml:5: models[0].hedge.after: bad value "800" (want a duration such as 800ms, or a percentile such as p95)`}},
		{"hedge after as a percent", two("    hedge: {after: 95%}"),
			[]string{`f.yaml:5: models[0].hedge.after: bad value "95%" (want a duration such as 800ms, or a percentile such as p95)`}},
		{"hedge percentile out of range", two("    hedge: {after: p100}"),
			[]string{`f.yaml:5: models[0].hedge.after: bad percentile "p100" (want p50 to p99.9, at most one decimal: p90, p95, p99.9)`}},
		{"hedge percentile too precise", two("    hedge: {after: p99.95}"),
			[]string{`f.yaml:5: models[0].hedge.after: bad percentile "p99.95" (want p50 to p99.9, at most one decimal: p90, p95, p99.9)`}},
		{"hedge after negative", two("    hedge: {after: -1s}"),
			[]string{`f.yaml:5: models[0].hedge.after: must not be negative, got -1s`}},
		{"hedge after not below ttfb", two("    timeouts: {ttfb: 2s}", "    hedge: {after: 2s}"),
			[]string{`f.yaml:6: models[0].hedge.after: after (2s) is not below the ttfb of openai/a (2s): its attempt would time out before the hedge is sent`}},
		{"hedge on one target", with("    hedge: {after: 800ms}"),
			[]string{`f.yaml:8: models[0].hedge: alias "smart" has one target: a hedge is sent to the next target, so it needs at least two`}},
		{"hedge max above the targets", two("    hedge: {after: p95, max: 2}"),
			[]string{`f.yaml:5: models[0].hedge.max: max 2 needs 3 targets (each hedge goes to the next one), the alias has 2`}},
		{"hedge max out of range", two("    hedge: {after: p95, max: 4}"),
			[]string{`f.yaml:5: models[0].hedge.max: must be from 1 to 3, got 4`}},
		{"hedge max 0", two("    hedge: {after: p95, max: 0}"),
			[]string{`f.yaml:5: models[0].hedge.max: must be from 1 to 3, got 0`}},
		{"hedge budget 0", two("    hedge: {after: p95, budget: 0}"),
			[]string{`f.yaml:5: models[0].hedge.budget: must be a fraction in (0, 1], got 0`}},
		{"hedge budget above 1", two("    hedge: {after: p95, budget: 10}"),
			[]string{`f.yaml:5: models[0].hedge.budget: must be a fraction in (0, 1], got 10`}},
		{"hedge budget as a percent", two("    hedge: {after: p95, budget: 10%}"),
			[]string{`f.yaml:5: models[0].hedge.budget: want a number, got "10%"`}},
		{"hedge in defaults", with("defaults: {hedge: {after: 1s}}"),
			[]string{`f.yaml:8: defaults.hedge: unknown field (known: breaker, retry, timeouts)`}},
		{"hedge as a boolean", two("    hedge: true"),
			[]string{`f.yaml:5: models[0].hedge: want a mapping, got "true"`}},
		{"continue_on_failure not a boolean", two("    continue_on_failure: maybe"),
			[]string{`f.yaml:5: models[0].continue_on_failure: want true or false, got "maybe"`}},
		{"continue_on_failure on one target", with("    continue_on_failure: true"),
			[]string{`f.yaml:8: models[0].continue_on_failure: alias "smart" has one target: a broken stream is continued on the next target, so it needs at least two`}},
		{"background_probe misspelt", with("defaults: {breaker: {backgroundProbe: true}}"),
			[]string{`f.yaml:8: defaults.breaker.backgroundProbe: unknown field, did you mean "background_probe"?`}},
		{"background_probe as a number", with("defaults: {breaker: {background_probe: 1}}"),
			[]string{`f.yaml:8: defaults.breaker.background_probe: want true or false, got "1"`}},
		{"max_open below the default open", with("defaults: {breaker: {max_open: 3s}}"),
			[]string{`f.yaml:8: defaults.breaker.max_open: is below open (5s)`}},
		{"max_open in defaults below an alias's open", with("    breaker: {open: 30s}", "defaults: {breaker: {max_open: 10s}}"),
			[]string{`f.yaml:8: models[0].breaker.max_open: is below open (30s)`}},
		{"same_target_wait without a unit", with("defaults: {retry: {same_target_wait: 2}}"),
			[]string{`f.yaml:8: defaults.retry.same_target_wait: bad duration "2" (want a number and a unit: 200ms, 5s, 2m, 1h)`}},
		{"same_target_wait negative", with("    retry: {same_target_wait: -1s}"),
			[]string{`f.yaml:8: models[0].retry.same_target_wait: must not be negative, got -1s`}},
		{"same_target_wait on the alias", with("    same_target_wait: 1s"),
			[]string{`f.yaml:8: models[0].same_target_wait: unknown field (known: name, strategy, targets, breaker, retry, timeouts, failover_on, cache, degraded, hedge, continue_on_failure)`}},
		{"auth_rest 0", doc("providers:", "  openai: {auth_rest: 0}", oneAlias),
			[]string{`f.yaml:2: providers.openai.auth_rest: must be above 0: a refused key stays out this long (default 5m)`}},
		{"auth_rest negative", doc("providers:", "  openai: {auth_rest: -1m}", oneAlias),
			[]string{`f.yaml:2: providers.openai.auth_rest: must not be negative, got -1m0s`}},
		{"auth_probe too often", doc("providers:", "  openai: {auth_probe: 500ms}", oneAlias),
			[]string{`f.yaml:2: providers.openai.auth_probe: must be at least 1s, or 0 for no checks, got 500ms`}},
		{"auth_probe not below auth_rest", doc("providers:", "  openai: {auth_probe: 10m}", oneAlias),
			[]string{`f.yaml:2: providers.openai.auth_probe: auth_probe (10m0s) is not below auth_rest (5m0s): the key would be back before its first check`}},
		{"auth_probe without a unit", doc("providers:", "  openai: {auth_probe: 30}", oneAlias),
			[]string{`f.yaml:2: providers.openai.auth_probe: bad duration "30" (want a number and a unit: 200ms, 5s, 2m, 1h)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErrors(t, tt.data)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestSilentFailuresExample(t *testing.T) {
	data, err := os.ReadFile("../../examples/silent-failures.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse("silent-failures.yaml", data, func(k string) (string, bool) {
		if k == "FUSEBOX_LISTEN" {
			return "", false
		}
		return anyEnv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	chat, reasoning := c.Models[0], c.Models[1]
	if tt := chat.Targets[0].Timeouts; tt.TTFB != 2*time.Second || tt.Idle != 10*time.Second || tt.Deadline != 30*time.Second || tt.SuspectAfter != time.Second || tt.CommitAfter != 4 {
		t.Errorf("chat timeouts = %+v", tt)
	}
	if chat.Hedge != (Hedge{After: 800 * time.Millisecond, Max: 1, Budget: 0.1}) || !chat.ContinueOnFailure || chat.Retry.SameTargetWait != 0 {
		t.Errorf("chat = %+v", chat)
	}
	if tt := reasoning.Targets[0].Timeouts; !tt.AutoTTFB || tt.TTFB != 5*time.Minute || tt.Deadline != 15*time.Minute || tt.SuspectAfter != 15*time.Second {
		t.Errorf("reasoning timeouts = %+v", tt)
	}
	if !reasoning.Breaker.BackgroundProbe || reasoning.Retry.SameTargetWait != 2*time.Second || reasoning.Hedge.Enabled() {
		t.Errorf("reasoning = %+v", reasoning)
	}
	if a, o := c.Providers["anthropic"], c.Providers["openai"]; a.AuthRest != 10*time.Minute || a.AuthProbe != 30*time.Second ||
		o.AuthRest != DefaultAuthRest || o.AuthProbe != time.Minute {
		t.Errorf("auth: anthropic %v/%v, openai %v/%v", a.AuthRest, a.AuthProbe, o.AuthRest, o.AuthProbe)
	}
}
