package config

import (
	"errors"
	"strings"
	"testing"
)

// admin_token: 12 and a client key "short" are refused with their line
// and field, and the message never holds the secret.
func TestWeakSecretsNamedNeverShown(t *testing.T) {
	src := `listen: 127.0.0.1:8080
admin_token: "12"
clients:
  - {name: web, key: 9f86d081884c7d659a2feaa0c55ad015}
  - name: batch
    key: short
metrics_token: aaaaaaaaaaaaaaaaaaaaaaaa
providers:
  openai: {type: openai, keys: [k]}
models: [{name: a, targets: [{provider: openai, model: m}]}]
`
	cfg, err := Parse("f.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.WeakSecrets()
	var list Errors
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("got %v, want three errors", err)
	}
	want := []struct {
		line  int
		field string
		msg   string
	}{{2, "admin_token", "too short"}, {6, "clients[1].key", "too short"}, {7, "metrics_token", "too easy to guess"}}
	for i, w := range want {
		e := list[i]
		if e.Line != w.line || e.Field != w.field || !strings.Contains(e.Msg, w.msg) {
			t.Errorf("error %d: %v, want line %d field %s %q", i, e, w.line, w.field, w.msg)
		}
		for _, secret := range []string{`"short"`, ": short", "aaaaaaaa", `"12"`, ": 12"} {
			if strings.Contains(e.Error(), secret) {
				t.Errorf("error %q shows the secret", e.Error())
			}
		}
	}
}

func TestWeakness(t *testing.T) {
	for s, weak := range map[string]bool{
		"":                                 false, // unset: the admin API is off
		"12":                               true,
		"passwordpassword":                 true,
		"0123456789abcdef":                 true,
		"abababababababababab":             true,
		"test-fusebox_key_web":             false,
		"9f86d081884c7d659a2feaa0c55ad015": false,
		"correct-horse-battery-staple":     false,
	} {
		if got := weakness(s) != ""; got != weak {
			t.Errorf("weakness(%q) = %q, want weak=%v", s, weakness(s), weak)
		}
	}
}
