package config

import (
	"strings"
	"testing"
)

// min_rate is inherited field by field like the other timeouts, and a
// value that is no finite non-negative rate is refused naming the field.

func TestMinRateIsInherited(t *testing.T) {
	c := parseOK(t,
		"providers: {openai: {timeouts: {min_rate: 4}}}",
		"defaults: {timeouts: {min_rate: 2.5}}",
		"models:",
		"  - name: a",
		"    targets: [{provider: openai, model: m}]",
		"  - name: b",
		"    timeouts: {min_rate: 0.5}",
		"    targets: [{provider: openai, model: m}]",
	)
	if got := c.Defaults.Timeouts.MinRate; got != 2.5 {
		t.Errorf("defaults min_rate %v; want 2.5", got)
	}
	if got := c.Models[0].Targets[0].Timeouts.MinRate; got != 4 {
		t.Errorf("a's target min_rate %v; want the provider's 4", got)
	}
	if got := c.Models[1].Targets[0].Timeouts.MinRate; got != 0.5 {
		t.Errorf("b's target min_rate %v; want the alias's 0.5", got)
	}
}

func TestMinRateErrors(t *testing.T) {
	for _, tt := range []struct {
		name, line, want string
	}{
		{"negative", "defaults: {timeouts: {min_rate: -1}}", `f.yaml:8: defaults.timeouts.min_rate: must not be negative, got -1`},
		{"infinite", "defaults: {timeouts: {min_rate: .inf}}", `f.yaml:8: defaults.timeouts.min_rate: bad number ".inf" (want a number such as 2 or 0.5, or auto)`},
		{"a word", "defaults: {timeouts: {min_rate: fast}}", `f.yaml:8: defaults.timeouts.min_rate: bad number "fast" (want a number such as 2 or 0.5, or auto)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(parseErrors(t, with(tt.line)), "\n"); got != tt.want {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// min_rate: auto learns the floor from the target's own pace, with the
// inherited value as its least; it is inherited like the other autos.
func TestMinRateAuto(t *testing.T) {
	c := parseOK(t,
		"defaults: {timeouts: {min_rate: 1}}",
		"providers: {openai: {timeouts: {min_rate: auto}}}",
		"models:",
		"  - name: a",
		"    targets: [{provider: openai, model: m}]",
		"  - name: b",
		"    timeouts: {min_rate: 3}",
		"    targets: [{provider: openai, model: m}]",
	)
	if tt := c.Models[0].Targets[0].Timeouts; !tt.AutoRate || tt.MinRate != 1 {
		t.Errorf("a's target: auto %v, min_rate %v; want auto with the default's 1 as its floor", tt.AutoRate, tt.MinRate)
	}
	if tt := c.Models[1].Targets[0].Timeouts; tt.AutoRate || tt.MinRate != 3 {
		t.Errorf("b's target: auto %v, min_rate %v; want the alias's fixed 3", tt.AutoRate, tt.MinRate)
	}
}
