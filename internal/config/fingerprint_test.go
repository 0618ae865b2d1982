package config

import (
	"testing"
	"time"
)

func TestFingerprint(t *testing.T) {
	base := Provider{Name: "p", Type: TypeOpenAI, BaseURL: "http://a/v1", Keys: []Secret{"sk-1"},
		Headers: map[string]Secret{"X-A": "1", "X-B": "2"}, Timeouts: Timeouts{Connect: time.Second}}
	same := base
	same.Headers = map[string]Secret{"X-B": "2", "X-A": "1"}
	if Fingerprint(base) != Fingerprint(same) {
		t.Error("equal settings, different fingerprints")
	}
	for name, change := range map[string]func(p *Provider){
		"key":     func(p *Provider) { p.Keys = []Secret{"sk-2"} },
		"header":  func(p *Provider) { p.Headers = map[string]Secret{"X-A": "1", "X-B": "3"} },
		"url":     func(p *Provider) { p.BaseURL = "http://b/v1" },
		"timeout": func(p *Provider) { p.Timeouts.Connect = 2 * time.Second },
		"limits":  func(p *Provider) { p.Limits.RPM = 10 },
		"auto":    func(p *Provider) { p.Timeouts.AutoTTFB = true },
		"rest":    func(p *Provider) { p.AuthRest = time.Hour },
		"probe":   func(p *Provider) { p.AuthProbe = time.Minute },
	} {
		p := base
		change(&p)
		if Fingerprint(p) == Fingerprint(base) {
			t.Errorf("a changed %s keeps the fingerprint", name)
		}
	}
	if fp := Fingerprint(base); len(fp) != 32 || Fingerprint(&base) == "" {
		t.Errorf("fingerprint %q", fp)
	}
}

// A breaker's fingerprint decides whether a reload keeps its state; every
// setting of the block is in it, background_probe included.
func TestBreakerFingerprint(t *testing.T) {
	base := Breaker{Consecutive: 5, Open: 5 * time.Second, OpenBackoff: 1.5, MaxOpen: 8 * time.Second}
	for name, change := range map[string]func(b *Breaker){
		"open":             func(b *Breaker) { b.Open = 6 * time.Second },
		"open_backoff":     func(b *Breaker) { b.OpenBackoff = 2 },
		"max_open":         func(b *Breaker) { b.MaxOpen = 9 * time.Second },
		"background_probe": func(b *Breaker) { b.BackgroundProbe = true },
	} {
		b := base
		change(&b)
		if Fingerprint(b) == Fingerprint(base) {
			t.Errorf("a changed %s keeps the breaker's fingerprint", name)
		}
	}
}
