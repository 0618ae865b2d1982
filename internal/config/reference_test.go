package config_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/config/refdoc"
)

// fromAny sets every variable, as a test environment.
func fromAny(k string) (string, bool) { return "test-" + strings.ToLower(k), true }

func TestReferenceIsCurrent(t *testing.T) {
	want, err := refdoc.Generate(".")
	if err != nil {
		t.Fatalf("generating the reference: %v", err)
	}
	if got := config.Reference(); got != string(want) {
		t.Errorf("internal/config/reference.md is stale (%s): run go generate ./internal/config", firstDiff(got, string(want)))
	}
	docs, err := os.ReadFile("../../docs/CONFIG.md")
	if err != nil {
		t.Fatalf("%v: run go generate ./internal/config", err)
	}
	if string(docs) != config.Reference() {
		t.Errorf("docs/CONFIG.md is not internal/config/reference.md (%s): run go generate ./internal/config", firstDiff(string(docs), config.Reference()))
	}
}

// firstDiff says where got and want first differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		gl, wl := "", ""
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d is %q, want %q", i+1, gl, wl)
		}
	}
	return "no line differs"
}

func TestReferenceNamesEveryField(t *testing.T) {
	s, err := refdoc.Read(".")
	if err != nil {
		t.Fatal(err)
	}
	ref := config.Reference()
	for _, sec := range s.Sections {
		for _, f := range sec.Fields {
			for _, p := range f.Paths {
				if !strings.Contains(ref, "`"+p+"`") {
					t.Errorf("the reference does not name %s", p)
				}
			}
			if f.Block == nil && (f.Type == "" || f.Default == "") {
				t.Errorf("%s: type %q, default %q", f.Paths[0], f.Type, f.Default)
			}
		}
	}
	for _, want := range []string{
		"### `models[].cache.ttl`\n\nduration · default: `0`",
		"### `providers.<name>.keys`\n\nlist of secret · default: none",
		"### `clients[].key`\n\nsecret · default: required",
		"### `models[].strategy`\n\nfallback | weighted | least-latency | cheapest-healthy · default: `fallback`",
		"### `server.max_body_bytes`\n\nint · default: `16777216` (16 MiB)",
		"`providers.<name>.timeouts.ttfb`, `defaults.timeouts.ttfb`, `models[].timeouts.ttfb`\n\nduration or auto · default: `60s`",
		"### `providers.<name>.headers`\n\nmap of string to secret · default: none",
	} {
		if !strings.Contains(ref, want) {
			t.Errorf("the reference lacks %q", want)
		}
	}
}

// exampleSeed is a valid file that every example of the reference is
// written into, at each of its block's paths.
const exampleSeed = `state: redis://127.0.0.1:6379/0
providers:
  openai: {}
  anthropic: {}
  azure: {type: openai, base_url: "https://example.openai.azure.com/openai/v1"}
models:
  - name: smart
    targets: [{provider: openai, model: gpt-4.1}, {provider: anthropic, model: claude-sonnet-4-5}]
clients:
  - {name: web, key: k-web}
jobs:
  - name: video
    targets: [{provider: openai, model: sora-2}]
mcp:
  servers:
    - {name: tools, url: "http://127.0.0.1:9/mcp", tools: {w: {retry: auto}}}
`

func TestReferenceExamplesParse(t *testing.T) {
	s, err := refdoc.Read(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sec := range s.Sections {
		for _, ex := range sec.Examples {
			for _, path := range sec.Paths {
				data, err := embed(exampleSeed, path, sec.Paths, ex)
				if err != nil {
					t.Errorf("%s: %v\n%s", path, err, ex)
					continue
				}
				if _, err := config.Parse(path+".yaml", data, fromAny); err != nil {
					t.Errorf("the example of %s does not parse there:\n%s\n%v", path, ex, err)
				}
				n++
			}
		}
	}
	if n < 20 {
		t.Errorf("%d examples tried, want one for nearly every block", n)
	}
}

// embed writes example, YAML of one key, into the file seed at the block
// path: a block's key is set in its parent (models[] is the first alias),
// a list (path[]) is replaced, and a map's entries (path.<name>) are added.
// The example's key may name another of the block's paths (a breaker
// example under resubmit_breaker): it is then written at path.
func embed(seed, path string, paths []string, example string) ([]byte, error) {
	var root, ex yaml.Node
	if err := yaml.Unmarshal([]byte(seed), &root); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal([]byte(example), &ex); err != nil {
		return nil, err
	}
	m := ex.Content[0]
	if m.Kind != yaml.MappingNode || len(m.Content) != 2 {
		return nil, errors.New("an example is a mapping of one key")
	}
	key, value := m.Content[0].Value, m.Content[1]
	parts := strings.Split(path, ".")
	last := parts[len(parts)-1]
	parent := parts[:len(parts)-1]
	if last == "<name>" {
		last, parent = parent[len(parent)-1], parent[:len(parent)-1]
	}
	if want := strings.TrimSuffix(last, "[]"); key != want {
		if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasSuffix(p, "."+key) || p == key }) {
			return nil, fmt.Errorf("the example's key is %q, want %q", key, want)
		}
		key = want
	}
	at := root.Content[0]
	for _, p := range parent {
		at = child(at, p)
	}
	if strings.HasSuffix(path, ".<name>") {
		at = child(at, key)
		at.Content = append(at.Content, value.Content...)
	} else {
		set(at, key, value)
	}
	return yaml.Marshal(&root)
}

