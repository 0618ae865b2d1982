package deploy_test

// The README's quickstart, run as a newcomer would run it: every command
// of its shell blocks, in order, against the simulated providers, with
// the SDK snippets' requests made by Go's client (and the snippets
// themselves checked by python3 and node when they are installed). The
// addresses the README uses are mapped to free ports, and the files it
// writes to a temporary directory.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fence is one fenced block of a Markdown file.
type fence struct {
	lang string
	line int // of the opening fence
	body string
}

func readFences(t *testing.T, path string) []fence {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out []fence
		cur *fence
	)
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &fence{lang: strings.TrimSpace(line[3:]), line: i + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body += line + "\n"
		}
	}
	return out
}

// shellCommand is one line of a shell block: its words, whether it runs
// in the background (&), and the file its output goes to (>).
type shellCommand struct {
	words      []string
	background bool
	stdout     string
}

// commands splits a shell block into commands: continuation lines joined,
// comments dropped, && separating commands.
func commands(t *testing.T, body string) []shellCommand {
	t.Helper()
	var out []shellCommand
	for _, line := range strings.Split(strings.ReplaceAll(body, "\\\n", " "), "\n") {
		line = strings.TrimSpace(stripComment(line))
		if line == "" {
			continue
		}
		for _, part := range strings.Split(line, " && ") {
			var c shellCommand
			part = strings.TrimSpace(part)
			if strings.HasSuffix(part, "&") {
				c.background, part = true, strings.TrimSpace(strings.TrimSuffix(part, "&"))
			}
			if before, file, ok := strings.Cut(part, " > "); ok {
				part, c.stdout = before, strings.TrimSpace(file)
			}
			words, err := shellWords(part, nil)
			if err != nil {
				t.Fatalf("README command %q: %v", part, err)
			}
			c.words = words
			out = append(out, c)
		}
	}
	return out
}

// stripComment drops a # comment that is outside quotes.
func stripComment(line string) string {
	var q byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case q == 0 && c == '#' && (i == 0 || line[i-1] == ' '):
			return line[:i]
		}
	}
	return line
}

