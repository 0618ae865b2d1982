package deploy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// stamps are what the release's templates and the image's build arguments
// stamp with -X: each side's placeholder, and the value both stand for.
var stamps = []struct{ release, image, means string }{
	{"v{{ .Version }}", "VERSION", "@version@"},
	{"{{ .FullCommit }}", "REVISION", "@revision@"},
}

// rendered is ldflags with goreleaser's templates filled in as stamps
// says (a template's spaces would split the flags).
func rendered(ldflags string) string {
	for _, st := range stamps {
		ldflags = strings.ReplaceAll(ldflags, st.release, st.means)
	}
	return ldflags
}

// TestReleaseMatchesImage checks that .goreleaser.yaml builds what the
// image ships (same package, cgo off, same flags, the same variables
// stamped with -X: the release from its templates, the image from its
// build arguments) for the documented matrix, and archives files that
// exist.
func TestReleaseMatchesImage(t *testing.T) {
	rel := readRelease(t)
	if rel.Version != 2 {
		t.Errorf(".goreleaser.yaml: version %d; want 2", rel.Version)
	}
	if len(rel.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml: %d builds; want 1", len(rel.Builds))
	}
	args := map[string]string{}
	for _, st := range stamps {
		args[st.image] = st.means
	}
	rb, img := rel.Builds[0], imageBuild(t, args)
	if got, want := strings.TrimPrefix(rb.Main, "./"), strings.TrimPrefix(img.args[len(img.args)-1], "./"); got != want {
		t.Errorf("release builds %s, the image %s", got, want)
	}
	if !slices.Contains(rb.Env, "CGO_ENABLED=0") || !slices.Contains(img.env, "CGO_ENABLED=0") {
		t.Errorf("CGO_ENABLED=0 missing: release env %q, image env %q", rb.Env, img.env)
	}
	if !slices.Contains(rb.Flags, "-trimpath") || !slices.Contains(img.args, "-trimpath") {
		t.Errorf("-trimpath missing: release flags %q, image %q", rb.Flags, img.args)
	}
	ld := strings.Join(rb.Ldflags, " ")
	for _, st := range stamps {
		if !strings.Contains(ld, "="+st.release) {
			t.Errorf("release -ldflags %q do not stamp %s", ld, st.release)
		}
	}
	ld = rendered(ld)
	if i := slices.Index(img.args, "-ldflags"); i < 0 || img.args[i+1] != ld {
		t.Errorf("release -ldflags %q differ from the image's %q", ld, img.args)
	}
	for _, v := range []string{"version", "revision"} {
		if !strings.Contains(ld, "-X "+module+"/internal/cli."+v+"=") {
			t.Errorf("release -ldflags %q do not set internal/cli.%s, which fusebox version prints", ld, v)
		}
	}
	var got []string
	for _, tg := range rb.targets() {
		got = append(got, tg.String())
	}
	want := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("release targets %q; want %q", got, want)
	}
	if len(rel.Archives) == 0 {
		t.Fatal(".goreleaser.yaml: no archives")
	}
	for _, a := range rel.Archives {
		for _, f := range a.Files {
			if n := countMatches(t, f); n == 0 {
				t.Errorf("archive file %q matches nothing", f)
			}
		}
	}
}

