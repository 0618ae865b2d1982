package sim

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestExampleScenarios(t *testing.T) {
	files, err := filepath.Glob("../../examples/scenarios/*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("found %v (%v), want the example scenarios", files, err)
	}
	for _, f := range files {
		c, err := LoadScenario(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := New(c); err != nil {
			t.Errorf("%s: New: %v", f, err)
		}
	}
	c, err := LoadScenario("../../examples/scenarios/outage.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Fault{Kind: ErrorStorm, Status: 503, Fraction: 1, From: 60 * time.Second, To: 80 * time.Second}
	if len(c.Faults) != 1 || c.Faults[0] != want {
		t.Errorf("outage faults = %+v, want [%+v]", c.Faults, want)
	}
}

func TestParseScenario(t *testing.T) {
	src := `name: primary
seed: 42
latency: {median: 300ms, p99: 2s, ttfb: 150ms, tokens_per_second: 80}
output: {tokens: 40, chunk_tokens: 4, dimensions: 8}
limits: {rpm: 600, tpm: 200000, headers_only: true}
models: [a, b]
faults:
  - {kind: error_storm, status: 503, fraction: 0.9, from: 60s, to: 80s}
  - kind: throttle
    retry_after: 5s
    fraction: 1
    from: 10s
  - {kind: latency_spike, extra: 2s}
  - {kind: stall, after_chunks: 3}
  - {kind: stream_error, after_chunks: 1, message: upstream died}
  - {kind: no_done, from: 5s}
  - {kind: error_storm, from: 60s, to: 80s, every: 2s, for: 1s}
`
	got, err := ParseScenario("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Name: "primary", Seed: 42,
		Latency: Latency{Median: 300 * time.Millisecond, P99: 2 * time.Second, TTFB: 150 * time.Millisecond, TokensPerSecond: 80},
		Output:  Output{Tokens: 40, ChunkTokens: 4, Dimensions: 8},
		Limits:  Limits{RPM: 600, TPM: 200000, HeadersOnly: true},
		Models:  []string{"a", "b"},
		Faults: []Fault{
			{Kind: ErrorStorm, Status: 503, Fraction: 0.9, From: time.Minute, To: 80 * time.Second},
			{Kind: Throttle, RetryAfter: 5 * time.Second, Fraction: 1, From: 10 * time.Second},
			{Kind: LatencySpike, Extra: 2 * time.Second},
			{Kind: Stall, AfterChunks: 3},
			{Kind: StreamError, AfterChunks: 1, Message: "upstream died"},
			{Kind: NoDone, From: 5 * time.Second},
			{Kind: ErrorStorm, From: time.Minute, To: 80 * time.Second, Every: 2 * time.Second, For: time.Second},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// The clouds' sections set the credentials the Bedrock, Google and Azure
// paths and the credential services check.
func TestScenarioClouds(t *testing.T) {
	src := `aws:
  region: eu-west-1
  keys: {AKIDSIM: secret}
  api_keys: [ABSKkey]
  credential_lifetime: 15m
  container_token: tok
google:
  api_keys: [gk]
  refresh_tokens: [rt]
  token_lifetime: 5m
  project: proj
  email: sa@proj.iam.gserviceaccount.com
azure:
  keys: [az]
faults:
  - {kind: content_filter, code: response}
  - {kind: model_not_ready, fraction: 0.5}
`
	got, err := ParseScenario("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		AWS: AWS{Region: "eu-west-1", Keys: map[string]string{"AKIDSIM": "secret"}, APIKeys: []string{"ABSKkey"},
			CredentialLifetime: 15 * time.Minute, ContainerToken: "tok"},
		Google: Google{APIKeys: []string{"gk"}, RefreshTokens: []string{"rt"}, TokenLifetime: 5 * time.Minute,
			Project: "proj", Email: "sa@proj.iam.gserviceaccount.com"},
		Azure:  Azure{Keys: []string{"az"}},
		Faults: []Fault{{Kind: ContentFilter, Code: "response"}, {Kind: ModelNotReady, Fraction: 0.5}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestScenarioErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"unknown top", "nmae: x\n", []string{"s.yaml:1: nmae: unknown field (known: name, seed, latency, output, limits, jobs, models, faults, aws, google, azure)"}},
		{"bad duration", "latency:\n  median: 300\n", []string{`s.yaml:2: latency.median: bad duration "300" (want a number and a unit: 200ms, 5s, 2m)`}},
		{"negative", "latency:\n  p99: -1s\n", []string{"s.yaml:2: latency.p99: is -1s, want 0 or more"}},
		{"not a mapping", "latency: fast\n", []string{`s.yaml:1: latency: want a mapping, got "fast"`}},
		{"bad status", "faults:\n  - kind: error_storm\n    status: 418\n", []string{"s.yaml:3: faults[0].status: is 418, want one of 400, 403, 408, 500, 502, 503, 504, 529"}},
		{"unknown kind", "faults:\n  - {kind: meteor}\n", []string{`s.yaml:2: faults[0].kind: unknown kind "meteor" (known: error_storm, throttle, latency_spike, hang, stall, reset, auth, queue_full, stream_error, no_done, capacity, job_failed, accept_reset, accept_hang, content_filter, model_not_ready, garbage, drip)`}},
		{"missing kind", "faults:\n  - {from: 1s}\n", []string{"s.yaml:2: faults[0].kind: must be set (one of error_storm, throttle, latency_spike, hang, stall, reset, auth, queue_full, stream_error, no_done, capacity, job_failed, accept_reset, accept_hang, content_filter, model_not_ready, garbage, drip)"}},
		{"to before from", "faults:\n  - kind: hang\n    from: 80s\n    to: 60s\n", []string{"s.yaml:4: faults[0].to: is 1m0s, want after from (1m20s), or 0 for no end"}},
		{"zero fraction", "faults:\n  - {kind: hang, fraction: 0}\n", []string{"s.yaml:2: faults[0].fraction: is 0, want more than 0 (leave it out for every call)"}},
		{"not applicable", "faults:\n  - kind: auth\n    extra: 1s\n", []string{"s.yaml:3: faults[0].extra: does not apply to a auth fault"}},
		{"fault field typo", "faults:\n  - kind: stall\n    after_chunk: 2\n", []string{"s.yaml:3: faults[0].after_chunk: unknown field (known: kind, from, to, every, for, fraction, status, retry_after, extra, after_chunks, message, code)"}},
		{"for without every", "faults:\n  - kind: error_storm\n    for: 1s\n", []string{"s.yaml:3: faults[0].for: is 1s without every, want every set too (or no for)"}},
		{"duplicate", "seed: 1\nseed: 2\n", []string{"s.yaml:2: seed: set twice (first on line 1)"}},
		{"bad seed", "seed: -1\n", []string{`s.yaml:1: seed: want a whole number from 0 to 2^64-1, got "-1"`}},
		{"bad bool", "limits: {headers_only: maybe}\n", []string{`s.yaml:1: limits.headers_only: want true or false, got "maybe"`}},
		{"faults not a list", "faults: {kind: hang}\n", []string{"s.yaml:1: faults: want a list, got a mapping"}},
		{"several, in line order", "faults:\n  - {kind: hang, status: 500}\noutput: {tokens: many}\nlatency: {median: x}\n", []string{
			"s.yaml:2: faults[0].status: does not apply to a hang fault",
			`s.yaml:3: output.tokens: want a whole number, got "many"`,
			`s.yaml:4: latency.median: bad duration "x" (want a number and a unit: 200ms, 5s, 2m)`,
		}},
		{"bad yaml", "faults: [\n", []string{"s.yaml:1: bad YAML: did not find expected node content"}},
		{"empty", "", []string{"s.yaml: empty scenario"}},
		{"empty secret", "aws:\n  keys:\n    AKID: \"\"\n", []string{"s.yaml:3: aws.keys.AKID: is empty, want the secret access key"}},
		{"bad public key", "google:\n  service_accounts:\n    sa@p.iam.gserviceaccount.com: not-a-pem\n",
			[]string{"s.yaml:3: google.service_accounts.sa@p.iam.gserviceaccount.com: want an RSA public key in PEM"}},
		{"cloud typo", "azure:\n  key: [k]\n", []string{"s.yaml:2: azure.key: unknown field (known: keys)"}},
		{"negative lifetime", "google: {token_lifetime: -1m}\n", []string{"s.yaml:1: google.token_lifetime: is -1m0s, want 0 or more"}},
		{"bad filter code", "faults:\n  - {kind: content_filter, code: output}\n", []string{`s.yaml:2: faults[0].code: is "output", want prompt or response`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario("s.yaml", []byte(tc.src))
			var es ScenarioErrors
			if !errors.As(err, &es) {
				t.Fatalf("err = %v, want ScenarioErrors", err)
			}
			if got := strings.Split(es.Error(), "\n"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestLoadScenarioMissingFile(t *testing.T) {
	if _, err := LoadScenario("testdata/nope.yaml"); err == nil || !strings.HasPrefix(err.Error(), "sim: open testdata/nope.yaml") {
		t.Errorf("err = %v", err)
	}
}
