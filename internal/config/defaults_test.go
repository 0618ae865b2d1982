package config

import (
	"reflect"
	"testing"
	"time"
)

func TestDefaultsFilled(t *testing.T) {
	c, err := Parse("f.yaml", doc(
		"clients: [{name: web, key: k}]",
		"providers:",
		"  openai: {keys: [k1, k2]}",
		"  anthropic: {}",
		"  local: {type: openai, base_url: http://127.0.0.1:11434/v1, timeouts: {ttfb: 5m}}",
		"models:",
		"  - name: smart",
		"    targets:",
		"      - {provider: openai, model: gpt, price: {input: 2, output: 8}}",
		"      - {provider: local, model: llama, keys: [k3]}",
	), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != DefaultListen || c.State != DefaultState {
		t.Errorf("Listen, State = %q, %q", c.Listen, c.State)
	}
	if want := (Server{MaxBodyBytes: 16 << 20, BodyTimeout: time.Minute, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, WriteTimeout: 30 * time.Second, UsageDrain: 5 * time.Second}); !reflect.DeepEqual(c.Server, want) {
		t.Errorf("server = %+v, want %+v", c.Server, want)
	}
	if c.Clients[0].Weight != 1 {
		t.Errorf("client weight = %d, want 1", c.Clients[0].Weight)
	}
	if p := c.Providers["openai"]; p.Type != TypeOpenAI || p.BaseURL != DefaultOpenAIBaseURL || p.Name != "openai" {
		t.Errorf("openai = %+v", p)
	}
	if p := c.Providers["anthropic"]; p.Type != TypeAnthropic || p.BaseURL != DefaultAnthropicBaseURL {
		t.Errorf("anthropic = %+v", p)
	}
	builtin := Timeouts{Connect: 5 * time.Second, TTFB: time.Minute, Idle: 30 * time.Second, Total: 10 * time.Minute,
		SuspectAfter: 3750 * time.Millisecond, AutoSuspect: true}
	if c.Defaults.Timeouts != builtin {
		t.Errorf("defaults.timeouts = %+v, want %+v", c.Defaults.Timeouts, builtin)
	}
	m := c.Models[0]
	if m.Strategy != Fallback {
		t.Errorf("strategy = %q", m.Strategy)
	}
	t0, t1 := m.Targets[0], m.Targets[1]
	if t0.Weight != 1 || t0.Price.CachedInput != 2 || len(t0.Keys) != 2 || t0.Keys[1] != "k2" {
		t.Errorf("target 0 = %+v", t0)
	}
	if len(t1.Keys) != 1 || t1.Keys[0] != "k3" {
		t.Errorf("target 1 keys = %q, want its own", t1.Keys)
	}
	if want := builtin; t0.Timeouts != want {
		t.Errorf("target 0 timeouts = %+v, want %+v", t0.Timeouts, want)
	}
	if want := (Timeouts{Connect: 5 * time.Second, TTFB: 5 * time.Minute, Idle: 30 * time.Second, Total: 10 * time.Minute,
		SuspectAfter: 3750 * time.Millisecond, AutoSuspect: true}); t1.Timeouts != want {
		t.Errorf("target 1 timeouts = %+v, want %+v (the provider's ttfb)", t1.Timeouts, want)
	}
}

func TestInheritanceFieldByField(t *testing.T) {
	c, err := Parse("f.yaml", doc(
		"providers:",
		"  openai: {timeouts: {ttfb: 30s}}",
		"defaults:",
		"  breaker: {window: 10s, failure_rate: 0.5, consecutive: 5, open: 5s}",
		"  retry: {attempts: 4, base: 50ms}",
		"  timeouts: {total: 2m}",
		"models:",
		"  - name: inherits",
		"    targets: [{provider: openai, model: gpt}]",
		"  - name: overrides",
		"    targets: [{provider: openai, model: gpt}]",
		"    breaker: {consecutive: 0, open: 1s}",
		"    retry: {attempts: 1, max: ~}",
		"    timeouts: {ttfb: 3s}",
	), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Models[0], c.Models[1]
	if want := (Breaker{Window: 10 * time.Second, FailureRate: 0.5, Consecutive: 5, Open: 5 * time.Second,
		OpenBackoff: 1.5, MaxOpen: 8 * time.Second}); a.Breaker != want {
		t.Errorf("inherited breaker = %+v, want %+v", a.Breaker, want)
	}
	if want := (Breaker{Window: 10 * time.Second, FailureRate: 0.5, Consecutive: 0, Open: time.Second,
		OpenBackoff: 1.5, MaxOpen: 8 * time.Second}); b.Breaker != want {
		t.Errorf("merged breaker = %+v, want %+v (consecutive: 0 kept)", b.Breaker, want)
	}
	if want := (Retry{Attempts: 1, Base: 50 * time.Millisecond, SameTargetWait: 2 * time.Second}); b.Retry != want {
		t.Errorf("merged retry = %+v, want %+v", b.Retry, want)
	}
	if got := a.Targets[0].Timeouts; got.TTFB != 30*time.Second || got.Total != 2*time.Minute {
		t.Errorf("inherits target timeouts = %+v, want the provider's ttfb and defaults' total", got)
	}
	if got := b.Targets[0].Timeouts; got.TTFB != 3*time.Second || got.Total != 2*time.Minute || got.Connect != DefaultConnectTimeout {
		t.Errorf("overrides target timeouts = %+v, want the alias's ttfb", got)
	}
}

func TestAnchorsAndMerge(t *testing.T) {
	c, err := Parse("f.yaml", doc(
		"providers:",
		"  openai: {}",
		"x-breaker: &fast {consecutive: 3, open: 2s}",
	), noEnv)
	if err == nil {
		t.Fatalf("unknown top-level x-breaker accepted: %v", c)
	}
	c, err = Parse("f.yaml", doc(
		"providers:",
		"  openai: {}",
		"models:",
		"  - name: a",
		"    targets: &t [{provider: openai, model: gpt}]",
		"    breaker: &fast {consecutive: 3, open: 2s}",
		"  - name: b",
		"    targets: *t",
		"    breaker: {<<: *fast, open: 9s}",
	), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if b := c.Models[1].Breaker; b.Consecutive != 3 || b.Open != 9*time.Second || len(c.Models[1].Targets) != 1 {
		t.Errorf("model b = %+v", c.Models[1])
	}
}

// usage_drain written as 0 turns the drain off; left out, it is 5s.
func TestUsageDrainZeroIsKept(t *testing.T) {
	c, err := Parse("f.yaml", doc(
		"server: {usage_drain: 0s}",
		"providers: {openai: {keys: [k]}}",
		"models: [{name: smart, targets: [{provider: openai, model: gpt}]}]",
	), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.UsageDrain != 0 {
		t.Errorf("usage_drain = %v, want 0 as written", c.Server.UsageDrain)
	}
}
