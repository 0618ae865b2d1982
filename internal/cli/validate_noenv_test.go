package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Every example validates on its structure alone, with no variable set:
// a newcomer can check a file before having any key.
func TestValidateNoEnvAcceptsEveryExample(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	files = append(files, "../../deploy/fusebox.yaml")
	for _, v := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "FUSEBOX_KEY_WEB", "REDIS_URL", "GOOGLE_CLOUD_PROJECT"} {
		t.Setenv(v, "") // set but empty: --no-env must not read it either
	}
	for _, f := range files {
		var out bytes.Buffer
		if err := Run(context.Background(), []string{"validate", "--no-env", f}, &out, &out); err != nil {
			t.Errorf("validate --no-env %s: %v\n%s", f, err, out.String())
		} else if !strings.Contains(out.String(), "ok, structure only") {
			t.Errorf("validate --no-env %s: output %q", f, out.String())
		}
	}
}

// --no-env forgives only what depends on the environment: a misspelled
// field or an unknown provider is still named with its line, a
// ${VAR:-default} is judged on its default, and a bad value written in
// the file is still bad.
func TestValidateNoEnvStillFindsStructuralErrors(t *testing.T) {
	bad := write(t, `listen: ${LISTEN:-not-an-address}
state: ${REDIS_URL}
providers:
  p: {type: openai, keys: [${KEY}]}
models:
  - name: x
    targets: [{provider: q, model: m}]
    retry: {atempts: 2}
    timeouts: {ttfb: soon}
`)
	var out bytes.Buffer
	err := Run(context.Background(), []string{"validate", "--no-env", bad}, &out, &out)
	got := out.String()
	if err == nil {
		t.Fatalf("validate --no-env of a broken file passed:\n%s", got)
	}
	for _, want := range []string{":1: listen", ":7: models[0].targets[0].provider", ":8: models[0].retry.atempts", ":9: models[0].timeouts.ttfb"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, ":2:") || strings.Contains(got, ":4:") || strings.Contains(got, "REDIS_URL") {
		t.Errorf("a line whose value is a variable was judged on a stand-in:\n%s", got)
	}
}

// validate recognises a fusebox mock scenario and checks it as mock
// would, instead of calling its fields unknown.
func TestValidateRecognisesMockScenarios(t *testing.T) {
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	more, _ := filepath.Glob("../../deploy/scenarios/*.yaml")
	files = append(files, more...)
	if len(files) < 3 {
		t.Fatalf("scenarios: %v", files)
	}
	for _, f := range files {
		var out bytes.Buffer
		if err := Run(context.Background(), []string{"validate", f}, &out, &out); err != nil || !strings.Contains(out.String(), "ok (a fusebox mock scenario") {
			t.Errorf("validate %s: %v\n%s", f, err, out.String())
		}
	}
	broken := write(t, "name: x\nseed: 1\nfaults:\n  - {kind: nope}\n")
	var out bytes.Buffer
	err := Run(context.Background(), []string{"validate", broken}, &out, &out)
	if err == nil || !strings.Contains(out.String(), ":4: faults[0].kind: unknown kind") || strings.Contains(out.String(), "unknown field") {
		t.Errorf("a broken scenario: %v\n%s", err, out.String())
	}
	// A gateway configuration with a misplaced scenario field is still a
	// configuration, and the field is named as unknown.
	cfg := write(t, "seed: 1\nproviders:\n  p: {type: openai, keys: [k]}\nmodels: [{name: a, targets: [{provider: p, model: m}]}]\n")
	out.Reset()
	if err := Run(context.Background(), []string{"validate", cfg}, &out, &out); err == nil || !strings.Contains(out.String(), ":1: seed: unknown field") {
		t.Errorf("a configuration with seed: %v\n%s", err, out.String())
	}
}