// quickstart is the state of a run of the README.
type quickstart struct {
	t       *testing.T
	root    string
	dir     string            // where the README's files are written
	bin     string            // the installed fusebox
	addrs   map[string]string // the README's address -> the test's
	files   map[string]string // the README's file -> the test's
	gateway string            // the gateway's address, as the README has it
	bg      []*exec.Cmd
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// mapped rewrites the README's addresses and files in s.
func (q *quickstart) mapped(s string) string {
	for from, to := range q.addrs {
		s = strings.ReplaceAll(s, from, to)
	}
	if f, ok := q.files[s]; ok {
		return f
	}
	return s
}

// newQuickstart prepares a run of a document's commands: free ports for
// the addresses they use, the quickstart configuration on those ports,
// and a directory for the files they write.
func newQuickstart(t *testing.T) *quickstart {
	t.Helper()
	root := repoRoot(t)
	q := &quickstart{t: t, root: root, dir: t.TempDir(), gateway: "127.0.0.1:8080", addrs: map[string]string{}, files: map[string]string{}}
	for _, a := range []string{"127.0.0.1:9001", "127.0.0.1:9002", q.gateway} {
		q.addrs[a] = freePort(t)
	}
	// The quickstart's configuration, on the test's ports.
	cfg, err := os.ReadFile(filepath.Join(root, "examples", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	q.files["examples/quickstart.yaml"] = filepath.Join(q.dir, "quickstart.yaml")
	if err := os.WriteFile(q.files["examples/quickstart.yaml"], []byte(q.mapped(string(cfg))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fusebox.yaml", "results.jsonl", "dead.jsonl"} {
		q.files[f] = filepath.Join(q.dir, f)
	}
	t.Cleanup(q.stopAll)
	return q
}

func TestReadmeQuickstart(t *testing.T) {
	goBin := needGo(t)
	q := newQuickstart(t)
	root := q.root

	ran := 0
	for _, f := range readFences(t, filepath.Join(root, "README.md")) {
		switch f.lang {
		case "sh":
			for _, c := range commands(t, f.body) {
				q.run(goBin, f, c)
				ran++
			}
		case "python", "js":
			q.checkSnippet(f)
			got := q.ask()
			if got.target != "primary/frontier-large" || got.tried != "none" {
				t.Errorf("README.md:%d: the snippet's request was served by %q (tried %q); the README says primary/frontier-large | none", f.line, got.target, got.tried)
			}
		default:
			t.Errorf("README.md:%d: a %q block the test does not run", f.line, f.lang)
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README commands; the quickstart has more", ran)
	}
	readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
	for _, claim := range []string{"primary/frontier-large | none", "backup/midsize | primary/frontier-large: 503 outage (server_error)", "primary/frontier-large: breaker open", "kill %1 %2 %3"} {
		if !bytes.Contains(readme, []byte(claim)) {
			t.Errorf("README.md no longer says %q, which the test checks", claim)
		}
	}
}

// run runs one README command.
func (q *quickstart) run(goBin string, f fence, c shellCommand) {
	t := q.t
	t.Helper()
	where := fmt.Sprintf("README.md:%d: %s", f.line, strings.Join(c.words, " "))
	switch c.words[0] {
	case "git":
		// The network is not the test's: the clone is the checkout the
		// test runs in, and the URL must be the module's.
		if len(c.words) != 3 || c.words[1] != "clone" || c.words[2] != "https://"+module {
			t.Errorf("%s: want git clone https://%s", where, module)
		}
	case "cd":
		if len(c.words) != 2 || c.words[1] != filepath.Base(module) {
			t.Errorf("%s: the clone's directory is %s", where, filepath.Base(module))
		}
	case "go":
		cmd := exec.Command(goBin, c.words[1:]...)
		cmd.Dir, cmd.Env = q.root, append(os.Environ(), "GOBIN="+filepath.Join(q.dir, "bin"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", where, err, out)
		}
		q.bin = filepath.Join(q.dir, "bin", "fusebox")
	case "fusebox":
		q.fusebox(where, c)
	case "curl":
		q.curl(where, c.words[1:])
	default:
		t.Errorf("%s: a command the test does not know", where)
	}
}

// fusebox runs the installed binary as the README does.
func (q *quickstart) fusebox(where string, c shellCommand) {
	t := q.t
	t.Helper()
	if q.bin == "" {
		t.Fatalf("%s: fusebox before go install", where)
	}
	args := make([]string, 0, len(c.words)-1)
	for _, w := range c.words[1:] {
		args = append(args, q.mapped(w))
	}
	cmd := exec.Command(q.bin, args...)
	cmd.Dir = q.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if c.stdout != "" {
		f, err := os.Create(q.mapped(c.stdout))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	switch {
	case c.background:
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		q.bg = append(q.bg, cmd)
		q.waitListening(where, args, &out)
	case len(args) > 0 && args[0] == "demo":
		q.demo(where, cmd)
	default:
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v\n%s", where, err, out.String())
			}
		case <-ctx.Done():
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: still running after a minute", where)
		}
		if args[0] == "version" && !strings.HasPrefix(out.String(), "fusebox ") {
			t.Errorf("%s: %q", where, out.String())
		}
	}
}

// waitListening waits until the address a background command serves on
// accepts connections: its --listen, or the listen of its --config.
func (q *quickstart) waitListening(where string, args []string, out *bytes.Buffer) {
	t := q.t
	t.Helper()
	addr := ""
	for i, a := range args {
		switch {
		case a == "--listen" && i+1 < len(args):
			addr = args[i+1]
		case a == "--config" && i+1 < len(args):
			data, _ := os.ReadFile(args[i+1])
			if m := regexp.MustCompile(`(?m)^listen:\s*(\S+)`).FindSubmatch(data); m != nil {
				addr = string(m[1])
			}
		}
	}
	if addr == "" {
		t.Fatalf("%s: runs in the background but names no address", where)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("%s: nothing listens on %s after 30 s\n%s", where, addr, out.String())
}

// demo starts the demo and stops it, as Ctrl-C would, once it has served
// its dashboard and printed a summary of the traffic it sends.
func (q *quickstart) demo(where string, cmd *exec.Cmd) {
	t := q.t
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	var seen []string
	sc := bufio.NewScanner(pr)
	dashboard, summary := false, false
	for sc.Scan() && !(dashboard && summary) {
		line := sc.Text()
		seen = append(seen, line)
		dashboard = dashboard || strings.Contains(line, "/dashboard")
		summary = summary || strings.Contains(line, "requests")
	}
	cmd.Process.Signal(syscall.SIGINT)
	rest := make(chan []string, 1) // what it prints until it exits
	go func() {
		var more []string
		for sc.Scan() {
			more = append(more, sc.Text())
		}
		io.Copy(io.Discard, pr)
		rest <- more
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: stopped with %v:\n%s", where, err, strings.Join(append(seen, <-rest...), "\n"))
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("%s: did not stop on Ctrl-C:\n%s", where, strings.Join(append(seen, <-rest...), "\n"))
	}
	if !dashboard || !summary {
		t.Errorf("%s: printed no dashboard URL or summary:\n%s", where, strings.Join(seen, "\n"))
	}
}

// curl makes the request of a README curl command with Go's client.
func (q *quickstart) curl(where string, args []string) {
	t := q.t
	t.Helper()
	method, url, body := "GET", "", ""
	header := http.Header{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-s":
		case "-X":
			i++
			method = args[i]
		case "-H":
			i++
			k, v, _ := strings.Cut(args[i], ":")
			header.Set(k, strings.TrimSpace(v))
		case "-d":
			i++
			body = args[i]
			if method == "GET" {
				method = "POST"
			}
		case "-D":
			i++ // the headers, shown: the test reads them anyway
		default:
			if strings.HasPrefix(a, "-") {
				t.Fatalf("%s: curl option %s the test does not know", where, a)
			}
			url = q.mapped(a)
		}
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", where, resp.StatusCode, b)
	}
	_, serving := q.serving()
	switch {
	case !serving: // a recipe with no gateway (docs/BATCHES.md's)
	case strings.HasSuffix(url, "/sim/faults") && method == "POST":
		q.afterOutage(where)
	case strings.HasSuffix(url, "/sim/faults") && method == "DELETE":
		q.afterRecovery(where)
	case strings.HasSuffix(url, "/chat/completions") && resp.Header.Get("X-Fusebox-Target") == "":
		t.Errorf("%s: the answer has no x-fusebox-target", where)
	}
}

// serving reports whether the gateway runs in the background: a
// fusebox serve started by the document.
func (q *quickstart) serving() (*exec.Cmd, bool) {
	for _, c := range q.bg {
		if len(c.Args) > 1 && c.Args[1] == "serve" {
			return c, true
		}
	}
	return nil, false
}

// answer is what the snippets print of an answer.
type answer struct{ target, tried, content string }

// ask makes the snippets' request: a chat completion for the alias chat,
// any API key, to the gateway's /v1.
func (q *quickstart) ask() answer {
	t := q.t
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+q.addrs[q.gateway]+"/v1/chat/completions",
		strings.NewReader(`{"model":"chat","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer any")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil || len(body.Choices) == 0 {
		t.Fatalf("the snippets' request: status %d", resp.StatusCode)
	}
	return answer{resp.Header.Get("X-Fusebox-Target"), resp.Header.Get("X-Fusebox-Tried"), body.Choices[0].Message.Content}
}

// afterOutage runs the snippet again with the primary down: the backup
// answers, the primary's failure named; after three failures its breaker
// is open and it is skipped at once.
func (q *quickstart) afterOutage(where string) {
	t := q.t
	t.Helper()
	got := q.ask()
	if got.target != "backup/midsize" || !strings.HasPrefix(got.tried, "primary/frontier-large: 503 outage (server_error)") {
		t.Errorf("%s: then the snippet is served by %q (tried %q); the README says backup/midsize | primary/frontier-large: 503 outage (server_error)", where, got.target, got.tried)
	}
	for range 3 {
		got = q.ask()
	}
	if got.target != "backup/midsize" || got.tried != "primary/frontier-large: breaker open" {
		t.Errorf("%s: three requests later, served by %q (tried %q); the README says the primary's breaker is open", where, got.target, got.tried)
	}
}

// afterRecovery waits for the breaker's probe to find the primary
// working: within its open period of 10 s (and a little more on a loaded
// machine), the primary serves again.
func (q *quickstart) afterRecovery(where string) {
	t := q.t
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if q.ask().target == "primary/frontier-large" {
			return
		}
	}
	t.Errorf("%s: the primary never served again", where)
}

// checkSnippet checks an SDK snippet: its base URL is the gateway's and
// its model the alias; its syntax, with python3 or node when they are
// installed.
func (q *quickstart) checkSnippet(f fence) {
	t := q.t
	t.Helper()
	if !strings.Contains(f.body, `"http://`+q.gateway+`/v1"`) || !strings.Contains(f.body, `model: "chat"`) && !strings.Contains(f.body, `model="chat"`) {
		t.Errorf("README.md:%d: the %s snippet does not send model chat to http://%s/v1", f.line, f.lang, q.gateway)
	}
	for _, h := range []string{"x-fusebox-target", "x-fusebox-tried"} {
		if !strings.Contains(f.body, h) {
			t.Errorf("README.md:%d: the %s snippet does not print %s", f.line, f.lang, h)
		}
	}
	name, check := "snippet.py", []string{"python3", "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())"}
	if f.lang == "js" {
		name, check = "snippet.mjs", []string{"node", "--check"}
	}
	bin, err := exec.LookPath(check[0])
	if err != nil {
		t.Logf("README.md:%d: no %s to check the snippet's syntax", f.line, check[0])
		return
	}
	path := filepath.Join(q.dir, name)
	if err := os.WriteFile(path, []byte(f.body), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, append(check[1:], path)...).CombinedOutput(); err != nil {
		t.Errorf("README.md:%d: the %s snippet: %v\n%s", f.line, f.lang, err, out)
	}
}

// stopAll stops the background commands, as kill %1 %2 %3 does.
func (q *quickstart) stopAll() {
	for _, c := range q.bg {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range q.bg {
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
		}
	}
	q.bg = nil
}

// The recipe of docs/BATCHES.md on the simulator: the batch rides out the
// primary's outage on the backup, and its rerun sends nothing.
func TestBatchRecipe(t *testing.T) {
	goBin := needGo(t)
	q := newQuickstart(t)
	// The binary, as the README installs it.
	q.run(goBin, fence{line: 0}, shellCommand{words: []string{"go", "install", "./cmd/fusebox"}})
	var section []fence
	in := false
	data, err := os.ReadFile(filepath.Join(q.root, "docs", "BATCHES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range readFences(t, filepath.Join(q.root, "docs", "BATCHES.md")) {
		heading := lastHeading(string(data), f.line)
		in = heading == "## A recipe on the simulator"
		if in && f.lang == "sh" {
			section = append(section, f)
		}
	}
	if len(section) != 2 {
		t.Fatalf("docs/BATCHES.md: %d shell blocks in its recipe; want the run and the rerun", len(section))
	}
	for i, f := range section {
		for _, c := range commands(t, f.body) {
			q.run(goBin, f, c)
		}
		results := readResults(t, q.files["results.jsonl"])
		if len(results) != 4 {
			t.Fatalf("after block %d: %d results; want the 4 lines of examples/batch.jsonl once each", i+1, len(results))
		}
		for id, target := range results {
			if target != "backup/midsize" {
				t.Errorf("%s was answered by %q; the recipe says backup/midsize", id, target)
			}
		}
		if dead, err := os.ReadFile(q.files["dead.jsonl"]); err == nil && len(bytes.TrimSpace(dead)) > 0 {
			t.Errorf("dead-lettered lines:\n%s", dead)
		}
	}
}

// lastHeading returns the "## " heading above line n of a document.
func lastHeading(doc string, n int) string {
	h := ""
	for i, line := range strings.Split(doc, "\n") {
		if i+1 >= n {
			break
		}
		if strings.HasPrefix(line, "## ") {
			h = line
		}
	}
	return h
}

// readResults maps each custom_id of a batch's results to the target
// that answered it; a line twice is an error.
func readResults(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r struct {
			CustomID string `json:"custom_id"`
			Fusebox  struct {
				Target string `json:"target"`
			} `json:"fusebox"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, dup := out[r.CustomID]; dup {
			t.Errorf("%s: %s answered twice", path, r.CustomID)
		}
		out[r.CustomID] = r.Fusebox.Target
	}
	return out
}
