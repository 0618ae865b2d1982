// Package deploy_test checks the packaging of Fusebox without Docker: it
// builds the binary with the Dockerfile's own go build line and runs it
// (also stamped as --build-arg VERSION and REVISION stamp it), checks the
// image's final stage, resolves the package graph of all six targets of
// .goreleaser.yaml and fully builds linux/arm64, darwin/arm64 and
// windows/amd64 (every OS and both architectures once; see fullBuilds),
// checks the compose fleet's files against each other and the
// configuration loader, and that docs/ARCHITECTURE.md's links resolve.
//
// The builds take seconds on a warm build cache and minutes on a cold one
// (a fresh clone): the image's binary and the two full cross builds run
// with FUSEBOX_REQUIRE_RELEASE_BUILDS=1, which .ci/run sets; a plain go
// test ./... reads the build lines and resolves the package graphs. All
// are skipped with -short.
package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImageBinary builds the binary exactly as the Dockerfile does, checks
// that it is static (the distroless image has no libc) and that the build
// flags took, then starts it as the image does and probes /healthz.
//
// The Dockerfile's build (CGO_ENABLED=0, -trimpath) shares no compiled
// package with go test's, so on a fresh clone it compiles the whole
// dependency graph once more: minutes on two busy cores. A contributor's
// go test ./... checks the build line only; FUSEBOX_REQUIRE_RELEASE_BUILDS=1
// (set by .ci/run) builds and runs the binary.
func TestImageBinary(t *testing.T) {
	goBin := needGo(t)
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; its binary is checked on linux")
	}
	b := imageBuild(t, nil)
	if !releaseBuilds() {
		t.Skipf("Dockerfile:%d: the go build line was read; not built (FUSEBOX_REQUIRE_RELEASE_BUILDS=1 builds and runs it)", b.line)
	}
	bin := buildImageBinary(t, goBin, b)

	t.Run("static", func(t *testing.T) { checkStatic(t, bin) })
	t.Run("buildinfo", func(t *testing.T) { checkBuildInfo(t, bin, b) })
	t.Run("help", func(t *testing.T) {
		out, err := exec.Command(bin, "--help").CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("serve")) {
			t.Fatalf("fusebox --help: %v\n%s", err, out)
		}
	})
	t.Run("version", func(t *testing.T) {
		// Not stamped: the build information, as go build records it.
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !bytes.HasPrefix(out, []byte("fusebox ")) || bytes.Count(out, []byte("\n")) != 1 {
			t.Fatalf("fusebox version: %v\n%s", err, out)
		}
	})
	t.Run("stamped", func(t *testing.T) { checkStamped(t, goBin) })
	t.Run("serve", func(t *testing.T) { checkServe(t, bin) })
}

// buildImageBinary runs the image's go build line b, writing the binary
// into a temporary directory instead of the image's path, and returns it.
func buildImageBinary(t *testing.T, goBin string, b goBuild) string {
	t.Helper()
	out, i := b.output()
	if i < 0 {
		t.Fatalf("Dockerfile:%d: go build has no -o naming the binary", b.line)
	}
	bin := filepath.Join(t.TempDir(), "fusebox")
	args := slices.Clone(b.args)
	args[i] = strings.Replace(args[i], out, bin, 1)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), b.env...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("Dockerfile:%d: %s go %s: %v\n%s", b.line, strings.Join(b.env, " "), strings.Join(b.args, " "), err, msg)
	}
	return bin
}

// checkStamped builds the image's binary as docker build --build-arg
// VERSION=… --build-arg REVISION=… does, and checks that fusebox version
// and --version print what was stamped.
func checkStamped(t *testing.T, goBin string) {
	const ver, rev = "v9.8.7-rc.1", "0123456789abcdef0123456789abcdef01234567"
	bin := buildImageBinary(t, goBin, imageBuild(t, map[string]string{"VERSION": ver, "REVISION": rev}))
	want := "fusebox " + ver + " " + rev[:12] + " go"
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), want) {
			t.Errorf("fusebox %s: %v %q; want it to begin %q", arg, err, out, want)
		}
	}
}

