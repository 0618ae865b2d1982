package config

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, and that it returns either a
// valid Config or an Errors list with a line or a field in every entry.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"../../examples/basic.yaml", "../../examples/failover.yaml", "../../examples/silent-failures.yaml"} {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add(doc(valid...))
	f.Add([]byte("providers: {openai: {keys: [${K:-x}]}}\nmodels: [{name: a, targets: [{provider: openai, model: m}]}]\n"))
	f.Add([]byte("a: &a [*a]\nproviders: {x: {<<: *a}}\n"))
	f.Add([]byte("models: [{breaker: {window: 1s, window_calls: 1, failure_rate: 2}}]\n"))
	f.Add([]byte("providers:\n  openai: {keys: [${K}], type: openai}}\nmodels: [\n"))
	f.Add([]byte("providers: {openai: {keys: ${K}, headers: {\"Bearer ${T}\": x}}}\n"))
	f.Add([]byte("providers: {openai: {timeouts: {ttfb: auto}}}\nmodels: [{name: a, hedge: {after: p95}, targets: [{provider: openai, model: m}, {provider: openai, model: n}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data, anyEnv)
		if err == nil {
			if c == nil {
				t.Fatal("nil Config without an error")
			}
			_ = c.String()
			buildAll(t, c)
			return
		}
		var es Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("error %T %v, want a non-empty Errors", err, err)
		}
		if strings.Contains(err.Error(), placeholderPrefix) && !bytes.Contains(data, []byte(placeholderPrefix)) {
			t.Fatalf("a placeholder in the errors:\n%v", err)
		}
		for _, e := range es {
			if e.Column > 0 && e.Line == 0 {
				t.Fatalf("a column without a line: %#v", e)
			}
		}
	})
}
