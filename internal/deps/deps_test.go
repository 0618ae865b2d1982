package deps

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/fuseboxhq/fusebox"

// library lists the public packages and what each may import from this
// module besides the standard library. Everything else they reach must be
// in the standard library: users import them without taking on our choices.
var library = map[string][]string{
	"clock":           nil,
	"clock/clocktest": {"clock"},
	"breaker":         {"clock"},
	"aierr":           nil,
	"retry":           {"clock"},
	"limit":           {"clock"},
}

func TestLibraryUsesOnlyTheStandardLibrary(t *testing.T) {
	for pkg, allowed := range library {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/"+pkg).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "cannot find package") || strings.Contains(string(out), "no Go files") {
				continue // not written yet
			}
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		ok := map[string]bool{module + "/" + pkg: true}
		for _, a := range allowed {
			ok[module+"/"+a] = true
		}
		for _, dep := range strings.Fields(string(out)) {
			if !ok[dep] {
				t.Errorf("%s imports %s: library packages may use only the standard library and %v", pkg, dep, allowed)
			}
		}
	}
}
