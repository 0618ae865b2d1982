package refdoc

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultPhrase(t *testing.T) {
	tests := []struct{ doc, phrase, short string }{
		{"Listen is the address.\nDefault: 127.0.0.1:8080.", "127.0.0.1:8080", "127.0.0.1:8080"},
		{"OpenBackoff grows it. Default, also for 0: 1.5.", "1.5", "1.5"},
		{"MaxBodyBytes bounds it. Default: 16777216 (16 MiB).", "16777216 (16 MiB)", "16777216 (16 MiB)"},
		{"Open is how long. Default,\n also for 0: 5s (the gateway's default; a library's is 30s).", "5s (the gateway's default; a library's is 30s)", "5s"},
		{"BaseURL is the root. Default: per type, openai\nhttps://api.openai.com/v1.", "per type, openai https://api.openai.com/v1", "per type"},
		{"Probes is how many. Default: ProbeSuccesses, or 1.", "ProbeSuccesses, or 1", "ProbeSuccesses"},
		{`Prefix starts keys. Default: "fusebox:".`, `"fusebox:"`, `"fusebox:"`},
		{"SuspectAfter skips. Default: adaptive (AutoSuspect): 4 × p99.", "adaptive (AutoSuspect): 4 × p99", "adaptive"},
		{"Weight is a share. 0: no limit.", "", ""},
	}
	for _, tt := range tests {
		phrase := defaultPhrase(tt.doc)
		if phrase != tt.phrase {
			t.Errorf("defaultPhrase(%q) = %q, want %q", tt.doc, phrase, tt.phrase)
			continue
		}
		if phrase != "" && shortForm(phrase) != tt.short {
			t.Errorf("shortForm(%q) = %q, want %q", phrase, shortForm(phrase), tt.short)
		}
	}
}

func TestLiteral(t *testing.T) {
	tests := []struct {
		short string
		typ   reflect.Type
		want  any // nil: not a literal
	}{
		{"5s", durationType, 5 * time.Second},
		{"0", durationType, time.Duration(0)},
		{"none", durationType, nil},
		{"16777216 (16 MiB)", reflect.TypeFor[int](), 16777216},
		{"1.5", reflect.TypeFor[float64](), 1.5},
		{"false", reflect.TypeFor[bool](), false},
		{"memory", reflect.TypeFor[string](), "memory"},
		{`"fusebox:"`, reflect.TypeFor[string](), "fusebox:"},
		{"per type", reflect.TypeFor[string](), nil},
		{"the input price", reflect.TypeFor[float64](), nil},
	}
	for _, tt := range tests {
		v, ok := literal(tt.short, tt.typ)
		switch {
		case tt.want == nil && ok:
			t.Errorf("literal(%q) = %v, want none", tt.short, v)
		case tt.want != nil && (!ok || v.Interface() != tt.want):
			t.Errorf("literal(%q) = %v, %v; want %v", tt.short, v, ok, tt.want)
		}
	}
}

func TestTranslate(t *testing.T) {
	names := map[string]string{"AuthRest": "auth_rest", "Cluster": "cluster", "TTFB": "ttfb", "Idle": "idle"}
	tests := []struct {
		text string
		lead bool
		want string
	}{
		{"Cluster: the nodes are a Redis Cluster.", true, "`cluster`: the nodes are a Redis Cluster."},
		{"leaves the rotation for AuthRest.", true, "leaves the rotation for `auth_rest`."},
		{"TTFB then holds it; Idle/8 at most.", false, "`ttfb` then holds it; Idle/8 at most."},
	}
	for _, tt := range tests {
		if got := translate(tt.text, names, false, tt.lead); got != tt.want {
			t.Errorf("translate(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestThisBlock(t *testing.T) {
	tests := []struct{ text, typ, want string }{
		{"Breaker configures a breaker.", "Breaker", "This block configures a breaker."},
		{"Limits cap rates.", "Limits", "These settings cap rates."},
		{"Defaults are blocks.", "Defaults", "These are blocks."},
		{"Model is an alias.", "Model", "This block is an alias."},
		{"An alias.", "Model", "An alias."},
	}
	for _, tt := range tests {
		if got := thisBlock(tt.text, tt.typ); got != tt.want {
			t.Errorf("thisBlock(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestMarkdownText(t *testing.T) {
	if got := escape("merge keys (<<: *base) and <name>"); got != `merge keys (<<: *base) and \<name>` {
		t.Errorf("escape = %q", got)
	}
	if got := escape("*one* emphasis"); got != `\*one* emphasis` {
		t.Errorf("escape = %q", got)
	}
	long := strings.Repeat("word ", 15) + "- not a list item " + strings.Repeat("x ", 40)
	for _, line := range strings.Split(wrap(long), "\n") {
		if startsBlock(strings.Fields(line)[0]) {
			t.Errorf("a wrapped line starts a Markdown block: %q", line)
		}
	}
	if got := slug("`defaults.breaker`, `models[].breaker`"); got != "defaultsbreaker-modelsbreaker" {
		t.Errorf("slug = %q", got)
	}
}

// TestDocThatDisagreesWithTheCode: a doc comment whose default is not the
// one Parse fills in, or a field that Parse fills in with no default in its
// doc, stops the generator.
func TestDocThatDisagreesWithTheCode(t *testing.T) {
	tests := []struct{ old, new, want string }{
		{"be above 0. Default: 5m.", "be above 0. Default: 4m.", `providers.<name>.auth_rest: the doc of AuthRest says "Default: 4m", Parse fills in 5m0s`},
		{"weighted fair queueing). Default: 1.", "weighted fair queueing).", `clients[].weight: Parse fills in 1, but the doc of Weight says no "Default: …"`},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		copyPackage(t, "..", dir)
		replaceIn(t, filepath.Join(dir, "schema.go"), tt.old, tt.new)
		_, err := Read(dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("with %q: err = %v, want %q", tt.new, err, tt.want)
		}
	}
	if _, err := Read(".."); err != nil {
		t.Errorf("the package itself: %v", err)
	}
}

// copyPackage copies the Go sources and the example of the package in src
// to dst.
func copyPackage(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && (strings.HasSuffix(name, ".go") || name == "example.yaml") {
			data, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// replaceIn replaces old, which must be there, by new in the file path.
func replaceIn(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not say %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}
