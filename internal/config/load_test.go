package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/limit"
	"github.com/fuseboxhq/fusebox/retry"
)

// anyEnv sets every variable, to "value-of-NAME".
func anyEnv(k string) (string, bool) { return "value-of-" + k, true }

func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"basic.yaml", "failover.yaml"} {
		if !slicesContainsBase(files, want) {
			t.Errorf("examples/%s is missing", want)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env := func(k string) (string, bool) {
			switch k {
			case "FUSEBOX_LISTEN":
				return "", false // use the default in the file
			case "REDIS_URL":
				return "redis://:pw@127.0.0.1:6379/0", true
			}
			return anyEnv(k)
		}
		c, err := Parse(f, data, env)
		if err != nil {
			t.Errorf("%s:\n%v", f, err)
			continue
		}
		buildAll(t, c)
	}
}

func slicesContainsBase(files []string, base string) bool {
	for _, f := range files {
		if filepath.Base(f) == base {
			return true
		}
	}
	return false
}

// buildAll builds every library object the gateway would, failing the test
// on any error: a parsed Config must never fail there.
func buildAll(t *testing.T, c *Config) {
	t.Helper()
	for _, m := range c.Models {
		if _, err := breaker.New(m.Breaker.Settings()); err != nil {
			t.Errorf("%s: breaker.New: %v", m.Name, err)
		}
		if _, err := retry.NewBudget(m.Retry.BudgetConfig()); err != nil {
			t.Errorf("%s: retry.NewBudget: %v", m.Name, err)
		}
	}
	for _, p := range c.Providers {
		if _, err := limit.NewPacer(p.Limits.Pacer()); err != nil {
			t.Errorf("%s: limit.NewPacer: %v", p.Name, err)
		}
		if _, err := limit.NewBulkhead(p.Limits.Bulkhead()); err != nil {
			t.Errorf("%s: limit.NewBulkhead: %v", p.Name, err)
		}
	}
}

func TestFailoverExample(t *testing.T) {
	c, err := Load("../../examples/failover.yaml")
	if err == nil {
		// Only when the environment happens to hold every key.
		t.Skip("the environment sets every variable of the example")
	}
	if !strings.Contains(err.Error(), "environment variable ANTHROPIC_API_KEY is not set") {
		t.Errorf("Load without keys: %v", err)
	}
	data, _ := os.ReadFile("../../examples/failover.yaml")
	c, err = Parse("failover.yaml", data, func(k string) (string, bool) {
		if k == "FUSEBOX_LISTEN" {
			return "", false
		}
		return anyEnv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	m := c.Models[0]
	if m.Name != "smart" || len(m.Targets) != 3 || m.Targets[2].Provider != "deepseek" {
		t.Errorf("smart = %+v", m)
	}
	if m.Breaker.MinCalls != 10 || m.Breaker.FailureRate != 0.5 || m.Breaker.Consecutive != 5 {
		t.Errorf("smart breaker = %+v, want its own min_calls and the defaults' rates", m.Breaker)
	}
	if got := c.Providers["deepseek"].Overrides.Settings(); len(got.Status) != 1 || got.Status[429].String() != "outage" {
		t.Errorf("deepseek overrides = %+v", got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path)
	var es Errors
	if err == nil || errors.As(err, &es) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v; want one plain error that is fs.ErrNotExist", err)
	}
	if got, want := err.Error(), "cannot read the configuration file "+path+": no such file or directory"; got != want {
		t.Errorf("err = %q; want %q, the file named once", got, want)
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fusebox.yaml")
	if err := os.WriteFile(path, doc(valid...), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.File != path || c.Models[0].Name != "smart" {
		t.Errorf("config = %v", c)
	}
}

func TestEmptyAndNullDocuments(t *testing.T) {
	for _, in := range []string{"", "\n", "# nothing\n", "~\n", "{}\n"} {
		_, err := Parse("f.yaml", []byte(in), noEnv)
		want := "f.yaml: providers: no providers configured (want at least one)\nf.yaml: models: at least one model alias is required"
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) err = %v", in, err)
		}
	}
}

func TestAliasBomb(t *testing.T) {
	// A model with 1000 targets, listed 1000 times by alias: a million
	// targets from one line. Parse must stop counting, not build them.
	bomb := "providers: {openai: {}}\nmodels: [&m {name: a, targets: [&x {provider: openai, model: m}" +
		strings.Repeat(", *x", 999) + "]}" + strings.Repeat(", *m", 999) + "]\n"
	_, err := Parse("bomb.yaml", []byte(bomb), noEnv)
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml:2: models[32]") ||
		!strings.Contains(err.Error(), "too many values (over 100000, counting YAML aliases expanded)") {
		t.Errorf("err = %.300v", err)
	}
}
