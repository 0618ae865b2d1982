package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A build from a fresh git clone, as the README installs it (go install
// ./cmd/fusebox), says its revision and commit time: go records the VCS
// facts and fusebox version reads them. (go stamps a clone, whose .git is
// a directory; it does not stamp a git worktree, whose .git is a file, so
// the test clones rather than builds in place.)
func TestVersionOfABuildFromAClone(t *testing.T) {
	if !releaseBuilds() {
		// A -trimpath build outside the image's recompiles every
		// dependency (minutes): it runs where the release builds do.
		t.Skip("the build from a clone runs with FUSEBOX_REQUIRE_RELEASE_BUILDS=1, as .ci/run sets it")
	}
	goBin := needGo(t)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	root := repoRoot(t)
	clone := filepath.Join(t.TempDir(), "fusebox")
	if out, err := exec.Command(gitBin, "clone", "--quiet", "--no-hardlinks", root, clone).CombinedOutput(); err != nil {
		t.Skipf("cannot clone the checkout (%v): %s", err, out)
	}
	head, err := exec.Command(gitBin, "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	// -trimpath and cgo off, as the image builds: the clone's packages hit
	// the build cache that build filled, whatever directory they are in
	// (with cgo on, every package above net would be compiled anew); it
	// changes nothing go records of the VCS.
	// -buildvcs=true: a machine's go env may turn the stamp off
	// (GOFLAGS=-buildvcs=false), which the README's user would not have.
	install := exec.Command(goBin, "install", "-buildvcs=true", "-trimpath", "./cmd/fusebox")
	install.Dir, install.Env = clone, append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/fusebox in a clone: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "fusebox"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("fusebox version: %v\n%s", err, out)
	}
	line := strings.TrimSpace(string(out))
	if rev := strings.TrimSpace(string(head))[:12]; !strings.Contains(line, " "+rev+" (") || strings.Contains(line, "-dirty") {
		t.Errorf("fusebox version = %q; want the clone's revision %s, clean, with its commit time", line, rev)
	}
	if strings.HasPrefix(line, "fusebox (devel) ") {
		t.Errorf("fusebox version = %q; want the pseudo-version go gives a clone", line)
	}
}
