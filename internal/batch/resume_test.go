package batch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// childEnv makes the test binary a batch child (see killChild): its value
// is the batch's directory.
const childEnv = "FUSEBOX_BATCH_TEST_CHILD"

// killChild runs the batch in $childEnv/in.jsonl. Its handler takes one
// byte from stdin per request (at stdin's end, any number), so the parent
// decides how far it gets, and writes "custom_id key" to stdout after each
// answer. The parent kills it with SIGKILL at a point of its choosing.
func killChild() int {
	dir := os.Getenv(childEnv)
	in, err := os.Open(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var mu, outMu sync.Mutex // stdin's, stdout's
	eof := false
	token := make([]byte, 1)
	out := bufio.NewWriter(os.Stdout)
	h := func(w http.ResponseWriter, r *http.Request) {
		var l struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&l)
		mu.Lock()
		if !eof {
			if _, err := os.Stdin.Read(token); err != nil {
				eof = true
			}
		}
		mu.Unlock()
		okHandler("0.001")(w, r)
		outMu.Lock()
		fmt.Fprintf(out, "%s %s\n", strings.TrimPrefix(l.Messages[0].Content, "hi "), r.Header.Get("Idempotency-Key"))
		out.Flush()
		outMu.Unlock()
	}
	r, err := New(Options{Handler: http.HandlerFunc(h), Concurrency: 8, FlushEvery: 2 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s, err := r.Run(context.Background(), in, Paths{Out: filepath.Join(dir, "out.jsonl"), Dead: filepath.Join(dir, "dead.jsonl")})
	if err != nil || s.Stopped != "" {
		fmt.Fprintln(os.Stderr, err, s)
		return 2
	}
	return 0
}

// Killed with SIGKILL at random points mid-write, 20 times, a batch
// rerun with the same command finishes with every line in its output
// exactly once and no torn line, and every attempt at a line carried the
// same idempotency key. While a run is alive, a second one on the same
// files is refused and names the first's pid (issue 30).
func TestResumeAfterKillAtRandomPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	for trial := range 2 {
		seed := uint64(time.Now().UnixNano())
		t.Run(fmt.Sprint(trial), func(t *testing.T) { killAndResume(t, seed) })
	}
}

func killAndResume(t *testing.T, seed uint64) {
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	const total = 1200 // more than 20 runs of at most 50 lines each take
	input := chatLines(total-2) + "not json\n" + `{"custom_id":"q1","method":"POST","url":"/v1/embeddings","body":{}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(input), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for round := 0; ; round++ {
		last := round == 20
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+dir)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acks := bufio.NewScanner(stdout)
		k := 1 + rng.IntN(50)
		if last {
			stdin.Close()
		} else {
			stdin.Write(make([]byte, k))
		}
		wait := rng.IntN(k + 1)
		for i := 0; (last || i < wait) && acks.Scan(); i++ {
			f := strings.Fields(acks.Text())
			if old, ok := keys[f[0]]; ok && old != f[1] {
				t.Fatalf("line %s sent with key %s, then %s", f[0], old, f[1])
			}
			keys[f[0]] = f[1]
		}
		if !last && wait > 0 && round%4 == 0 {
			secondRunRefused(t, dir, cmd.Process.Pid)
		}
		if last {
			io.Copy(io.Discard, stdout)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("last run: %v\n%s", err, stderr.String())
			}
			break
		}
		cmd.Process.Kill() // SIGKILL
		cmd.Wait()
	}
	seen := map[int]int{}
	for _, f := range []string{"out.jsonl", "dead.jsonl"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s ends in a torn line", f)
		}
		for _, r := range records(t, filepath.Join(dir, f)) {
			seen[r.Fusebox.Line]++
		}
	}
	for n := 1; n <= total; n++ {
		if seen[n] != 1 {
			t.Errorf("line %d is in the output %d times", n, seen[n])
		}
	}
	if len(seen) != total {
		t.Errorf("%d lines in the output; want %d", len(seen), total)
	}
}

// secondRunRefused starts a second batch child on dir while the one with
// pid holds it: it must exit non-zero, naming the holder.
func secondRunRefused(t *testing.T, dir string, pid int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a second run on the same output ran: %s", out)
	}
	if want := fmt.Sprintf("another run (pid %d on ", pid); !strings.Contains(string(out), want) {
		t.Fatalf("the second run said %q; want it to name the holder (%q)", out, want)
	}
}

// A journal cut in the middle of a group keeps only its whole commits, and
// the output is cut back to what they vouch for.
func TestTornJournalAndOutputAreCutBack(t *testing.T) {
	p := paths(t)
	run(t, p, chatLines(10), Options{Handler: okHandler("0")})
	before, _ := os.ReadFile(p.Out)
	// A crash after lines were written but before their commit: output
	// past the journal, and half a group in the journal.
	appendFile(t, p.Out, `{"custom_id":"q11","half a line`)
	appendFile(t, p.journal(), "L\x01\x02\x03")
	s := run(t, p, chatLines(12), Options{Handler: okHandler("0")})
	if s.Skipped != 10 || s.OK != 2 || s.TotalOK != 12 {
		t.Fatalf("%+v", s)
	}
	after, _ := os.ReadFile(p.Out)
	if !strings.HasPrefix(string(after), string(before)) || strings.Contains(string(after), "half a line") || len(records(t, p.Out)) != 12 {
		t.Fatalf("output not cut back:\n%s", after)
	}
	// An output file shorter than its journal says was changed: refused.
	os.WriteFile(p.Out, []byte("x\n"), 0o644)
	r, _ := New(Options{Handler: okHandler("0")})
	if _, err := r.Run(context.Background(), strings.NewReader(chatLines(1)), p); err == nil || !strings.Contains(err.Error(), "shorter") {
		t.Fatalf("shortened output: %v", err)
	}
	// Lines without a journal are not run over.
	os.Remove(p.journal())
	if _, err := r.Run(context.Background(), strings.NewReader(chatLines(1)), p); err == nil || !strings.Contains(err.Error(), "no journal") {
		t.Fatalf("orphan output: %v", err)
	}
}

func appendFile(t *testing.T, path, s string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

// Stop lets lines in flight finish and leaves the rest; a rerun does the
// rest, each once.
func TestStopThenResume(t *testing.T) {
	var r *Runner
	var once sync.Once
	var c counter
	h := func(w http.ResponseWriter, req *http.Request) {
		if c.enter() == 10 {
			once.Do(r.Stop)
		}
		okHandler("0")(w, req)
	}
	p := paths(t)
	r, _ = New(Options{Handler: http.HandlerFunc(h), Concurrency: 4})
	s, err := r.Run(context.Background(), strings.NewReader(chatLines(100)), p)
	if err != nil || s.Stopped != StoppedByCaller || s.OK < 10 || s.OK >= 100 {
		t.Fatalf("%+v %v", s, err)
	}
	s2 := run(t, p, chatLines(100), Options{Handler: okHandler("0")})
	if s2.Skipped != s.OK || s2.TotalOK != 100 || len(records(t, p.Out)) != 100 {
		t.Fatalf("%+v then %+v", s, s2)
	}
}
