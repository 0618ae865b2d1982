package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file that is not there is one clear line, naming it once, and nothing
// on the output (issue 19).
func TestValidateMissingFileIsOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fusebox.yaml")
	var out bytes.Buffer
	err := Run(context.Background(), []string{"validate", path}, &out, &out)
	if err == nil {
		t.Fatal("validate of a missing file succeeded")
	}
	if want := "cannot read the configuration file " + path + ": no such file or directory"; err.Error() != want {
		t.Errorf("error %q; want %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("output %q; want none besides the error", out.String())
	}
}

// A tab in the indentation is said to be one.
func TestValidateSaysTabsCannotIndent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fusebox.yaml")
	if err := os.WriteFile(path, []byte("providers:\n\topenai: {keys: [k]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"validate", path}, &out, &out); err == nil {
		t.Fatal("validate of a tab-indented file succeeded")
	}
	if got := out.String(); !strings.Contains(got, path+":2:1: ") || !strings.Contains(got, "YAML cannot indent with tabs") {
		t.Errorf("output %q; want line 2 said to be indented with a tab", got)
	}
}
