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

func TestCacheStore(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	shared := `state: redis://127.0.0.1:6379/0
providers:
  openai: {type: openai, keys: [k]}
models:
  - name: smart
    targets: [{provider: openai, model: gpt-4.1}]
    cache: {ttl: 10m, store: redis}
`
	cfg, err := Parse("c.yaml", []byte(shared), env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Models[0].Cache.Store != "redis" {
		t.Fatalf("store %q", cfg.Models[0].Cache.Store)
	}
	for _, tc := range []struct{ state, cache, want string }{
		{"", "{ttl: 10m, store: redis}", "c.yaml:6: models[0].cache.store: redis needs the fleet's state"},
		{"state: redis://127.0.0.1:6379/0\n", "{ttl: 10m, store: memcached}", `unknown store "memcached" (known: memory, redis)`},
		{"state: redis://127.0.0.1:6379/0\n", "{store: redis}", "models[0].cache.store: needs a ttl"},
	} {
		doc := tc.state + strings.TrimPrefix(shared, "state: redis://127.0.0.1:6379/0\n")
		doc = strings.Replace(doc, "{ttl: 10m, store: redis}", tc.cache, 1)
		if _, err := Parse("c.yaml", []byte(doc), env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: errors %v; want %q", tc.cache, err, tc.want)
		}
	}
}

func TestCORSAndForwardedHeaders(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	base := "providers:\n  openai: {type: openai, keys: [k]}\nmodels: [{name: a, targets: [{provider: openai, model: m}]}]\n"
	cfg, err := Parse("c.yaml", []byte(base+"cors: {origins: [\"https://app.example.com\", \"*\"]}\nserver: {forward_headers: [OpenAI-Organization]}\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CORS.MaxAge != DefaultCORSMaxAge || cfg.Server.ForwardHeaders[0] != "OpenAI-Organization" {
		t.Fatalf("%+v %+v", cfg.CORS, cfg.Server.ForwardHeaders)
	}
	for doc, want := range map[string]string{
		"cors: {origins: [app.example.com]}\n":                    `cors.origins[0]: bad origin "app.example.com"`,
		"cors: {origins: [\"https://a.example.com/path\"]}\n":     `cors.origins[0]: bad origin`,
		"cors: {max_age: 1m}\n":                                   "cors: set without origins",
		"cors: {origins: [\"*\"], headers: [\"bad header\"]}\n":   `cors.headers[0]: not a header name`,
		"server: {forward_headers: [authorization]}\n":            "server.forward_headers[0]: authorization is never passed",
		"server: {forward_headers: [X-Fusebox-Target, Cookie]}\n": "server.forward_headers[1]: Cookie is never passed",
	} {
		if _, err := Parse("c.yaml", []byte(base+doc), env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", doc, err, want)
		}
	}
}

func TestBatch(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	base := "providers:\n  openai: {type: openai, keys: [k]}\nmodels: [{name: a, targets: [{provider: openai, model: m}]}]\n"
	cfg, err := Parse("c.yaml", []byte(base+"batch: {dir: /var/lib/fusebox/batches, concurrency: 8, line_deadline: 30m}\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if b := cfg.Batch; b.Dir != "/var/lib/fusebox/batches" || b.Concurrency != 8 || b.LineDeadline != 30*time.Minute {
		t.Fatalf("%+v", b)
	}
	for doc, want := range map[string]string{
		"batch: {concurrency: 4}\n":              "c.yaml:4: batch: set without a dir",
		"batch: {dir: /d, max_file_bytes: -1}\n": "c.yaml:4: batch.max_file_bytes: must not be negative",
		"batch: {dir: /d, line_deadline: -1s}\n": "batch.line_deadline: must not be negative",
		"batch: {dir: /d, max_in_progres: 3}\n":  "max_in_progres",
	} {
		if _, err := Parse("c.yaml", []byte(base+doc), env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", doc, err, want)
		}
	}
}
