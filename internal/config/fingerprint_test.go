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
