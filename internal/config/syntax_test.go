package config

import (
	"strings"
	"testing"
)

func TestSyntaxErrorsAtTheirLineAndColumn(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		// yaml.v3 says "line 2": the 0-based line of the provider's block.
		{"a field indented too little, after a reference", doc(
			"providers:",                       // 1
			"  openai:",                        // 2
			"    keys: [${OPENAI_API_KEY}]",    // 3
			"    type: openai",                 // 4
			"   base_url: https://x/v1",        // 5
			"models: [{name: a, targets: []}]", // 6
		), `f.yaml:5:4: YAML syntax: did not find expected key (check this line's indentation: a field lines up with the other fields of its block)`},
		// yaml.v3 says "line 4".
		{"a field indented too little, in the first block", doc(
			"listen: :8080",
			"server:",
			"  body_timeout: 5s",
			"  write_timeout: 5s",
			" idle_timeout: 5s",
		), `f.yaml:5:2: YAML syntax: did not find expected key (check this line's indentation: a field lines up with the other fields of its block)`},
		{"a field indented too much", doc(
			"models:",
			"  - name: a",
			"    targets:",
			"    - provider: x",
			"       model: y",
		), `f.yaml:5:13: YAML syntax: mapping values are not allowed in this context (check the indentation, or quote a value that holds ": ")`},
		{"a list item out of line", doc(
			"providers:",
			"  openai: {}",
			"models:",
			"   - name: x",
			"  - name: y",
		), `f.yaml:5:3: YAML syntax: did not find expected key (check this line's indentation: a field lines up with the other fields of its block)`},
		// yaml.v3 gives no line for a problem on the first line.
		{"on the first line", doc("listen: }"), `f.yaml:1:9: YAML syntax: did not find expected node content`},
		// From k2 on, every cut fails as the whole line does.
		{"a list left open", doc("listen: :80", "providers: {openai: {keys: [k1, k2}}", "models: []"),
			`f.yaml:2:33: YAML syntax: did not find expected ',' or ']' (a [list] left open, or items without a comma between them)`},
		{"a quote left open", doc("listen: :80", `admin_token: "abc`, "models: []"),
			`f.yaml:2:14: YAML syntax: found unexpected end of stream (a quote left open)`},
		{"a tab", doc("listen: :80", "\tstate: memory"),
			`f.yaml:2:1: YAML syntax: found a tab character that violates indentation (YAML cannot indent with tabs: indent this line with spaces)`},
		{"a value with a colon", doc("listen: :80", "admin_token: a: b"),
			`f.yaml:2:15: YAML syntax: mapping values are not allowed in this context (check the indentation, or quote a value that holds ": ")`},
		{"columns count the references as written", doc(
			"providers:",
			"  openai: {keys: [${KEY_WITH_LONG_NAME}], type: openai}}",
		), `f.yaml:2:56: YAML syntax: did not find expected key (check this line's indentation: a field lines up with the other fields of its block)`},
		{"columns count characters", doc("listen: ä", "admin_token: éé: x"),
			`f.yaml:2:16: YAML syntax: mapping values are not allowed in this context (check the indentation, or quote a value that holds ": ")`},
		{"CRLF line ends", []byte("listen: :80\r\nserver:\r\n  body_timeout: 5s\r\n idle_timeout: 5s\r\n"),
			`f.yaml:4:2: YAML syntax: did not find expected key (check this line's indentation: a field lines up with the other fields of its block)`},
		{"no newline at the end", []byte("listen: :80\nadmin_token: a: b"),
			`f.yaml:2:15: YAML syntax: mapping values are not allowed in this context (check the indentation, or quote a value that holds ": ")`},
		{"a character that starts no token", doc("listen: :80", "admin_token: @x"),
			"f.yaml:2:14: YAML syntax: found character that cannot start any token (quote a value that starts with @ or `)"},
		// Issue 19: a tab in the indentation is said to be one, whatever
		// yaml.v3 calls it.
		{"a tab indenting a field", doc("providers:", "\topenai: {keys: [k]}"),
			"f.yaml:2:1: YAML syntax: found character that cannot start any token (YAML cannot indent with tabs: indent this line with spaces)"},
		{"a tab after spaces", doc("providers:", "  openai:", "  \ttype: openai"),
			"f.yaml:3:3: YAML syntax: found character that cannot start any token (YAML cannot indent with tabs: indent this line with spaces)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseErrors(t, tt.data)
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}

func TestSyntaxErrorColumnIsInTheError(t *testing.T) {
	_, err := Parse("f.yaml", doc("listen: :80", "admin_token: a: b"), noEnv)
	es, ok := err.(Errors)
	if !ok || len(es) != 1 || es[0].Line != 2 || es[0].Column != 15 || es[0].Field != "" {
		t.Fatalf("err = %#v", err)
	}
}

func TestOriginalColumn(t *testing.T) {
	data, refs := protect([]byte("k: [${A}, ${LONGER_NAME}, x]"))
	line := lineAt(data, 1)
	tests := []struct {
		in   string // the protected text up to and including the byte
		want int
	}{
		{"k", 1},
		{"k: [", 4},
		{"k: [__fusebox_env_0", 5},    // inside a placeholder: its reference
		{"k: [__fusebox_env_0__,", 9}, // after it: as written
		{"k: [__fusebox_env_0__, __fusebox_env_1__, x", 27},
	}
	for _, tt := range tests {
		if got := originalColumn(line, len(tt.in), refs); got != tt.want {
			t.Errorf("originalColumn(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	if got := originalColumn(line, 0, refs); got != 29 {
		t.Errorf("end of line: %d, want 29", got)
	}
}
