package catalog

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Every name and id of every entry leads back to it, on its own cloud and
// on any, and to nothing else.
func TestEveryIDResolvesToItsEntry(t *testing.T) {
	if len(conflicts) > 0 {
		t.Fatalf("ids claimed by two models: %v", conflicts)
	}
	for _, m := range All() {
		names := []string{m.Name}
		for _, o := range m.Offers {
			ids := append([]string{o.ID}, o.Aliases...)
			for _, p := range o.Profiles {
				ids = append(ids, p+"."+o.ID)
			}
			for _, id := range ids {
				if got, ok := Lookup(o.Provider, id); !ok || got.Name != m.Name {
					t.Errorf("Lookup(%q, %q) = %q, %v; want %s", o.Provider, id, got.Name, ok, m.Name)
				}
			}
			names = append(names, ids...)
		}
		for _, n := range names {
			if got, ok := Lookup("", n); !ok || got.Name != m.Name {
				t.Errorf("Lookup(\"\", %q) = %q, %v; want %s", n, got.Name, ok, m.Name)
			}
		}
	}
}

// A model is found on the clouds that offer it and on no other.
func TestLookupByProvider(t *testing.T) {
	for _, tc := range []struct {
		provider, model string
		want            bool
	}{
		{Bedrock, "claude-sonnet-4-5", true},
		{Bedrock, "claude-sonnet-4-5@20250929", true}, // Vertex's id names the same model
		{Bedrock, "gpt-4.1", false},
		{Azure, "gpt-4.1-2025-04-14", true},
		{Azure, "gemini-2.5-pro", false},
		{Vertex, "gemini-2.5-pro", true},
		{Gemini, "claude-opus-4-5", false},
		{OpenAI, "gpt-4.2", false},
		{OpenAI, "GPT-4.1", false}, // ids are exact
		{"", "", false},
	} {
		if _, ok := Lookup(tc.provider, tc.model); ok != tc.want {
			t.Errorf("Lookup(%q, %q) ok = %v; want %v", tc.provider, tc.model, ok, tc.want)
		}
	}
}

// The figures are whole: names unique, prices positive, windows larger
// than outputs, every price sourced and dated, every offer on a known
// cloud with profiles only on Bedrock.
func TestEntriesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All() {
		if seen[m.Name] || m.Name == "" || m.Display == "" {
			t.Errorf("%q: a name missing or used twice", m.Name)
		}
		seen[m.Name] = true
		p := m.Price
		if p.Input <= 0 || p.Output <= 0 || p.CachedInput <= 0 || p.CachedInput > p.Input || p.Output < p.Input {
			t.Errorf("%s: price %+v", m.Name, p)
		}
		if lc := m.LongContext; lc != nil {
			reachable := lc.Over > 0 && (lc.Over < m.Context || strings.Contains(m.Note, "beta"))
			dearer := lc.Price.Input > p.Input && lc.Price.Output > p.Output && lc.Price.CachedInput > p.CachedInput
			if !reachable || !dearer {
				t.Errorf("%s: long-context price %+v", m.Name, *lc)
			}
		}
		if m.Context <= m.MaxOutput || m.MaxOutput <= 0 {
			t.Errorf("%s: window %d, output %d", m.Name, m.Context, m.MaxOutput)
		}
		if m.Source == nil || m.Source.Name == "" || !strings.HasPrefix(m.Source.URL, "https://") {
			t.Fatalf("%s: no source", m.Name)
		}
		if d, err := time.Parse(time.DateOnly, m.Source.AsOf); err != nil || d.Year() < 2025 {
			t.Errorf("%s: source date %q", m.Name, m.Source.AsOf)
		}
		if !slices.Contains(Providers, m.Maker) {
			t.Errorf("%s: maker %q", m.Name, m.Maker)
		}
		if _, ok := m.Offer(m.Maker); !ok {
			t.Errorf("%s: not offered by its maker", m.Name)
		}
		for _, o := range m.Offers {
			if !slices.Contains(Providers, o.Provider) || o.ID == "" {
				t.Errorf("%s: offer %+v", m.Name, o)
			}
			if (len(o.Profiles) > 0 || o.NeedsProfile) && o.Provider != Bedrock {
				t.Errorf("%s: profiles on %s", m.Name, o.Provider)
			}
			for _, g := range o.Profiles {
				if !slices.Contains([]string{"global", "us", "eu", "jp", "apac", "au", "us-gov"}, g) {
					t.Errorf("%s: profile geography %q", m.Name, g)
				}
			}
		}
	}
}

