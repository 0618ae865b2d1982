package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestSecretsNeverPrinted(t *testing.T) {
	c, err := Parse("f.yaml", doc(
		"state: redis://user:redis-pass@127.0.0.1:6379/0",
		"admin_token: admin-secret",
		"clients: [{name: web, key: client-secret}]",
		"providers:",
		"  openai: {keys: [sk-provider], headers: {api-key: header-secret}}",
		"models:",
		"  - {name: smart, targets: [{provider: openai, model: gpt, keys: [sk-target]}]}",
	), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"redis-pass", "admin-secret", "client-secret", "sk-provider", "header-secret", "sk-target"}
	js, _ := json.Marshal(c)
	outputs := map[string]string{
		"String":   c.String(),
		"%v":       fmt.Sprintf("%v", *c),
		"%+v":      fmt.Sprintf("%+v", *c),
		"%#v":      fmt.Sprintf("%#v", *c),
		"json":     string(js),
		"Redacted": fmt.Sprintf("%#v", *c.Redacted()),
	}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s shows %q:\n%s", name, s, out)
			}
		}
	}
	if !strings.Contains(c.String(), "admin_token: '***'") || !strings.Contains(c.String(), "redis://user:xxxxx@127.0.0.1:6379/0") {
		t.Errorf("String:\n%s", c)
	}
	// The original is untouched.
	if c.AdminToken.Value() != "admin-secret" || c.Providers["openai"].Keys[0].Value() != "sk-provider" {
		t.Error("Redacted changed the original")
	}
	if Secret("").String() != "" {
		t.Error("an empty secret should print as empty")
	}
}
