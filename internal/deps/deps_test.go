package deps

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/fuseboxhq/fusebox"

// isLibrary reports whether pkg is in the library zone: the module's public
// packages, everything outside internal/ and cmd/.
func isLibrary(pkg string) bool {
	rel := strings.TrimPrefix(pkg, module)
	return rel != pkg && !strings.HasPrefix(rel, "/internal") && !strings.HasPrefix(rel, "/cmd")
}

// TestLibraryUsesOnlyTheStandardLibrary fails when a library package imports,
// directly or through others, anything outside the standard library and the
// library zone itself: users import these packages without taking on the
// gateway's dependencies (Prometheus, go-redis, YAML, cobra).
func TestLibraryUsesOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var libs []string
	for _, p := range strings.Fields(string(out)) {
		if isLibrary(p) {
			libs = append(libs, p)
		}
	}
	if len(libs) == 0 {
		t.Fatal("found no library packages")
	}
	for _, pkg := range libs {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if !isLibrary(dep) {
				t.Errorf("%s depends on %s: library packages may use only the standard library and each other", pkg, dep)
			}
		}
	}
}
