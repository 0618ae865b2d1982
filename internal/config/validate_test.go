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

// oneAlias is a line that gives a file with a provider "openai" the one
// alias it needs, for tests about something else.
const oneAlias = "models: [{name: a, targets: [{provider: openai, model: m}]}]"

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
			[]string{`f.yaml:8: server.max_body: unknown field (known: max_body_bytes, body_timeout, read_header_timeout, write_timeout, usage_drain, idle_timeout, forward_headers)`}},
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
			oneAlias),
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
			"  openai: {}",
			oneAlias),
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
			"  local: {type: openai, base_url: localhost:11434/v1}",
			"models: [{name: a, targets: [{provider: local, model: m}]}]"),
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
			"  llama: {type: llama}",
			"  other: {base_url: http://x}",
			"models: [{name: a, targets: [{provider: other, model: m}]}]"),
			[]string{
				`f.yaml:2: providers.llama.type: unknown provider type "llama" (known: anthropic, azure, bedrock, gemini, openai, vertex)`,
				`f.yaml:3: providers.other.type: provider has no type (want anthropic, azure, bedrock, gemini, openai, vertex)`,
			}},
		{"string where a number is expected", with("defaults: {retry: {attempts: many}}"),
			[]string{`f.yaml:8: defaults.retry.attempts: want a whole number, got "many"`}},
		{"list where a string is expected", with("listen: [a, b]"),
			[]string{`f.yaml:8: listen: want a string, got a list`}},
		{"mapping where a list is expected", doc(
			"providers:",
			"  openai: {keys: {a: b}}",
			oneAlias),
			[]string{`f.yaml:2: providers.openai.keys: want a list, got a mapping`}},
		{"bad override kind and status", doc(
			"providers:",
			"  openai:",
			"    overrides:",
			"      status: {429: outrage, 1000: outage}",
			oneAlias),
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
		{"no providers and no models", doc("listen: 127.0.0.1:80"),
			[]string{
				`f.yaml: providers: no providers configured (want at least one)`,
				`f.yaml: models: at least one model alias is required`,
			}},
		{"YAML syntax error", doc("providers:", "  openai: {", "bad: [1"),
			[]string{`f.yaml:3:7: YAML syntax: did not find expected ',' or ']' (a [list] left open, or items without a comma between them)`}},
		{"second document", doc("providers: {openai: {}}", "---", "listen: x"),
			[]string{`f.yaml:2: a second YAML document (---): the configuration must be one document`}},
		{"ttfb above total", with("defaults: {timeouts: {ttfb: 2m, total: 1m}}"),
			[]string{`f.yaml:8: defaults.timeouts.ttfb: ttfb (2m0s) exceeds total (1m0s)`}},
		{"no models", doc("providers: {openai: {}}"),
			[]string{`f.yaml: models: at least one model alias is required`}},
		{"an empty list of models", doc("providers: {openai: {}}", "models: []"),
			[]string{`f.yaml:2: models: at least one model alias is required`}},
		{"models with no value", doc("providers: {openai: {}}", "models:", "# none yet"),
			[]string{`f.yaml:2: models: at least one model alias is required`}},
		{"google as a type", doc("providers:", "  g: {type: google, keys: [k]}", "models: [{name: a, targets: [{provider: g, model: gemini-2.5-pro}]}]"),
			[]string{`f.yaml:2: providers.g.type: unknown provider type "google" (known: anthropic, azure, bedrock, gemini, openai, vertex); Google AI Studio is type: gemini, Vertex AI type: vertex`}},
		{"a gemini provider without a key", doc("providers:", "  gemini: {}", "models: [{name: a, targets: [{provider: gemini, model: gemini-2.5-pro}]}]"),
			[]string{`f.yaml:2: providers.gemini.keys: Google AI Studio needs an API key: keys: ["${GEMINI_API_KEY}"] (for Google Cloud credentials, use type: vertex)`}},
		{"a bedrock provider without a region", doc("providers:", "  bedrock: {}", "models: [{name: a, targets: [{provider: bedrock, model: claude-sonnet-4-5}]}]"),
			[]string{`f.yaml:2: providers.bedrock.region: a bedrock provider needs its AWS region, e.g. region: us-east-1 (or region: ${AWS_REGION})`}},
		{"bedrock keys half given", doc("providers:", "  bedrock: {region: us-east-1, aws: {access_key_id: AKIAEXAMPLE}}", "models: [{name: a, targets: [{provider: bedrock, model: claude-sonnet-4-5}]}]"),
			[]string{`f.yaml:2: providers.bedrock.aws.secret_access_key: aws.access_key_id is set without its secret_access_key`}},
		{"a vertex provider without project or region, with keys", doc("providers:", "  vertex: {keys: [k]}", "models: [{name: a, targets: [{provider: vertex, model: gemini-2.5-pro}]}]"),
			[]string{`f.yaml:2: providers.vertex.project: a vertex provider needs its Google Cloud project: project: my-project`,
				`f.yaml:2: providers.vertex.region: a vertex provider needs its location: region: us-east5, europe-west1, … or global`,
				`f.yaml:2: providers.vertex.keys: vertex authenticates with Google credentials, not keys: give credentials_file, or leave it out for application default credentials`}},
		{"an azure provider with no endpoint, no credential, a target with no deployment", doc("providers:", "  azure: {}", "models: [{name: a, targets: [{provider: azure, model: gpt-4o}]}]"),
			[]string{`f.yaml:2: providers.azure.base_url: an azure provider needs its resource's endpoint: base_url: https://my-resource.openai.azure.com`,
				`f.yaml:2: providers.azure.keys: an azure provider needs api-keys (keys: ["${AZURE_OPENAI_API_KEY}"]) or an Entra ID application (entra:)`,
				`f.yaml:3: models[0].targets[0].deployment: an azure target needs its deployment's name (deployment: my-gpt-4o); or use api_version: v1, where the model is the deployment`}},
		{"entra without its secret", doc("providers:", "  azure: {base_url: https://r.openai.azure.com, entra: {tenant_id: t, client_id: c}}", "models: [{name: a, targets: [{provider: azure, model: gpt-4o, deployment: d}]}]"),
			[]string{`f.yaml:2: providers.azure.entra: entra needs client_secret, or federated_token_file for workload identity`}},
		{"one model sent as two ids", doc("providers:", "  bedrock: {region: us-east-1}", "models:", "  - {name: a, targets: [{provider: bedrock, model: claude-sonnet-4-5}]}", "  - {name: b, targets: [{provider: bedrock, model: claude-sonnet-4-5, model_id: arn:aws:bedrock:us-east-1:1:inference-profile/x}]}"),
			[]string{`f.yaml:5: models[1].targets[0].model_id: model "claude-sonnet-4-5" of provider "bedrock" has another model_id at models[0].targets[0] (on line 4): one provider's model is one target; give them different provider names`}},
		{"a field of another cloud", doc("providers:", "  openai: {keys: [k], region: us-east-1}", "models: [{name: a, targets: [{provider: openai, model: gpt-4o, deployment: d}]}]"),
			[]string{`f.yaml:2: providers.openai.region: region is read by bedrock and vertex providers only, not by type openai`,
				`f.yaml:3: models[0].targets[0].deployment: deployment is read for azure providers only, not for type openai`}},
		{"empty key", doc(
			"providers:",
			"  openai: {keys: [\"${K:-}\"]}",
			oneAlias),
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

func TestCloudProviders(t *testing.T) {
	c, err := Parse("f.yaml", doc(
		"providers:",
		"  bedrock: {region: us-west-2, aws: {profile: prod}}",
		"  vertex: {project: p, region: us-east5}",
		"  gemini: {keys: [${GEMINI_API_KEY}]}",
		"  azure: {base_url: https://r.openai.azure.com, keys: [${AZURE_KEY}]}",
		"models:",
		"  - name: claude",
		"    targets:",
		"      - {provider: bedrock, model: claude-sonnet-4-5, model_id: us.anthropic.claude-sonnet-4-5-20250929-v1:0}",
		"      - {provider: vertex, model: claude-sonnet-4-5}",
		"  - name: gpt",
		"    targets: [{provider: azure, model: gpt-4o, deployment: prod-4o}, {provider: gemini, model: gemini-2.5-flash}]",
	), envOf(map[string]string{"GEMINI_API_KEY": "g-key", "AZURE_KEY": "a-key"}))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Providers["bedrock"]; p.Type != TypeBedrock || p.Region != "us-west-2" || p.AWS.Profile != "prod" || p.BaseURL != "" {
		t.Errorf("bedrock = %+v", p)
	}
	if p := c.Providers["gemini"]; p.Type != TypeGemini || p.BaseURL != DefaultGeminiBaseURL || p.Keys[0].Value() != "g-key" {
		t.Errorf("gemini = %+v", p)
	}
	if p := c.Providers["azure"]; p.Type != TypeAzure || p.APIVersion != DefaultAzureAPIVersion {
		t.Errorf("azure = %+v", p)
	}
	if tg := c.Models[0].Targets[0]; tg.ModelID != "us.anthropic.claude-sonnet-4-5-20250929-v1:0" {
		t.Errorf("bedrock target = %+v", tg)
	}
	if tg := c.Models[1].Targets[0]; tg.Deployment != "prod-4o" {
		t.Errorf("azure target = %+v", tg)
	}
}

// TestNoCascadeFromOneMistake: a misspelled field, or a value that does not
// decode, gets its error and no other that only follows from it; mistakes
// that are independent are all reported.
func TestNoCascadeFromOneMistake(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"a target's model misspelled", with("      - {provider: openai, modle: gpt-4.1}"),
			[]string{`f.yaml:8: models[0].targets[1].modle: unknown field, did you mean "model"?`}},
		{"a target's provider misspelled", with("      - {provder: openai, model: gpt-4.1}"),
			[]string{`f.yaml:8: models[0].targets[1].provder: unknown field, did you mean "provider"?`}},
		{"a field misspelled in capitals", with("      - {provider: openai, Model: gpt-4.1}"),
			[]string{`f.yaml:8: models[0].targets[1].Model: unknown field, did you mean "model"?`}},
		{"an alias's targets misspelled", with("  - name: other", "    targts: [{provider: openai, model: gpt}]"),
			[]string{`f.yaml:9: models[1].targts: unknown field, did you mean "targets"?`}},
		{"an alias's name misspelled, that a client allows", with(
			"  - nmae: other",
			"    targets: [{provider: openai, model: gpt}]",
			"clients: [{name: web, key: k, models: [other]}]"),
			[]string{`f.yaml:8: models[1].nmae: unknown field, did you mean "name"?`}},
		{"providers misspelled", doc(
			"providrs:",
			"  openai: {keys: [k1]}",
			"models:",
			"  - {name: smart, targets: [{provider: openai, model: gpt}]}",
			"clients: [{name: web, key: k, models: [openai/gpt]}]"),
			[]string{`f.yaml:1: providrs: unknown field, did you mean "providers"?`}},
		{"models misspelled", doc(
			"providers: {openai: {}}",
			"modles:",
			"  - {name: smart, targets: [{provider: openai, model: gpt}]}",
			"clients: [{name: web, key: k, models: [smart]}]"),
			[]string{`f.yaml:2: modles: unknown field, did you mean "models"?`}},
		{"a provider's type misspelled", doc(
			"providers: {local: {tpye: openai, base_url: http://x}}",
			"models: [{name: a, targets: [{provider: local, model: m}]}]"),
			[]string{`f.yaml:1: providers.local.tpye: unknown field, did you mean "type"?`}},
		{"the cache's ttl misspelled", with("    cache: {tll: 10m, store: memory, stale_for: 1h}"),
			[]string{`f.yaml:8: models[0].cache.tll: unknown field, did you mean "ttl"?`}},
		{"the cache's ttl not a duration", with("    cache: {ttl: 10, store: memory}"),
			[]string{`f.yaml:8: models[0].cache.ttl: bad duration "10" (want a number and a unit: 200ms, 5s, 2m, 1h)`}},
		{"a hedge's after misspelled", with("      - {provider: openai, model: b}", "    hedge: {aftr: 800ms}"),
			[]string{`f.yaml:9: models[0].hedge.aftr: unknown field, did you mean "after"?`}},
		{"a breaker's window misspelled", with("    breaker: {windw: 10s, failure_threshold: 3}"),
			[]string{`f.yaml:8: models[0].breaker.windw: unknown field, did you mean "window"?`}},
		{"a breaker's window not a duration", with("    breaker: {window: 10, failure_threshold: 3}"),
			[]string{`f.yaml:8: models[0].breaker.window: bad duration "10" (want a number and a unit: 200ms, 5s, 2m, 1h)`}},
		{"a retry's base not a duration", with("    retry: {base: 2, max: 1s}"),
			[]string{`f.yaml:8: models[0].retry.base: bad duration "2" (want a number and a unit: 200ms, 5s, 2m, 1h)`}},
		{"state misspelled", with("stat: redis://127.0.0.1:6379/0", "fleet: {prefix: x}"),
			[]string{`f.yaml:8: stat: unknown field, did you mean "state"?`}},
		{"a fleet lease shorter than two sync rounds", with("state: redis://127.0.0.1:6379/0", "fleet: {sync: 1s, lease: 1500ms}"),
			[]string{`f.yaml:9: fleet.lease: must be at least twice fleet.sync (1s), or a live replica loses its work between two renewals; got 1.5s`}},
		{"a provider that is not a mapping", doc(
			"providers: {deepseek: sk-live-abc123}",
			"models: [{name: a, targets: [{provider: deepseek, model: m}]}]"),
			[]string{`f.yaml:1: providers.deepseek: want a mapping, got a value (not shown: this block holds secrets)`}},
		{"a file that is a list", doc("- providers: {}"),
			[]string{`f.yaml:1: want a mapping, got a list`}},
		{"independent mistakes are all reported", doc(
			"listen: nowhere", // 1
			"providers:",      // 2
			"  openai: {keys: sk-1, timeouts: {ttfb: 5}}", // 3
			"  local: {type: gemini}",                     // 4
			"models:",                                     // 5
			"  - name: smart",                             // 6
			"    targets: [{provider: openai, modle: gpt}, {provider: nope}]", // 7
			"    retry: {attempts: -1}",                                       // 8
			"clients: [{name: web, key: k, models: [smrt]}, {name: web}]",     // 9
		),
			[]string{
				`f.yaml:1: listen: bad listen address "nowhere" (want host:port, e.g. 127.0.0.1:8080 or :8080)`,
				`f.yaml:3: providers.openai.keys: want a list, got a secret (write keys: [a, b], or one "- item" per line)`,
				`f.yaml:3: providers.openai.timeouts.ttfb: bad duration "5" (want a number and a unit: 200ms, 5s, 2m, 1h; or auto)`,
				`f.yaml:4: providers.local.keys: Google AI Studio needs an API key: keys: ["${GEMINI_API_KEY}"] (for Google Cloud credentials, use type: vertex)`,
				`f.yaml:7: models[0].targets[0].modle: unknown field, did you mean "model"?`,
				`f.yaml:7: models[0].targets[1].provider: unknown provider "nope" (known: local, openai)`,
				`f.yaml:7: models[0].targets[1].model: target has no model`,
				`f.yaml:8: models[0].retry.attempts: must not be negative, got -1`,
				`f.yaml:9: clients[0].models[0]: unknown model alias "smrt" (known: smart; or provider/model)`,
				`f.yaml:9: clients[1].name: duplicate client "web" (first on line 9)`,
				`f.yaml:9: clients[1].key: client has no key`,
			}},
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
