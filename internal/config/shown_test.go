package config

import (
	"strings"
	"testing"
)

// canary is a secret written where it does not belong, in every shape a
// careless or hostile file may give it; no error may show it.
const canary = "sk-live-abc123"

func TestErrorsNeverShowSecrets(t *testing.T) {
	alias := "models: [{name: a, targets: [{provider: openai, model: m}]}]"
	tests := []struct {
		name string
		data []byte
		want string // one of the errors, exactly
	}{
		{"a key as a scalar, not a list", doc("providers:", "  openai: {keys: sk-live-abc123}", alias),
			`f.yaml:2: providers.openai.keys: want a list, got a secret (write keys: [a, b], or one "- item" per line)`},
		{"a key on its own line, not a list", doc("providers:", "  openai:", "    keys: sk-live-abc123", alias),
			`f.yaml:3: providers.openai.keys: want a list, got a secret (write keys: [a, b], or one "- item" per line)`},
		{"a variable as a scalar names the variable", doc("providers:", "  openai:", "    keys: ${OPENAI_API_KEY}", alias),
			`f.yaml:3: providers.openai.keys: want a list, got "${OPENAI_API_KEY}" (write keys: [a, b], or one "- item" per line)`},
		{"a variable in a flow mapping names the variable", doc("providers:", "  openai: {keys: ${OPENAI_API_KEY}}", alias),
			`f.yaml:2: providers.openai.keys: want a list, got "${OPENAI_API_KEY}" (write keys: [a, b], or one "- item" per line)`},
		{"a variable's default is not shown", doc("providers:", "  openai:", `    keys: "${OPENAI_API_KEY:-sk-live-abc123}"`, alias),
			`f.yaml:3: providers.openai.keys: want a list, got "${OPENAI_API_KEY:-…}" (write keys: [a, b], or one "- item" per line)`},
		{"a key as a mapping", doc("providers:", "  openai: {keys: {sk-live-abc123: x}}", alias),
			`f.yaml:2: providers.openai.keys: want a list, got a mapping`},
		{"a list in a list of keys", doc("providers:", "  openai: {keys: [[sk-live-abc123]]}", alias),
			`f.yaml:2: providers.openai.keys[0]: want a string, got a list`},
		{"a target's key as a scalar", doc("providers: {openai: {}}", "models: [{name: a, targets: [{provider: openai, model: m, keys: sk-live-abc123}]}]"),
			`f.yaml:2: models[0].targets[0].keys: want a list, got a secret (write keys: [a, b], or one "- item" per line)`},
		{"a header line as the headers", doc("providers:", "  openai:", `    headers: "Authorization: Bearer sk-live-abc123"`, alias),
			`f.yaml:3: providers.openai.headers: want a mapping, got a secret`},
		{"a header line as a header name", doc("providers:", "  openai:", `    headers: {"Authorization: Bearer sk-live-abc123"}`, alias),
			`f.yaml:3: providers.openai.headers.<not shown>: bad header name (not shown, as it may hold a secret); write headers: {Name: value}, one name per header`},
		{"a header value as a header name", doc("providers:", "  openai:", `    headers: {"Bearer sk-live-abc123": [x]}`, alias),
			`f.yaml:3: providers.openai.headers.<not shown>: bad header name (not shown, as it may hold a secret); write headers: {Name: value}, one name per header`},
		{"a key as a header name", doc("providers:", "  openai:", `    headers: {sk-live-abc123: [x]}`, alias),
			`f.yaml:3: providers.openai.headers.<not shown>: want a string, got a list`},
		{"a key as the provider", doc("providers: {openai: sk-live-abc123}", alias),
			`f.yaml:1: providers.openai: want a mapping, got a value (not shown: this block holds secrets)`},
		{"a key as a field name", doc("providers: {openai: {sk-live-abc123}}", alias),
			`f.yaml:1: providers.openai.<not shown>: unknown field (known: type, base_url, region, project, credentials_file, aws, api_version, entra, responses, unsupported, keys, headers, timeouts, limits, overrides, price, auth_rest, auth_probe)`},
		{"a key as a provider name", doc("providers: {sk-live-abc123: {type: openai}}", alias),
			`f.yaml:2: models[0].targets[0].provider: unknown provider "openai" (known: <not shown>)`},
		{"a key as the base URL", doc("providers: {openai: {base_url: sk-live-abc123}}", alias),
			`f.yaml:1: providers.openai.base_url: bad URL <not shown: it looks like a secret> (want http://host/… or https://host/…)`},
		{"a key as a target's provider", doc("providers: {openai: {}}", "models: [{name: a, targets: [{provider: sk-live-abc123, model: m}]}]"),
			`f.yaml:2: models[0].targets[0].provider: unknown provider <not shown: it looks like a secret> (known: openai)`},
		{"a key as the listen address", doc("listen: sk-live-abc123", "providers: {openai: {}}", alias),
			`f.yaml:1: listen: bad listen address <not shown: it looks like a secret> (want host:port, e.g. 127.0.0.1:8080 or :8080)`},
		{"a key as the clients", doc("clients: sk-live-abc123", "providers: {openai: {}}", alias),
			`f.yaml:1: clients: want a list, got a value (not shown: this block holds secrets)`},
		{"a client's key in a list", doc("clients: [{name: w, key: [sk-live-abc123]}]", "providers: {openai: {}}", alias),
			`f.yaml:1: clients[0].key: want a string, got a list`},
		{"an admin token as a mapping", doc("admin_token: {sk-live-abc123: 1}", "providers: {openai: {}}", alias),
			`f.yaml:1: admin_token: want a string, got a mapping`},
		{"a key as the whole file", doc("sk-live-abc123"),
			`f.yaml:1: want a mapping, got a value (not shown: this block holds secrets)`},
		{"a state URL's password that does not parse", doc(`state: "redis://:p%zz-sk-live-abc123@h/0"`, "providers: {openai: {}}", alias),
			`f.yaml:1: state: bad state "redis://xxxxx@h/0" (want memory, or redis://host:port/db, or rediss://… for TLS)`},
		{"a bad reference's default", doc("admin_token: ${OPEN AI:-sk-live-abc123}", "providers: {openai: {}}", alias),
			`f.yaml:1: admin_token: bad variable reference ${OPEN AI:-…} (want ${VAR} or ${VAR:-default})`},
		{"a key as a bad reference", doc("admin_token: ${sk-live-abc123}", "providers: {openai: {}}", alias),
			`f.yaml:1: admin_token: bad variable reference ${<not shown>} (want ${VAR} or ${VAR:-default})`},
		{"an unset variable is named", doc("providers: {openai: {keys: ${OPENAI_API_KEY}}}", alias),
			`f.yaml:1: providers.openai.keys: want a list, got "${OPENAI_API_KEY}" (write keys: [a, b], or one "- item" per line)`},
		{"an unset variable in a list is named", doc("providers: {openai: {keys: [${OPENAI_API_KEY}]}}", alias),
			`f.yaml:1: providers.openai.keys[0]: environment variable OPENAI_API_KEY is not set (use ${OPENAI_API_KEY:-default} to give a default)`},
		{"an alias to a variable in a syntax error", doc("providers: {openai: {}}", "x: *${SECRET}"),
			`f.yaml:2:5: YAML syntax: unknown anchor '${SECRET}' referenced`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(parseErrors(t, tt.data), "\n")
			if strings.Contains(got, canary) || strings.Contains(got, placeholderPrefix) {
				t.Errorf("errors show a secret or a placeholder:\n%s", got)
			}
			if !strings.Contains("\n"+got+"\n", "\n"+tt.want+"\n") {
				t.Errorf("errors:\n%s\nwant among them:\n%s", got, tt.want)
			}
		})
	}
}

