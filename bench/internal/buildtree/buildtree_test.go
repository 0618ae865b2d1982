package buildtree

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverlay(t *testing.T) {
	dir := t.TempDir()
	path, err := writeOverlay("/src/fusebox", dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	file := m.Replace["/src/fusebox/cmd/fusebox/zz_bench_pprof.go"]
	if file != filepath.Join(dir, "bench_pprof.go") {
		t.Fatalf("overlay %s", b)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `_ "net/http/pprof"`) || !strings.Contains(string(src), PprofEnv) {
		t.Errorf("the added file:\n%s", src)
	}
}
