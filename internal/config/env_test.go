package config

import (
	"strings"
	"testing"
)

func envOf(m map[string]string) Env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"KEY": "sk-1", "EMPTY": "", "DOLLAR": "a$b"})
	tests := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${KEY}", want: "sk-1"},
		{in: "pre-${KEY}-post", want: "pre-sk-1-post"},
		{in: "${UNSET:-fallback}", want: "fallback"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${KEY:-fallback}", want: "sk-1"},
		{in: "${UNSET:-}", want: ""},
		{in: "${EMPTY}", want: ""},
		{in: "${DOLLAR}", want: "a$b"}, // values are not expanded again
		{in: "$$", want: "$"},
		{in: "$${KEY}", want: "${KEY}"},
		{in: "cost $5", want: "cost $5"},
		{in: "trailing $", want: "trailing $"},
		{in: "${UNSET}", err: "environment variable UNSET is not set (use ${UNSET:-default} to give a default)"},
		{in: "${KEY", err: "unterminated ${ (want ${VAR} or ${VAR:-default}; write $$ for a literal $)"},
		{in: "${}", err: "bad variable reference ${} (want ${VAR} or ${VAR:-default})"},
		{in: "${A-B}", err: "bad variable reference ${A-B} (want ${VAR} or ${VAR:-default})"},
	}
	for _, tt := range tests {
		got, msg := expand(tt.in, env)
		if got != tt.want || msg != tt.err {
			t.Errorf("expand(%q) = %q, %q; want %q, %q", tt.in, got, msg, tt.want, tt.err)
		}
	}
}

func TestEnvInConfig(t *testing.T) {
	data := doc(
		"listen: ${LISTEN:-127.0.0.1:9090}",
		"admin_token: $${not-a-var}",
		"providers:",
		"  openai: {keys: [${OPENAI_API_KEY}, \"${SECOND}\"], limits: {rpm: ${RPM:-600}}}",
		"models:",
		"  - {name: smart, targets: [{provider: openai, model: gpt}]}",
	)
	c, err := Parse("f.yaml", data, envOf(map[string]string{"OPENAI_API_KEY": "sk-a", "SECOND": "sk-b"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9090" {
		t.Errorf("Listen = %q", c.Listen)
	}
	if c.AdminToken.Value() != "${not-a-var}" {
		t.Errorf("AdminToken = %q, want the escaped text", c.AdminToken.Value())
	}
	p := c.Providers["openai"]
	if len(p.Keys) != 2 || p.Keys[0].Value() != "sk-a" || p.Keys[1].Value() != "sk-b" {
		t.Errorf("Keys = %q", p.Keys)
	}
	if p.Limits.RPM != 600 {
		t.Errorf("RPM = %d, want 600", p.Limits.RPM)
	}
}

func TestEnvUnsetReportsEachLine(t *testing.T) {
	got := parseErrors(t, doc(
		"providers:",
		"  openai: {keys: [${A}]}",
		"  anthropic:",
		"    keys:",
		"      - ${B}",
		oneAlias,
	))
	want := []string{
		"f.yaml:2: providers.openai.keys[0]: environment variable A is not set (use ${A:-default} to give a default)",
		"f.yaml:5: providers.anthropic.keys[0]: environment variable B is not set (use ${B:-default} to give a default)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestProtectRestoreRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a ${X} b ${Y:-z}", "$${X}", "${unterminated\n}", "__fusebox_env_7__", "${A}${B}"} {
		p, refs := protect([]byte(s))
		if got := restore(string(p), refs); got != s {
			t.Errorf("restore(protect(%q)) = %q", s, got)
		}
		if strings.Count(string(p), "\n") != strings.Count(s, "\n") {
			t.Errorf("protect(%q) changed the line count", s)
		}
	}
}
