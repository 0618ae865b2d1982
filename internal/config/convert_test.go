package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/limit"
	"github.com/fuseboxhq/fusebox/retry"
)

// TestBreakerFieldsCoverConfig keeps the translation table in step with
// breaker.Config: every numeric setting must have a YAML name.
func TestBreakerFieldsCoverConfig(t *testing.T) {
	typ := reflect.TypeFor[breaker.Config]()
	names := map[string]bool{}
	for i := range reflect.TypeFor[Breaker]().NumField() {
		names[yamlName(reflect.TypeFor[Breaker]().Field(i))] = true
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Float64:
			if y, ok := breakerFields[f.Name]; !ok || !names[y] {
				t.Errorf("breaker.Config.%s has no field in Breaker (table: %q)", f.Name, y)
			}
		}
	}
}

func TestConversions(t *testing.T) {
	b := Breaker{Window: 10 * time.Second, MinCalls: 20, FailureRate: 0.5, Consecutive: 5, Open: 5 * time.Second, Probes: 2,
		SlowCall: time.Second, SlowCallRate: 0.9, OpenBackoff: 2, MaxOpen: time.Minute, OpenJitter: 0.1, ProbeSuccesses: 1,
		HalfOpenMaxWait: 30 * time.Second, Buckets: 5, FailureThreshold: 3}
	want := breaker.Config{Window: 10 * time.Second, MinCalls: 20, FailureRate: 0.5, ConsecutiveFailures: 5,
		OpenDuration: 5 * time.Second, HalfOpenProbes: 2, SlowCallDuration: time.Second, SlowCallRate: 0.9,
		OpenBackoff: 2, MaxOpenDuration: time.Minute, OpenJitter: 0.1, HalfOpenSuccesses: 1,
		HalfOpenMaxWait: 30 * time.Second, Buckets: 5, FailureThreshold: 3}
	if got := b.Settings(); !reflect.DeepEqual(got, want) {
		t.Errorf("Settings() = %+v\nwant %+v", got, want)
	}
	r := Retry{Attempts: 2, Base: 200 * time.Millisecond, Max: 5 * time.Second, Multiplier: 3, MaxWait: time.Second,
		Budget: 0.2, BudgetMinPerSecond: 1}
	if got, want := r.Policy(), (retry.Policy{Attempts: 2, Base: 200 * time.Millisecond, Max: 5 * time.Second,
		Multiplier: 3, MaxWait: time.Second}); !reflect.DeepEqual(got, want) {
		t.Errorf("Policy() = %+v", got)
	}
	if got := r.BudgetConfig(); got != (retry.BudgetConfig{Ratio: 0.2, MinPerSecond: 1}) {
		t.Errorf("BudgetConfig() = %+v", got)
	}
	l := Limits{RPM: 500, TPM: 200000, MaxInFlight: 64, MaxWait: 2 * time.Second}
	if got := l.Pacer(); got.Limits != (limit.Limits{RequestsPerMinute: 500, TokensPerMinute: 200000}) || got.MaxWait != 2*time.Second {
		t.Errorf("Pacer() = %+v", got)
	}
	if got := l.Bulkhead(); got.MaxInFlight != 64 || got.MaxWait != 2*time.Second {
		t.Errorf("Bulkhead() = %+v", got)
	}
	o := Overrides{Status: map[int]aierr.Kind{429: aierr.Outage}, Code: map[string]aierr.Kind{"queue_full": aierr.Outage}}
	got := o.Settings()
	o.Status[429] = aierr.Throttle
	if got.Status[429] != aierr.Outage || got.Code["queue_full"] != aierr.Outage {
		t.Errorf("Overrides.Settings() = %+v (want a copy)", got)
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: 2, Output: 8, CachedInput: 0.5}
	if got := p.Cost(1_000_000, 0, 1_000_000); got != 10 {
		t.Errorf("Cost = %v, want 10", got)
	}
	if got := p.Cost(1_000_000, 1_000_000, 0); got != 0.5 {
		t.Errorf("Cost all cached = %v, want 0.5", got)
	}
	if got := p.Cost(100, 500, -1); got != 100*0.5/1e6 {
		t.Errorf("Cost with cached > input = %v", got)
	}
}