func TestResolveBedrockProfiles(t *testing.T) {
	const sonnet45 = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	for _, tc := range []struct {
		model, region, want string
	}{
		{"claude-sonnet-4-5", "us-east-1", "us." + sonnet45},
		{"claude-sonnet-4-5", "us-west-2", "us." + sonnet45},
		{"claude-sonnet-4-5", "eu-central-1", "eu." + sonnet45},
		{"claude-sonnet-4-5", "ap-northeast-1", "jp." + sonnet45},     // Tokyo has its own
		{"claude-sonnet-4-5", "ap-southeast-1", "global." + sonnet45}, // no apac profile
		{"claude-sonnet-4-5", "sa-east-1", "global." + sonnet45},
		{"claude-sonnet-4-5", "", "global." + sonnet45},
		{sonnet45, "eu-west-3", "eu." + sonnet45},                                             // by its plain id
		{"claude-sonnet-4-5-20250929", "us-east-2", "us." + sonnet45},                         // by the Claude API's
		{"global." + sonnet45, "eu-west-1", "global." + sonnet45},                             // a profile is kept
		{"claude-sonnet-4", "ap-northeast-1", "apac.anthropic.claude-sonnet-4-20250514-v1:0"}, // no jp: Asia Pacific's
		{"claude-opus-4-6", "ap-south-1", "apac.anthropic.claude-opus-4-6-v1"},
		{"claude-opus-4-1", "us-east-1", "us.anthropic.claude-opus-4-1-20250805-v1:0"},
		{"claude-opus-4-1", "eu-west-1", ""}, // us only, and no plain-id invocation
		{"claude-opus-4-1", "us-gov-west-1", ""},
		{"claude-3-7-sonnet", "us-east-1", ""}, // retired on Bedrock
		{"claude-3-5-sonnet", "us-west-2", "us.anthropic.claude-3-5-sonnet-20241022-v2:0"},
		{"claude-3-5-sonnet", "eu-west-1", "anthropic.claude-3-5-sonnet-20241022-v2:0"}, // invocable by its plain id
		{"claude-opus-4-7", "us-east-1", ""},                                            // not in Bedrock's catalog
		{"gpt-4.1", "us-east-1", ""},
	} {
		id, m, ok := Resolve(Bedrock, tc.model, tc.region)
		named, _ := Lookup("", tc.model)
		if id != tc.want || ok != (tc.want != "") || (ok && m.Name != named.Name) {
			t.Errorf("Resolve(bedrock, %q, %q) = %q, %q, %v; want %q", tc.model, tc.region, id, m.Name, ok, tc.want)
		}
	}
}

func TestResolveOtherClouds(t *testing.T) {
	for _, tc := range []struct {
		provider, model, want string
	}{
		{Vertex, "claude-sonnet-4-5", "claude-sonnet-4-5@20250929"},
		{Vertex, "us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5@20251001"},
		{Vertex, "claude-opus-4-6", "claude-opus-4-6"},
		{Vertex, "gemini-2.5-flash", "gemini-2.5-flash"},
		{Anthropic, "claude-haiku-4-5@20251001", "claude-haiku-4-5-20251001"},
		{Anthropic, "claude-opus-4-1", ""}, // retired there
		{OpenAI, "gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{Azure, "o4-mini", "o4-mini"},
		{Gemini, "gemini-2.0-flash", ""},
		{"", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
	} {
		if id, _, ok := Resolve(tc.provider, tc.model, "us-central1"); id != tc.want || ok != (tc.want != "") {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tc.provider, tc.model, id, ok, tc.want)
		}
	}
}

// What All and Lookup return is the caller's: changing it changes nothing
// in the catalog.
func TestCopiesAreTheCallers(t *testing.T) {
	m, _ := Lookup(Bedrock, "claude-sonnet-4-5")
	m.Offers[1].Profiles[0] = "xx"
	m.Offers[0].ID = "changed"
	all := All()
	all[0].Offers[0].ID = "changed"
	again, _ := Lookup(Bedrock, "claude-sonnet-4-5")
	if o, _ := again.Offer(Bedrock); o.Profiles[0] != "global" || again.Offers[0].ID == "changed" || All()[0].Offers[0].ID == "changed" {
		t.Fatal("a caller's change reached the catalog")
	}
}

// buildIndex reports a name two models claim.
func TestBuildIndexFindsClashes(t *testing.T) {
	idx, clash := buildIndex([]Model{
		{Name: "a", Offers: []Offer{oa("x"), az("x")}}, // one model on two clouds: no clash
		{Name: "b", Offers: []Offer{vx("x")}},
		{Name: "c", Offers: []Offer{br("c", "us")}},
		{Name: "d", Offers: []Offer{oa("us.c")}}, // c's profile
	})
	if !slices.Equal(clash, []string{"x", "us.c"}) || idx["x"] != 0 || idx["us.c"] != 2 {
		t.Fatalf("clashes %v, index %v", clash, idx)
	}
}
