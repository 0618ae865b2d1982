package deploy_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The readers of the packaging files. Each test reads the files as they
// are, so it follows the Dockerfile, .dockerignore, .goreleaser.yaml and
// the compose files rather than a copy of them.

const module = "github.com/fuseboxhq/fusebox"

// repoRoot returns the module's root directory, the parent of deploy/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod above deploy/: %v", err)
	}
	return root
}

// needGo skips the test when it is short or when no go command is on PATH.
func needGo(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	return lookGo(t)
}

// lookGo returns the go command, skipping the test when none is on PATH.
func lookGo(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	return goBin
}

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	line int    // where it starts, from 1
	cmd  string // upper case: FROM, RUN, COPY, …
	args string // the rest, as written
}

// readDockerfile returns the repository's Dockerfile as instructions.
func readDockerfile(t *testing.T) []instruction {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out  []instruction
		cur  strings.Builder
		from int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue // a comment may sit between continuation lines, too
		}
		if cur.Len() == 0 {
			from = n
		}
		more := strings.HasSuffix(line, `\`)
		cur.WriteString(strings.TrimSuffix(line, `\`))
		if more {
			cur.WriteByte(' ')
			continue
		}
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: from, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.Len() > 0 {
		t.Fatalf("Dockerfile:%d: instruction continues past the end of the file", from)
	}
	return out
}

// only returns the instructions named cmd, failing unless there is exactly
// one.
func only(t *testing.T, ins []instruction, cmd string) instruction {
	t.Helper()
	var found []instruction
	for _, in := range ins {
		if in.cmd == cmd {
			found = append(found, in)
		}
	}
	if len(found) != 1 {
		t.Fatalf("Dockerfile: %d %s instructions; want 1", len(found), cmd)
	}
	return found[0]
}

// execForm decodes the JSON array of an exec-form CMD, ENTRYPOINT or
// HEALTHCHECK CMD. Distroless has no shell, so the shell form is an error.
func execForm(t *testing.T, in instruction, s string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(s), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("Dockerfile:%d: %s %s: want the exec form, a JSON array (the image has no shell)", in.line, in.cmd, s)
	}
	return argv
}

// goBuild is the image's go build command: its environment and arguments.
type goBuild struct {
	line int
	env  []string // NAME=value assignments before the command
	args []string // after "go"
}

// output returns the value of -o.
func (b goBuild) output() (string, int) {
	for i, a := range b.args {
		if a == "-o" && i+1 < len(b.args) {
			return b.args[i+1], i + 1
		}
		if v, ok := strings.CutPrefix(a, "-o="); ok {
			return v, i
		}
	}
	return "", -1
}

// imageBuild finds the RUN instruction of the Dockerfile that runs go build
// and splits it as a shell would, with the build arguments (ARG) declared
// before it expanded: their defaults, or the values in buildArgs (as
// docker build --build-arg NAME=value gives them). It must be one simple
// command, so that the test runs exactly what the image build runs.
func imageBuild(t *testing.T, buildArgs map[string]string) goBuild {
	t.Helper()
	var found []goBuild
	vars := map[string]string{}
	for _, in := range readDockerfile(t) {
		if in.cmd == "FROM" {
			clear(vars) // an ARG is in scope in its own stage only
		}
		if in.cmd == "ARG" {
			name, def, _ := strings.Cut(in.args, "=")
			vars[name] = strings.Trim(def, `"`)
			if v, ok := buildArgs[name]; ok {
				vars[name] = v
			}
		}
		if in.cmd != "RUN" || !strings.Contains(in.args, "go build") {
			continue
		}
		words, err := shellWords(in.args, vars)
		if err != nil {
			t.Fatalf("Dockerfile:%d: RUN %s: %v; keep the go build line one simple command", in.line, in.args, err)
		}
		for len(words) > 0 && strings.HasPrefix(words[0], "--") { // RUN's own flags: --mount=…
			words = words[1:]
		}
		b := goBuild{line: in.line}
		for len(words) > 0 && isAssignment(words[0]) {
			b.env, words = append(b.env, words[0]), words[1:]
		}
		if len(words) < 2 || words[0] != "go" || words[1] != "build" {
			t.Fatalf("Dockerfile:%d: RUN %s: want [NAME=value …] go build …", in.line, in.args)
		}
		b.args = words[1:]
		found = append(found, b)
	}
	if len(found) != 1 {
		t.Fatalf("Dockerfile: %d RUN instructions with go build; want 1", len(found))
	}
	return found[0]
}

// isAssignment reports whether a shell word is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	return ok && name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) < 0
}

// errNotSimple is returned for shell syntax a test cannot run as written.
var errNotSimple = errors.New("not a simple command")