// checkStatic fails if bin asks for a dynamic loader or shared libraries.
func checkStatic(t *testing.T, bin string) {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("program header %v: the binary is dynamically linked", p.Type)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("DT_NEEDED %v: the binary needs shared libraries", libs)
	}
	// -s -w: no symbol table, no DWARF.
	for _, s := range f.Sections {
		if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			t.Errorf("section %s: symbols or DWARF were not stripped", s.Name)
		}
	}
}

// checkBuildInfo checks what the binary records of its build against the
// Dockerfile's line: the package, cgo off, -trimpath and -ldflags.
func checkBuildInfo(t *testing.T, bin string, b goBuild) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if want := module + "/cmd/fusebox"; info.Path != want {
		t.Errorf("main package %s; want %s", info.Path, want)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	want := map[string]string{}
	for _, e := range b.env {
		if k, v, _ := strings.Cut(e, "="); k == "CGO_ENABLED" {
			want[k] = v
		}
	}
	trim := slices.Contains(b.args, "-trimpath")
	if trim {
		want["-trimpath"] = "true"
	}
	// With -trimpath, go records no -ldflags (they may hold paths);
	// checkStatic sees what -s -w did.
	if i := slices.Index(b.args, "-ldflags"); i >= 0 && i+1 < len(b.args) && !trim {
		want["-ldflags"] = b.args[i+1]
	}
	for k, v := range want {
		if settings[k] != v {
			t.Errorf("build setting %s = %q; the Dockerfile's line gives %q", k, settings[k], v)
		}
	}
}

// checkServe starts bin serve with a minimal configuration on a free
// loopback port, as the image's CMD would with its file, probes /healthz
// and the image's HEALTHCHECK command, and stops
// it with SIGTERM, as docker stop does.
func checkServe(t *testing.T, bin string) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fusebox.yaml")
	if err := os.WriteFile(cfg, []byte(minimalConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := imageCommand(t)
	argv = slices.Concat([]string{bin}, argv[1:])
	argv[slices.Index(argv, "--config")+1] = cfg
	cmd := exec.Command(argv[0], argv[1:]...)
	logs, logw := io.Pipe()
	cmd.Stderr = logw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		logw.Close() // ends the log reader
		exited <- err
	}()
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
	}()

	addr := listeningAddr(t, logs)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d %s", resp.StatusCode, body)
	}

	t.Run("healthcheck", func(t *testing.T) { checkHealthcheck(t, bin, addr) })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("fusebox serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fusebox serve still running 30s after SIGTERM")
	}
}

// minimalConfig is the least a gateway starts with; its upstream is never
// called.
const minimalConfig = `listen: 127.0.0.1:0
providers:
  upstream:
    type: openai
    base_url: http://127.0.0.1:9/v1
models:
  - name: chat
    targets:
      - {provider: upstream, model: m}
`

// imageCommand returns the image's ENTRYPOINT and CMD, checking that it
// serves with a --config file.
func imageCommand(t *testing.T) []string {
	t.Helper()
	ins := readDockerfile(t)
	entry, cmd := only(t, ins, "ENTRYPOINT"), only(t, ins, "CMD")
	argv := slices.Concat(execForm(t, entry, entry.args), execForm(t, cmd, cmd.args))
	if len(argv) < 4 || argv[1] != "serve" || !slices.Contains(argv, "--config") || argv[len(argv)-1] == "--config" {
		t.Fatalf("Dockerfile: ENTRYPOINT and CMD are %q; want the binary, serve and --config FILE", argv)
	}
	return argv
}

// listeningAddr reads the gateway's log until its "fusebox listening" line
// and returns the address it names; the rest of the log is discarded.
func listeningAddr(t *testing.T, log io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(log)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "fusebox listening" {
				found <- line.Addr
				break
			}
		}
		io.Copy(io.Discard, log)
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatal(`no "fusebox listening" log line within 30s`)
		return ""
	}
}