// countMatches counts the regular files under the repository root that
// the glob pattern matches ("**" for any number of directories).
func countMatches(t *testing.T, pattern string) int {
	t.Helper()
	root := repoRoot(t)
	pat := strings.Split(pattern, "/")
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if !d.IsDir() && matchSegs(pat, strings.Split(filepath.ToSlash(rel), "/")) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fullBuilds are the release targets TestReleaseTargetsBuild compiles and
// links: with linux/amd64 (the native build of TestImageBinary), every
// GOOS and both GOARCHes once. The other four only have their package
// graph resolved, which finds build constraints that exclude a package, a
// missing import or a cgo-only dependency, but not a type error in a file
// for one target; no package of the module has a file for one GOOS and
// GOARCH pair only, so the two builds and the native one compile every
// file of ours the six would. The two run in parallel: on two busy cores,
// seconds on a warm build cache; cold, each compiles the whole dependency
// graph for its target (the AWS SDK and Google's auth library among it),
// minutes. So a contributor's go test ./... resolves every graph and
// builds none; FUSEBOX_REQUIRE_RELEASE_BUILDS=1 (set by .ci/run) builds
// these two, and FUSEBOX_BUILD_ALL_TARGETS=1 all six, as before a release.
var fullBuilds = []string{"darwin/arm64", "windows/amd64"}

// TestReleaseTargetsBuild checks every target of .goreleaser.yaml, with
// its env and flags, in parallel: the package graph of each, and a full
// build of those in fullBuilds.
func TestReleaseTargetsBuild(t *testing.T) {
	goBin := needGo(t)
	rel := readRelease(t)
	root := repoRoot(t)
	all := os.Getenv("FUSEBOX_BUILD_ALL_TARGETS") == "1"
	some := all || releaseBuilds()
	for _, rb := range rel.Builds {
		for _, tg := range rb.targets() {
			t.Run(strings.ReplaceAll(tg.String(), "/", "_"), func(t *testing.T) {
				t.Parallel()
				env := slices.Concat(os.Environ(), rb.Env, []string{"GOOS=" + tg.Goos, "GOARCH=" + tg.Goarch})
				start := time.Now()
				checkGraph(t, goBin, root, env, rb)
				if !all && (!some || !slices.Contains(fullBuilds, tg.String())) {
					t.Logf("package graph resolved in %v; not built (FUSEBOX_REQUIRE_RELEASE_BUILDS=1 or FUSEBOX_BUILD_ALL_TARGETS=1 builds it)", time.Since(start).Round(time.Millisecond))
					return
				}
				args := slices.Concat([]string{"build"}, rb.Flags)
				if len(rb.Ldflags) > 0 {
					args = append(args, "-ldflags", rendered(strings.Join(rb.Ldflags, " ")))
				}
				args = append(args, "-o", os.DevNull, rb.Main)
				cmd := exec.Command(goBin, args...)
				cmd.Dir, cmd.Env = root, env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("GOOS=%s GOARCH=%s %s go %s: %v\n%s", tg.Goos, tg.Goarch, strings.Join(rb.Env, " "),
						strings.Join(args, " "), err, out)
				}
				t.Logf("built in %v", time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// checkGraph resolves the package graph of the build's main package in
// env, failing on any package that cannot be loaded.
func checkGraph(t *testing.T, goBin, root string, env []string, rb releaseBuild) {
	t.Helper()
	args := slices.Concat([]string{"list", "-deps", "-e", "-json=ImportPath,Error,DepsErrors,Incomplete"}, rb.Flags, []string{rb.Main})
	cmd := exec.Command(goBin, args...)
	cmd.Dir, cmd.Env = root, env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	type listError struct{ Err string }
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Error      *listError
			DepsErrors []*listError
			Incomplete bool
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		if p.Error != nil {
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		for _, e := range p.DepsErrors {
			t.Errorf("%s: dependency: %s", p.ImportPath, e.Err)
		}
		if p.Incomplete && p.Error == nil && len(p.DepsErrors) == 0 {
			t.Errorf("%s: incomplete", p.ImportPath)
		}
	}
	if n < 10 {
		t.Fatalf("go list found %d packages", n)
	}
}

// releaseBuilds reports whether the release builds are asked for
// (FUSEBOX_REQUIRE_RELEASE_BUILDS=1, set by .ci/run, or
// FUSEBOX_BUILD_ALL_TARGETS=1): the builds that share no compiled package
// with go test's and take minutes on a fresh clone.
func releaseBuilds() bool {
	return os.Getenv("FUSEBOX_REQUIRE_RELEASE_BUILDS") == "1" || os.Getenv("FUSEBOX_BUILD_ALL_TARGETS") == "1"
}