// shellWords splits s into words the way sh does for a simple command:
// blanks separate words, single quotes keep everything, double quotes keep
// all but \" \\ \$ \`, a backslash outside quotes escapes the next
// character, and ${NAME} inside double quotes is the value of vars[NAME].
// Operators, other expansions and substitutions are refused.
func shellWords(s string, vars map[string]string) ([]string, error) {
	var (
		words []string
		w     strings.Builder
		inW   bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inW {
				words, inW = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated '")
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '$' {
					v, n, err := expand(s[i:], vars)
					if err != nil {
						return nil, err
					}
					w.WriteString(v)
					i += n - 1
					continue
				}
				if s[i] == '`' {
					return nil, errNotSimple
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, errors.New(`unterminated "`)
			}
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case strings.IndexByte(";&|<>()$`*?[#~", c) >= 0:
			return nil, errNotSimple
		default:
			w.WriteByte(c)
		}
		inW = true
	}
	if inW {
		words = append(words, w.String())
	}
	return words, nil
}

// expand reads the ${NAME} at the start of s and returns its value and
// length; a $ of another form, or a NAME vars does not have, is an error.
func expand(s string, vars map[string]string) (string, int, error) {
	end := strings.IndexByte(s, '}')
	if !strings.HasPrefix(s, "${") || end < 0 {
		return "", 0, errNotSimple
	}
	v, ok := vars[s[2:end]]
	if !ok {
		return "", 0, errors.New("${" + s[2:end] + "} is no ARG of the stage")
	}
	return v, end + 1, nil
}

// ignoreRule is one line of a .dockerignore file.
type ignoreRule struct {
	except bool     // a !pattern, which includes again
	segs   []string // the pattern's path segments
}

// readDockerignore returns the rules of the repository's .dockerignore.
func readDockerignore(t *testing.T) []ignoreRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []ignoreRule
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if p, ok := strings.CutPrefix(line, "!"); ok {
			r.except, line = true, strings.TrimSpace(p)
		}
		line = strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(line)), "/")
		r.segs = strings.Split(line, "/")
		rules = append(rules, r)
	}
	return rules
}

// ignored reports whether the build context leaves out name, a
// slash-separated path relative to the context: the last rule that
// matches it or one of its parent directories decides.
func ignored(rules []ignoreRule, name string) bool {
	segs := strings.Split(name, "/")
	out := false
	for _, r := range rules {
		for i := 1; i <= len(segs); i++ {
			if matchSegs(r.segs, segs[:i]) {
				out = !r.except
				break
			}
		}
	}
	return out
}

// matchSegs matches path segments against pattern segments, where "**"
// stands for any number of segments and the others are path.Match patterns.
func matchSegs(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if matchSegs(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], name[0])
	return err == nil && ok && matchSegs(pat[1:], name[1:])
}

// releaseConfig is the part of .goreleaser.yaml the tests read.
type releaseConfig struct {
	Version int            `yaml:"version"`
	Builds  []releaseBuild `yaml:"builds"`
	// Archives name the files shipped beside the binary.
	Archives []struct {
		Files []string `yaml:"files"`
	} `yaml:"archives"`
}

type releaseBuild struct {
	ID      string   `yaml:"id"`
	Main    string   `yaml:"main"`
	Env     []string `yaml:"env"`
	Flags   []string `yaml:"flags"`
	Ldflags []string `yaml:"ldflags"`
	Goos    []string `yaml:"goos"`
	Goarch  []string `yaml:"goarch"`
	// Ignore drops pairs from the matrix; an empty field matches any.
	Ignore []target `yaml:"ignore"`
}

// target is one GOOS/GOARCH pair.
type target struct {
	Goos   string `yaml:"goos"`
	Goarch string `yaml:"goarch"`
}

func (t target) String() string { return t.Goos + "/" + t.Goarch }

// targets returns the build's matrix, less its ignored pairs.
func (b releaseBuild) targets() []target {
	var out []target
	for _, goos := range b.Goos {
		for _, goarch := range b.Goarch {
			if !slices.ContainsFunc(b.Ignore, func(i target) bool {
				return (i.Goos == "" || i.Goos == goos) && (i.Goarch == "" || i.Goarch == goarch)
			}) {
				out = append(out, target{goos, goarch})
			}
		}
	}
	return out
}

// readRelease returns .goreleaser.yaml.
func readRelease(t *testing.T) releaseConfig {
	t.Helper()
	var c releaseConfig
	readYAML(t, filepath.Join(repoRoot(t), ".goreleaser.yaml"), &c)
	return c
}

// readYAML decodes the YAML file at name into v.
func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
