package config

import (
	"errors"
	"strings"
	"testing"
)

// noEnv is an environment with nothing set.
func noEnv(string) (string, bool) { return "", false }

// doc joins lines into a YAML file, so that a test can count lines.
func doc(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// valid is a minimal valid configuration of 7 lines.
var valid = []string{
	"providers:",                             // 1
	"  openai: {keys: [k1]}",                 // 2
	"  anthropic: {type: anthropic}",         // 3
	"models:",                                // 4
	"  - name: smart",                        // 5
	"    targets:",                           // 6
	"      - {provider: openai, model: gpt}", // 7
}

// with returns valid with extra lines from line 8 on.
func with(extra ...string) []byte { return doc(append(append([]string{}, valid...), extra...)...) }

// parseErrors parses data and returns the error lines, failing the test if
// Parse succeeds or returns an error that is not Errors.
func parseErrors(t *testing.T, data []byte) []string {
	t.Helper()
	c, err := Parse("f.yaml", data, noEnv)
	if err == nil {
		t.Fatalf("Parse succeeded, want errors; config:\n%s", c)
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %T %v, want Errors", err, err)
	}
	return strings.Split(err.Error(), "\n")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"unknown field with suggestion", with("listn: 127.0.0.1:80"),
			[]string{`f.yaml:8: listn: unknown field, did you mean "listen"?`}},
		{"unknown nested field with suggestion", doc(
			"providers:",
			"  openai: {keys: [k1]}",
			"models:",
			"  - name: smart",
			"    stratgy: fallback",
			"    targets: [{provider: openai, model: gpt}]"),
			[]string{`f.yaml:5: models[0].stratgy: unknown field, did you mean "strategy"?`}},
		{"negative server bound", with("server: {max_body_bytes: -1, body_timeout: -5s}"),
			[]string{`f.yaml:8: server.max_body_bytes: must not be negative, got -1`,
				`f.yaml:8: server.body_timeout: must not be negative, got -5s`}},
		{"unknown server field", with("server: {max_body: 10}"),
			[]string{`f.yaml:8: server.max_body: unknown field (known: max_body_bytes, body_timeout, read_header_timeout, write_timeout, usage_drain, idle_timeout)`}},
		{"unknown field without suggestion", with("defaults: {zzz: 1}"),
			[]string{`f.yaml:8: defaults.zzz: unknown field (known: breaker, retry, timeouts)`}},
		{"unknown provider in a target", doc(
			"providers:",
			"  openai: {keys: [k1]}",
			"  anthropic: {}",
			"models:",
			"  - name: smart",
			"    targets:",
			"      - {provider: openai, model: gpt}",
			"      - {provider: opneai, model: gpt}"),
			[]string{`f.yaml:8: models[0].targets[1].provider: unknown provider "opneai" (known: anthropic, openai)`}},
		{"bad duration", with("defaults: {timeouts: {ttfb: 10x}}"),
			[]string{`f.yaml:8: defaults.timeouts.ttfb: bad duration "10x" (want a number and a unit: 200ms, 5s, 2m, 1h; or auto)`}},
		{"negative limit", doc(
			"providers:",
			"  openai:",
			"    limits: {rpm: -5, max_wait: -1s}",
			"models: []"),
			[]string{
				`f.yaml:3: providers.openai.limits.rpm: must not be negative, got -5`,
				`f.yaml:3: providers.openai.limits.max_wait: must not be negative, got -1s`,
			}},
		{"rate above 1", with("defaults: {breaker: {window: 10s, failure_rate: 1.5}}"),
			[]string{`f.yaml:8: defaults.breaker.failure_rate: must be a fraction in (0, 1], got 1.5`}},
		{"negative rate", with("defaults: {retry: {budget: -0.1}}"),
			[]string{`f.yaml:8: defaults.retry.budget: must not be negative, got -0.1`}},
		{"retry budget above 1", with("defaults: {retry: {budget: 2}}"),
			[]string{`f.yaml:8: defaults.retry.budget: must be a fraction in (0, 1], got 2`}},
		{"duplicate alias", with(
			"  - name: smart",
			"    targets: [{provider: openai, model: gpt}]"),
			[]string{`f.yaml:8: models[1].name: duplicate alias "smart" (first on line 5)`}},
		{"duplicate provider", doc(
			"providers:",
			"  openai: {}",
			"  openai: {}"),
			[]string{`f.yaml:3: providers.openai: set twice (first on line 2)`}},
		{"target with no provider or model", with("      - {weight: 2}"),
			[]string{
				`f.yaml:8: models[0].targets[1].provider: target has no provider`,
				`f.yaml:8: models[0].targets[1].model: target has no model`,
			}},
		{"alias with no targets", with("  - name: empty"),
			[]string{`f.yaml:8: models[1].targets: alias "empty" has no targets`}},
		{"bad strategy", with(
			"  - name: other",
			"    strategy: roundrobin",
			"    targets: [{provider: openai, model: gpt}]"),
			[]string{`f.yaml:9: models[1].strategy: unknown strategy "roundrobin" (known: fallback, weighted, least-latency, cheapest-healthy)`}},
		{"bad URL", doc(
			"providers:",
			"  local: {type: openai, base_url: localhost:11434/v1}"),
			[]string{`f.yaml:2: providers.local.base_url: bad URL "localhost:11434/v1" (want http://host/… or https://host/…)`}},
		{"bad listen address", with("listen: 8080"),
			[]string{`f.yaml:8: listen: bad listen address "8080" (want host:port, e.g. 127.0.0.1:8080 or :8080)`}},
		{"negative price", with("      - {provider: anthropic, model: opus, price: {input: -1}}"),
			[]string{`f.yaml:8: models[0].targets[1].price.input: must not be negative, got -1`}},
		{"bad state URL", with("state: postgres://db"),
			[]string{`f.yaml:8: state: bad state "postgres://db" (want memory, or redis://host:port/db, or rediss://… for TLS)`}},
		{"bad state hides the password", with("state: redis://u:hunter2@h:6379/x"),
			[]string{`f.yaml:8: state: bad state "redis://u:xxxxx@h:6379/x" (want memory, or redis://host:port/db, or rediss://… for TLS)`}},
		{"bad provider type", doc(
			"providers:",
			"  gemini: {type: google}",
			"  other: {base_url: http://x}"),
			[]string{
				`f.yaml:2: providers.gemini.type: unknown provider type "google" (known: anthropic, openai)`,
				`f.yaml:3: providers.other.type: provider has no type (want anthropic or openai)`,
			}},
		{"string where a number is expected", with("defaults: {retry: {attempts: many}}"),
			[]string{`f.yaml:8: defaults.retry.attempts: want a whole number, got "many"`}},
		{"list where a string is expected", with("listen: [a, b]"),
			[]string{`f.yaml:8: listen: want a string, got a list`}},
		{"mapping where a list is expected", doc(
			"providers:",
			"  openai: {keys: {a: b}}"),
			[]string{`f.yaml:2: providers.openai.keys: want a list, got a mapping`}},
		{"bad override kind and status", doc(
			"providers:",
			"  openai:",
			"    overrides:",
			"      status: {429: outrage, 1000: outage}"),
			[]string{
				`f.yaml:4: providers.openai.overrides.status.429: unknown kind "outrage" (known: success, outage, throttle, capacity, auth, quota, client_error, canceled)`,
				`f.yaml:4: providers.openai.overrides.status.1000: not an HTTP status (want 100 to 599)`,
			}},
		{"breaker rule from the library", with("defaults: {breaker: {failure_threshold: 3}}"),
			[]string{`f.yaml:8: defaults.breaker.failure_threshold: needs a window: set window or window_calls`}},
		{"breaker cross-field rule", with("defaults: {breaker: {window: 10s, window_calls: 5, probes: 1, probe_successes: 2}}"),
			[]string{
				`f.yaml:8: defaults.breaker.window_calls: set window (time-based) or window_calls (count-based), not both`,
				`f.yaml:8: defaults.breaker.probe_successes: cannot exceed probes (1)`,
			}},
		{"retry multiplier and max", with("defaults: {retry: {multiplier: 0.5, base: 2s, max: 1s}}"),
			[]string{
				`f.yaml:8: defaults.retry.multiplier: must be at least 1 (or 0 for the default, 2)`,
				`f.yaml:8: defaults.retry.max: max (1s) is below base (2s)`,
			}},
		{"unset variable", with("admin_token: ${FUSEBOX_ADMIN}"),
			[]string{`f.yaml:8: admin_token: environment variable FUSEBOX_ADMIN is not set (use ${FUSEBOX_ADMIN:-default} to give a default)`}},
		{"bad variable reference", with("admin_token: ${1X}"),
			[]string{`f.yaml:8: admin_token: bad variable reference ${1X} (want ${VAR} or ${VAR:-default})`}},
		{"unknown failover condition", with("    failover_on: [context_length, timeout]"),
			[]string{`f.yaml:8: models[0].failover_on[1]: unknown failover condition "timeout" (known: context_length, content_filter)`}},
		{"clients", with(
			"clients:",
			"  - {name: web, key: k}",
			"  - {name: web, key: k, weight: 0, models: [smrt, groq/llama]}",
			"  - {}"),
			[]string{
				`f.yaml:10: clients[1].name: duplicate client "web" (first on line 9)`,
				`f.yaml:10: clients[1].key: same key as clients[0] (on line 9)`,
				`f.yaml:10: clients[1].weight: must be at least 1`,
				`f.yaml:10: clients[1].models[0]: unknown model alias "smrt" (known: smart; or provider/model)`,
				`f.yaml:10: clients[1].models[1]: unknown provider "groq" in "groq/llama" (known: anthropic, openai)`,
				`f.yaml:11: clients[2].name: client has no name`,
				`f.yaml:11: clients[2].key: client has no key`,
			}},
		{"no providers", doc("listen: 127.0.0.1:80"),
			[]string{`f.yaml: providers: no providers configured (want at least one)`}},
		{"YAML syntax error", doc("providers:", "  openai: {", "bad: [1"),
			[]string{`f.yaml:2: YAML syntax: did not find expected ',' or ']'`}},
		{"second document", doc("providers: {openai: {}}", "---", "listen: x"),
			[]string{`f.yaml:2: a second YAML document (---): the configuration must be one document`}},
		{"ttfb above total", with("defaults: {timeouts: {ttfb: 2m, total: 1m}}"),
			[]string{`f.yaml:8: defaults.timeouts.ttfb: ttfb (2m0s) exceeds total (1m0s)`}},
		{"empty key", doc(
			"providers:",
			"  openai: {keys: [\"${K:-}\"]}"),
			[]string{`f.yaml:2: providers.openai.keys[0]: empty key`}},
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

func TestParseReportsAllErrorsInLineOrder(t *testing.T) {
	got := parseErrors(t, doc(
		"listen: nowhere",                        // 1
		"providers:",                             // 2
		"  openai: {}",                           // 3
		"models:",                                // 4
		"  - name: smart",                        // 5
		"    targets:",                           // 6
		"      - {provider: opneai, model: gpt}", // 7
		"    retry: {attempts: -1}",              // 8
	))
	want := []string{
		`f.yaml:1: listen: bad listen address "nowhere" (want host:port, e.g. 127.0.0.1:8080 or :8080)`,
		`f.yaml:7: models[0].targets[0].provider: unknown provider "opneai" (known: openai)`,
		`f.yaml:8: models[0].retry.attempts: must not be negative, got -1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestErrorsListIsInspectable(t *testing.T) {
	_, err := Parse("f.yaml", with("listen: x", "state: y"), noEnv)
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("err = %v, want 2 Errors", err)
	}
	want := Error{File: "f.yaml", Line: 8, Field: "listen", Msg: `bad listen address "x" (want host:port, e.g. 127.0.0.1:8080 or :8080)`}
	if es[0] != want {
		t.Errorf("es[0] = %#v, want %#v", es[0], want)
	}
}
