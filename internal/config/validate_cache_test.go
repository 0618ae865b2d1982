package config

import (
	"strings"
	"testing"
	"time"
)

func TestCacheAndDegradedSettings(t *testing.T) {
	good := `providers:
  openai: {type: openai, keys: [k]}
cache: {max_entries: 100, max_bytes: 1048576}
models:
  - name: smart
    targets: [{provider: openai, model: gpt-4.1}]
    cache: {ttl: 10m, stale_for: 1h, scope: global}
    degraded: {content: "We are busy; please try again shortly."}
`
	cfg, err := Parse("c.yaml", []byte(good), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Models[0]
	if m.Cache.TTL != 10*time.Minute || m.Cache.StaleFor != time.Hour || m.Cache.Scope != "global" || !m.Degraded.Enabled() || cfg.Cache.MaxEntries != 100 {
		t.Fatalf("%+v %+v %+v", m.Cache, m.Degraded, cfg.Cache)
	}
	bad := `providers:
  openai: {type: openai, keys: [k]}
cache: {max_entries: -1}
models:
  - name: smart
    targets: [{provider: openai, model: gpt-4.1}]
    cache: {stale_for: 1h, scope: everyone}
    degraded: {status: 200, message: x}
`
	_, err = Parse("c.yaml", []byte(bad), func(string) (string, bool) { return "", false })
	for _, want := range []string{"c.yaml:3: cache.max_entries", "c.yaml:7: models[0].cache.scope: unknown scope", "c.yaml:7: models[0].cache.stale_for: needs a ttl", "c.yaml:8: models[0].degraded.status"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors %v; want %q", err, want)
		}
	}
}