func TestLooksSecret(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"sk-live-abc123", true},
		{"sk-proj-Ab12", true},
		{"AIzaSyD-abcdefghijklmnop", true},
		{"Bearer abc", true},
		{"eyJhbGciOiJIUzI1NiJ9", true},
		{"Ab1cD2eF3gH4iJ5kL6mN7", true},                     // a long mixed-case token
		{"0123456789abcdef0123456789abcdef", true},          // a long hex token
		{"sk-", false},                                      // the prefix alone
		{"claude-3-5-sonnet-20241022", false},               // a model
		{"gpt-4.1-mini", false},                             // a model
		{"https://api.openai.com/v1", false},                // a URL
		{"OpenAI-Organization", false},                      // a header
		{"max_in_flight", false},                            // a field
		{"127.0.0.1:8080", false},                           // an address
		{"Meta-Llama-3.1-8B-Instruct", false},               // a model with a dot
		{"fallback", false},                                 // a word
		{"20241022", false},                                 // digits
		{"redis://user:xxxxx@127.0.0.1:6379/0", false},      // a redacted URL
		{"providers.openai.keys[0]", false},                 // a path
		{"deepseek-chat-v3-0324-abcdefghijk", false},        // lower case only
		{"${OPENAI_API_KEY}", false},                        // a reference
		{"AKIAIOSFODNN7EXAMPLEAKIAIOSFODNN7EXAMPLE", false}, // upper case only
	}
	for _, tt := range tests {
		if got := looksSecret(tt.s); got != tt.want {
			t.Errorf("looksSecret(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis://user:pw@h:6379/0", "redis://user:xxxxx@h:6379/0"},
		{"redis://h:6379/0", "redis://h:6379/0"},
		{"redis://:p%zz@h/0", "redis://xxxxx@h/0"},      // does not parse
		{"redis://:a/b@c@h:x/0", "redis://xxxxx@h:x/0"}, // does not parse, "/" and "@" in it
		{"memory", "memory"},
		{"not a url %zz", "not a url %zz"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
