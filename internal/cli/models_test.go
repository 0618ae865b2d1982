package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/catalog"
)

func runFusebox(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), args, &out, &out)
	return out.String(), err
}

// The table has a row per model, with its clouds, window, output limit
// and prices, and names its sources with their dates.
func TestModelsTable(t *testing.T) {
	out, err := runFusebox(t, "models")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "CLOUDS") {
		t.Fatalf("header %q", lines[0])
	}
	rows := map[string][]string{}
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		f := strings.Fields(l)
		rows[f[0]] = f
	}
	if len(rows) != len(catalog.All()) {
		t.Errorf("%d rows for %d models", len(rows), len(catalog.All()))
	}
	for name, want := range map[string][]string{
		"claude-sonnet-4-5": {"claude-sonnet-4-5", "anthropic,bedrock,vertex", "200K", "64K", "$3", "$15", "$0.3"},
		"gpt-4.1":           {"gpt-4.1", "openai,azure", "1.05M", "32K", "$2", "$8", "$0.5"},
		"gemini-2.5-flash":  {"gemini-2.5-flash", "gemini,vertex", "1M", "64K", "$0.3", "$2.5", "$0.03"},
		"claude-opus-4":     {"claude-opus-4", "anthropic*,bedrock*,vertex", "200K", "32K", "$15", "$75", "$1.5"},
	} {
		if got := strings.Join(rows[name], " "); got != strings.Join(want, " ") {
			t.Errorf("row %q; want %q", got, strings.Join(want, " "))
		}
	}
	for _, s := range []string{"Claude API pricing, 2026-12-02", "OpenAI API pricing, 2025-12-11", "Gemini Developer API pricing, 2025-11-18"} {
		if !strings.Contains(out, s) {
			t.Errorf("the sources do not name %q:\n%s", s, out)
		}
	}
}

// --provider keeps the models that cloud offers, with their ids there.
func TestModelsProvider(t *testing.T) {
	out, err := runFusebox(t, "models", "--provider", "bedrock")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ID ON BEDROCK") || !strings.Contains(out, "anthropic.claude-sonnet-4-5-20250929-v1:0 (global,us,eu,jp)") {
		t.Errorf("no Bedrock ids:\n%s", out)
	}
	for _, absent := range []string{"gpt-4.1", "gemini-2.5-pro", "OpenAI API pricing", "claude-opus-4-7"} {
		if strings.Contains(out, absent) {
			t.Errorf("%s is listed for bedrock:\n%s", absent, out)
		}
	}
	if _, err := runFusebox(t, "models", "--provider", "aws"); err == nil || !strings.Contains(err.Error(), "--provider") {
		t.Errorf("an unknown provider: %v", err)
	}
}

// --json is the catalog's own records, filtered the same way.
func TestModelsJSON(t *testing.T) {
	for provider, want := range map[string]int{"": len(catalog.All()), "azure": 12} {
		args := []string{"models", "--json"}
		if provider != "" {
			args = append(args, "--provider", provider)
		}
		out, err := runFusebox(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		var ms []catalog.Model
		if err := json.Unmarshal([]byte(out), &ms); err != nil {
			t.Fatalf("%v:\n%.300s", err, out)
		}
		if len(ms) != want {
			t.Errorf("--provider %q: %d models; want %d", provider, len(ms), want)
		}
		for _, m := range ms {
			ref, _ := catalog.Lookup(provider, m.Name)
			if m.Price != ref.Price || m.Source == nil || m.Source.AsOf != ref.Source.AsOf || len(m.Offers) != len(ref.Offers) {
				t.Errorf("%s: %+v; the catalog has %+v", m.Name, m, ref)
			}
		}
	}
}

func TestTokens(t *testing.T) {
	for n, want := range map[int]string{8192: "8K", 65536: "64K", 64000: "64K", 128000: "128K", 200000: "200K",
		1 << 20: "1M", 1_000_000: "1M", 1_047_576: "1.05M", 100_000: "100K", 1234: "1234"} {
		if got := tokens(n); got != want {
			t.Errorf("tokens(%d) = %s; want %s", n, got, want)
		}
	}
}
