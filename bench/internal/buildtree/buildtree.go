// Package buildtree builds the fusebox binary a benchmark runs: from a
// source tree, or from a git revision checked out into a worktree of its
// own, so that the repository's working tree is never switched.
package buildtree

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Options says how to build.
type Options struct {
	// Pprof adds a file to package main that serves net/http/pprof on the
	// address in $FUSEBOX_BENCH_PPROF when it is set (and does nothing
	// when it is not). The file is given to the compiler through -overlay:
	// the source tree is not written to, and any revision can have it.
	Pprof bool
}

// PprofEnv is the environment variable a binary built with Options.Pprof
// reads: the loopback address to serve /debug/pprof/ on.
const PprofEnv = "FUSEBOX_BENCH_PPROF"

// pprofMain is the file Options.Pprof adds to cmd/fusebox. It uses
// net/http's default mux, which the gateway does not serve.
const pprofMain = `package main

import (
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("` + PprofEnv + `")
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench pprof:", err)
		os.Exit(1)
	}
	go http.Serve(ln, nil)
}
`

// Fusebox compiles ./cmd/fusebox of the source tree src into the file
// out, with go build.
func Fusebox(ctx context.Context, src, out string, o Options) error {
	args := []string{"build", "-o", out}
	if o.Pprof {
		overlay, err := writeOverlay(src, filepath.Dir(out))
		if err != nil {
			return err
		}
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/fusebox")...)
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/fusebox in %s: %v\n%s", src, err, b)
	}
	return nil
}

// writeOverlay writes pprofMain and the -overlay file that adds it to
// src's cmd/fusebox into dir, and returns the overlay file's path.
func writeOverlay(src, dir string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "bench_pprof.go")
	if err := os.WriteFile(file, []byte(pprofMain), 0o644); err != nil {
		return "", err
	}
	m := map[string]map[string]string{"Replace": {filepath.Join(abs, "cmd", "fusebox", "zz_bench_pprof.go"): file}}
	b, _ := json.Marshal(m)
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, b, 0o644)
}

// Worktree checks rev of the git repository at repo out into dir (which
// must not exist) with git worktree add --detach, and returns the
// revision's full hash and a function that removes the worktree again.
func Worktree(ctx context.Context, repo, rev, dir string) (hash string, remove func() error, err error) {
	out, err := git(ctx, repo, "rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return "", nil, err
	}
	hash = strings.TrimSpace(out)
	if _, err := git(ctx, repo, "worktree", "add", "--detach", dir, hash); err != nil {
		return "", nil, err
	}
	remove = func() error {
		_, err := git(context.Background(), repo, "worktree", "remove", "--force", dir)
		return err
	}
	return hash, remove, nil
}

// Describe returns a short name for the source tree at src: its HEAD's
// short hash, with "+dirty" when the working tree has changes.
func Describe(ctx context.Context, src string) string {
	head, err := git(ctx, src, "rev-parse", "--short", "HEAD")
	if err != nil {
		return "unknown"
	}
	name := strings.TrimSpace(head)
	if st, err := git(ctx, src, "status", "--porcelain", "--untracked-files=no"); err == nil && strings.TrimSpace(st) != "" {
		name += "+dirty"
	}
	return name
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(stderr)))
	}
	return string(b), nil
}

// BenchDir returns the bench module's directory: the working directory
// or the nearest parent whose go.mod declares it. Its parent is the
// repository.
func BenchDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/fuseboxhq/fusebox/bench\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run from the bench module (no github.com/fuseboxhq/fusebox/bench go.mod at or above %s)", dir)
		}
	}
}
