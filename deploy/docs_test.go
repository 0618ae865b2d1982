package deploy_test

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// mdLink matches an inline Markdown link or image, capturing its target.
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codePath matches a file named in a code span: `docs/FLEET.md`,
	// `router/watch.go`, `budget.go`.
	codePath = regexp.MustCompile("`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*\\.(?:go|md|yaml|yml|json|html|svg|sh))`")
)

// TestArchitectureLinksResolve checks that every relative link of
// docs/ARCHITECTURE.md, and every file it names in a code span, is a file
// of the repository: the document stands on its own. A Markdown link is
// relative to docs/; a named file to the repository root or internal/
// (the gateway's packages, as the document names them), and a bare file
// name must exist in one of the module's packages.
func TestArchitectureLinksResolve(t *testing.T) {
	root := repoRoot(t)
	doc := filepath.Join(root, "docs", "ARCHITECTURE.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	names := baseNames(t, root)
	checked := 0
	for n, line := range strings.Split(string(data), "\n") {
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			u, err := url.Parse(m[1])
			if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" {
				continue // a web address, or an anchor within the file
			}
			checked++
			p := filepath.Join(filepath.Dir(doc), filepath.FromSlash(u.Path))
			if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("docs/ARCHITECTURE.md:%d: link %q leaves the repository", n+1, m[1])
			} else if _, err := os.Stat(p); err != nil {
				t.Errorf("docs/ARCHITECTURE.md:%d: link %q: no file %s in the repository", n+1, m[1], filepath.ToSlash(rel))
			}
		}
		for _, m := range codePath.FindAllStringSubmatch(line, -1) {
			checked++
			if !strings.Contains(m[1], "/") {
				if !names[m[1]] {
					t.Errorf("docs/ARCHITECTURE.md:%d: names %s, which no package of the module has", n+1, m[1])
				}
				continue
			}
			if !exists(root, m[1]) && !exists(filepath.Join(root, "internal"), m[1]) {
				t.Errorf("docs/ARCHITECTURE.md:%d: names %s, which is neither at the repository root nor under internal/", n+1, m[1])
			}
		}
	}
	if checked == 0 {
		t.Error("docs/ARCHITECTURE.md names no file; the test reads nothing")
	}
}

func exists(dir, rel string) bool {
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil
}

// baseNames returns the names of the files in the repository, outside
// .git.
func baseNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			names[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}
