package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file that is not there is one clear line, naming it once, and nothing
// on the output (issue 19).
func TestValidateMissingFileIsOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fusebox.yaml")
	var out bytes.Buffer
	err := Run(context.Background(), []string{"validate", path}, &out, &out)
	if err == nil {
		t.Fatal("validate of a missing file succeeded")
	}
	if want := "cannot read the configuration file " + path + ": no such file or directory"; err.Error() != want {
		t.Errorf("error %q; want %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("output %q; want none besides the error", out.String())
	}
}

// A tab in the indentation is said to be one.
func TestValidateSaysTabsCannotIndent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fusebox.yaml")
	if err := os.WriteFile(path, []byte("providers:\n\topenai: {keys: [k]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"validate", path}, &out, &out); err == nil {
		t.Fatal("validate of a tab-indented file succeeded")
	}
	if got := out.String(); !strings.Contains(got, path+":2:1: ") || !strings.Contains(got, "YAML cannot indent with tabs") {
		t.Errorf("output %q; want line 2 said to be indented with a tab", got)
	}
}

// What a cloud provider lacks to reach its cloud is one line each: a
// region, a project, a key, an endpoint, a deployment, a credentials file
// that cannot be read.
func TestValidateExplainsWhatACloudLacks(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ file, want string }{
		{"providers:\n  bedrock: {}\nmodels: [{name: c, targets: [{provider: bedrock, model: claude-sonnet-4-5}]}]\n",
			"providers.bedrock.region: a bedrock provider needs its AWS region"},
		{"providers:\n  vertex: {region: us-east5}\nmodels: [{name: c, targets: [{provider: vertex, model: claude-sonnet-4-5}]}]\n",
			"providers.vertex.project: a vertex provider needs its Google Cloud project"},
		{"providers:\n  gemini: {}\nmodels: [{name: c, targets: [{provider: gemini, model: gemini-2.5-flash}]}]\n",
			"providers.gemini.keys: Google AI Studio needs an API key"},
		{"providers:\n  azure: {base_url: https://r.openai.azure.com, keys: [k]}\nmodels: [{name: c, targets: [{provider: azure, model: gpt-4.1}]}]\n",
			"models[0].targets[0].deployment: an azure target needs its deployment's name"},
		{"providers:\n  vertex: {project: p, region: us-east5, credentials_file: " + filepath.Join(dir, "missing.json") + "}\nmodels: [{name: c, targets: [{provider: vertex, model: gemini-2.5-flash}]}]\n",
			`provider vertex: credentials_file: cannot read "` + filepath.Join(dir, "missing.json") + `": no such file or directory`},
	} {
		path := filepath.Join(dir, "fusebox.yaml")
		if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Run(context.Background(), []string{"validate", path}, &out, &out); err == nil {
			t.Errorf("validate accepted:\n%s", tc.file)
		}
		if got := out.String(); !strings.Contains(got, tc.want) || strings.Count(got, "\n") != 1 {
			t.Errorf("output %q; want one line with %q", got, tc.want)
		}
	}
}

// validate refuses tokens a person could guess: admin_token: 12 and a
// client key "short", each with its line and field, neither shown.
func TestValidateRefusesWeakTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fusebox.yaml")
	src := "admin_token: 12\nclients:\n  - {name: web, key: short}\nproviders:\n  openai: {type: openai, keys: [k]}\nmodels: [{name: a, targets: [{provider: openai, model: m}]}]\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"validate", path}, &out, &out); err == nil {
		t.Fatal("validate accepted admin_token: 12")
	}
	got := out.String()
	if !strings.Contains(got, path+":1: admin_token: too short") || !strings.Contains(got, path+":3: clients[0].key: too short") {
		t.Errorf("output %q; want both tokens named with their lines", got)
	}
	if strings.Contains(got, ": 12") || strings.Contains(got, "short,") || strings.Contains(got, ": short") {
		t.Errorf("output %q shows a secret", got)
	}
}
