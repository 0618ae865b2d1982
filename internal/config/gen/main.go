// Command gen writes the configuration reference: reference.md, which the
// config package embeds and Reference returns, and its copy docs/CONFIG.md,
// both from package refdoc. go generate ./internal/config runs it in the
// package's directory. The package embeds reference.md, so the file must
// exist for gen to build: should it be lost, an empty one will do.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fuseboxhq/fusebox/internal/config/refdoc"
)

// outputs are the files gen writes, from the config package's directory.
var outputs = []string{"reference.md", filepath.Join("..", "..", "docs", "CONFIG.md")}

func main() {
	text, err := refdoc.Generate(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, path := range outputs {
		if err := os.WriteFile(path, text, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}
