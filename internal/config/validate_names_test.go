package config

import (
	"strings"
	"testing"
)

// Provider and model names go into X-Fusebox-Target: validate refuses any
// that is not printable ASCII, naming the line and the field (issue 19).
func TestNamesMustBePrintableASCII(t *testing.T) {
	got := parseErrors(t, doc(
		"providers:",                          // 1
		"  openai: {keys: [k1]}",              // 2
		"  \"\u00fcberlast\": {type: openai}", // 3
		"  \"a\\r\\nX-Evil\": {type: openai}", // 4
		"models:",                             // 5
		"  - name: smart",                     // 6
		"    targets:",                        // 7
		"      - {provider: openai, model: \"gpt\\r\\nX-Evil: 1\"}",                // 8
		"      - {provider: openai, model: \"gpt-\u00e9\"}",                        // 9
		"      - {provider: openai, model: \"tab\\there\"}",                        // 10
		"      - {provider: openai, model: "+strings.Repeat("m", maxNameLen+1)+"}", // 11
		"      - {provider: openai, model: \"gpt-4.1:free @ v1/x\"}",               // 12: printable
	))
	want := []string{
		`f.yaml:3: providers.überlast: provider name "\u00fcberlast" must be printable ASCII: it is sent in the X-Fusebox-Target header`,
		`f.yaml:4: providers.a\r\nX-Evil: provider name "a\r\nX-Evil" must be printable ASCII`,
		`f.yaml:8: models[0].targets[0].model: model name "gpt\r\nX-Evil: 1" must be printable ASCII`,
		`f.yaml:9: models[0].targets[1].model: model name "gpt-\u00e9" must be printable ASCII`,
		`f.yaml:10: models[0].targets[2].model: model name "tab\there" must be printable ASCII`,
		`f.yaml:11: models[0].targets[3].model: model name is 257 bytes long (at most 256)`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s…", i, got[i], want[i])
		}
		if !printableASCII(strings.TrimPrefix(got[i], "f.yaml:3: providers.überlast")) {
			t.Errorf("error %d is not ASCII: %q", i, got[i])
		}
	}
}