// checkHealthcheck runs the Dockerfile's HEALTHCHECK command against the
// gateway at addr: it must exit 0 while the gateway is up, and not once it
// is gone.
func checkHealthcheck(t *testing.T, bin, addr string) {
	hc := only(t, readDockerfile(t), "HEALTHCHECK")
	_, form, ok := strings.Cut(hc.args, "CMD ")
	if !ok {
		t.Fatalf("Dockerfile:%d: HEALTHCHECK without CMD", hc.line)
	}
	argv := execForm(t, hc, strings.TrimSpace(form))
	if len(argv) < 2 || filepath.Base(argv[0]) != "fusebox" {
		t.Fatalf("Dockerfile:%d: HEALTHCHECK runs %q; distroless has only the binary to run", hc.line, argv)
	}
	if out, err := exec.Command(bin, argv[1], "--help").CombinedOutput(); err != nil {
		t.Fatalf("fusebox has no %q subcommand, which the Dockerfile's HEALTHCHECK runs: %s", argv[1], bytes.TrimSpace(out))
	}
	args := slices.Clone(argv[1:])
	for i, a := range args {
		if u, err := url.Parse(a); err == nil && u.Scheme == "http" {
			u.Host = addr
			args[i] = u.String()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("HEALTHCHECK %q against a healthy gateway: %v\n%s", args, err, out)
	}
	down := slices.Clone(args)
	for i, a := range down {
		if u, err := url.Parse(a); err == nil && u.Scheme == "http" {
			u.Host = "127.0.0.1:9" // discard: nothing listens
			down[i] = u.String()
		}
	}
	if out, err := exec.CommandContext(ctx, bin, down...).CombinedOutput(); err == nil {
		t.Fatalf("HEALTHCHECK %q with no gateway exited 0\n%s", down, out)
	}
}

// TestBuilderGoVersion checks that the Dockerfile's golang image is at
// least the Go version go.mod asks for: the official images build with
// their own toolchain only (GOTOOLCHAIN=local).
func TestBuilderGoVersion(t *testing.T) {
	root := repoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	want := [2]int{atoi(t, string(m[1])), atoi(t, string(m[2]))}
	var found bool
	for _, in := range readDockerfile(t) {
		if in.cmd != "FROM" {
			continue
		}
		v := regexp.MustCompile(`^golang:(\d+)\.(\d+)`).FindStringSubmatch(in.args)
		if v == nil {
			continue
		}
		found = true
		if got := [2]int{atoi(t, v[1]), atoi(t, v[2])}; got[0] < want[0] || got[0] == want[0] && got[1] < want[1] {
			t.Errorf("Dockerfile:%d: FROM %s is older than go.mod's go %d.%d", in.line, in.args, want[0], want[1])
		}
	}
	if !found {
		t.Error("Dockerfile: no FROM golang:X.Y build stage")
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDockerignoreKeepsTheBuildInputs checks that the build context keeps
// every file the image build reads: what the Dockerfile copies by name, and
// each Go and embedded file of the packages the binary is built from.
func TestDockerignoreKeepsTheBuildInputs(t *testing.T) {
	goBin := lookGo(t)
	root := repoRoot(t)
	rules := readDockerignore(t)
	var need []string
	for _, in := range readDockerfile(t) {
		if in.cmd != "COPY" || strings.Contains(in.args, "--from") {
			continue
		}
		words := strings.Fields(in.args)
		for _, src := range words[:len(words)-1] {
			if !strings.HasPrefix(src, "--") && src != "." {
				need = append(need, src)
			}
		}
	}
	b := imageBuild(t, nil)
	cmd := exec.Command(goBin, "list", "-deps", "-f",
		`{{if and .Module (eq .Module.Path "`+module+`")}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}`,
		b.args[len(b.args)-1])
	cmd.Dir = root
	cmd.Env = append(os.Environ(), b.env...)
	cmd.Env = append(cmd.Env, "GOOS=linux")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		rel, err := filepath.Rel(root, fields[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fields[1:] {
			need = append(need, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	if len(need) < 10 {
		t.Fatalf("found only %d build inputs: %q", len(need), need)
	}
	for _, f := range need {
		if ignored(rules, f) {
			t.Errorf(".dockerignore leaves out %s, which the image build needs", f)
		}
	}
	for _, f := range []string{".git", "gateway.test", "internal/gateway/gateway.test", "bench/go.mod"} {
		if !ignored(rules, f) {
			t.Errorf(".dockerignore sends %s to the build", f)
		}
	}
}