// child returns the value of a path part in the mapping m, made if need
// be: the first item of a list for name[], the first entry for <name>.
func child(m *yaml.Node, part string) *yaml.Node {
	if part == "<name>" {
		return m.Content[1]
	}
	name, list := strings.CutSuffix(part, "[]")
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			if list {
				return m.Content[i+1].Content[0]
			}
			return m.Content[i+1]
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	set(m, name, v)
	return v
}

// set sets key to value in the mapping m.
func set(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, value)
}

// completeFile returns the YAML of the reference's "A complete file".
func completeFile(t *testing.T) string {
	t.Helper()
	_, rest, ok := strings.Cut(config.Reference(), "## A complete file\n\n```yaml\n")
	if !ok {
		t.Fatal("the reference has no complete file")
	}
	file, _, _ := strings.Cut(rest, "```")
	return file
}

// TestCompleteFileParsesAndSetsEveryField: the package doc's complete file
// is valid, and sets every field, at one of its paths at least.
func TestCompleteFileParsesAndSetsEveryField(t *testing.T) {
	file := completeFile(t)
	if _, err := config.Parse("complete.yaml", []byte(file), fromAny); err != nil {
		t.Fatalf("the complete file of the package doc does not parse:\n%v", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(file), &root); err != nil {
		t.Fatal(err)
	}
	s, err := refdoc.Read(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range s.Sections {
		for _, f := range sec.Fields {
			set := slices.ContainsFunc(f.Paths, func(p string) bool { return has(root.Content[0], strings.Split(p, ".")) })
			if !set {
				t.Errorf("the complete file does not set %s", strings.Join(f.Paths, " or "))
			}
		}
	}
}

// has reports whether the YAML node n has a value at the path parts, in
// any item of a list (name[]) or entry of a map (<name>).
func has(n *yaml.Node, parts []string) bool {
	if len(parts) == 0 {
		return true
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	name, list := strings.CutSuffix(parts[0], "[]")
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if parts[0] == "<name>" && has(v, parts[1:]) {
			return true
		}
		if k.Value != name {
			continue
		}
		if !list {
			return has(v, parts[1:])
		}
		return slices.ContainsFunc(v.Content, func(item *yaml.Node) bool { return has(item, parts[1:]) })
	}
	return false
}

// exampleVars are the variables the header of the example file names.
var exampleVars = []string{"ANTHROPIC_API_KEY", "FUSEBOX_KEY_WEB", "OPENAI_API_KEY"}

func TestExampleParses(t *testing.T) {
	env := func(k string) (string, bool) {
		if slices.Contains(exampleVars, k) {
			return "test-" + strings.ToLower(k), true
		}
		return "", false
	}
	c, err := config.Parse("example.yaml", []byte(config.Example()), env)
	if err != nil {
		t.Fatalf("the example does not parse with %v set:\n%v", exampleVars, err)
	}
	smart := c.Models[0]
	switch {
	case len(c.Providers) < 2 || len(c.Clients) == 0 || c.Clients[0].Budget.Daily == 0:
		t.Errorf("providers %d, clients %+v: want two providers and a client with a budget", len(c.Providers), c.Clients)
	case len(smart.Targets) < 3 || smart.Cache.TTL == 0 || !smart.Timeouts.AutoTTFB:
		t.Errorf("smart = %+v: want a ladder of three targets, a cache and ttfb: auto", smart)
	case c.Defaults.Breaker.FailureRate == 0 || c.Defaults.Retry.Attempts == 0 || c.Defaults.Timeouts.Deadline == 0:
		t.Errorf("defaults = %+v: want a breaker, a retry and a deadline", c.Defaults)
	}
	for _, v := range exampleVars {
		if !strings.Contains(config.Example(), v) {
			t.Errorf("the example does not name %s", v)
		}
	}
}

func TestExampleNeedsOnlyItsVariables(t *testing.T) {
	_, err := config.Parse("example.yaml", []byte(config.Example()), func(string) (string, bool) { return "", false })
	var es config.Errors
	if !errors.As(err, &es) {
		t.Fatalf("err = %v, want the unset variables", err)
	}
	var unset []string
	for _, e := range es {
		name, ok := strings.CutPrefix(e.Msg, "environment variable ")
		name, _, _ = strings.Cut(name, " ")
		if !ok {
			t.Errorf("unexpected error: %v", e)
		}
		if !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
	}
	slices.Sort(unset)
	if !slices.Equal(unset, exampleVars) {
		t.Errorf("unset variables %v, want %v", unset, exampleVars)
	}
}
