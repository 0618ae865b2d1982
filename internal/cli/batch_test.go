package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// batchSetup writes a configuration whose alias "chat" is a simulated
// provider, and an input of n good lines and one the provider refuses.
func batchSetup(t *testing.T, n int) (cfg, in string) {
	t.Helper()
	s, err := sim.New(sim.Config{Name: "p", Models: []string{"sim-large"}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(s.Close)
	t.Cleanup(hs.Close)
	cfg = write(t, fmt.Sprintf(`clients: [{name: b, key: sk-b}]
providers:
  p: {type: openai, base_url: %q, keys: [k]}
models:
  - name: chat
    targets: [{provider: p, model: sim-large, price: {input: 1, output: 2}}]
  - name: nosuch
    targets: [{provider: p, model: not-served}]
`, hs.URL+"/v1"))
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}}`+"\n", i)
	}
	b.WriteString(`{"custom_id":"bad","method":"POST","url":"/v1/chat/completions","body":{"model":"nosuch","messages":[{"role":"user","content":"hi"}]}}` + "\n")
	in = filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, in
}

func TestBatchCommandRunsReportsAndExits(t *testing.T) {
	cfg, in := batchSetup(t, 20)
	var out, errs bytes.Buffer
	err := Run(context.Background(), []string{"batch", in, "--config", cfg, "--key", "sk-b", "--progress", "lines"}, &out, &errs)
	if ExitCode(err) != ExitDeadLetters {
		t.Fatalf("exit %d (%v); want %d\n%s%s", ExitCode(err), err, ExitDeadLetters, out.String(), errs.String())
	}
	for _, want := range []string{"answered", "20 this run", "dead-lettered", "1 this run", "in.dead.jsonl", "3: 1 line(s) dead-lettered"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errs.String(), "batch: ") {
		t.Errorf("no progress line: %q", errs.String())
	}
	results, _ := os.ReadFile(strings.TrimSuffix(in, ".jsonl") + ".results.jsonl")
	if n := bytes.Count(results, []byte("\n")); n != 20 {
		t.Fatalf("%d results; want 20", n)
	}
	// The same command again: everything is done, nothing is sent.
	out.Reset()
	err = Run(context.Background(), []string{"batch", in, "--config", cfg, "--key", "sk-b", "--progress", "none"}, &out, &errs)
	if ExitCode(err) != ExitDeadLetters || !strings.Contains(out.String(), "21 done before") {
		t.Fatalf("rerun: %v\n%s", err, out.String())
	}
	// The dead letter again: still refused, into its own files.
	out.Reset()
	dead := strings.TrimSuffix(in, ".jsonl") + ".dead.jsonl"
	err = Run(context.Background(), []string{"batch", "--retry-dead-letter", dead, "--config", cfg, "--key", "sk-b", "--progress", "none"}, &out, &errs)
	if ExitCode(err) != ExitDeadLetters || !strings.Contains(out.String(), "1 lines read") {
		t.Fatalf("retry: %v\n%s", err, out.String())
	}
}

func TestBatchCommandMaxCostAndUsage(t *testing.T) {
	cfg, in := batchSetup(t, 50)
	var out, errs bytes.Buffer
	// A line is reserved at about 10 output tokens at $2/M plus its prompt.
	err := Run(context.Background(), []string{"batch", in, "--config", cfg, "--key", "sk-b", "--max-cost", "0.0002", "--concurrency", "2", "--progress", "none"}, &out, &errs)
	if ExitCode(err) != ExitStoppedCost || !strings.Contains(out.String(), "max-cost") {
		t.Fatalf("exit %d (%v)\n%s", ExitCode(err), err, out.String())
	}
	for _, args := range [][]string{
		{"batch", "--config", cfg},                                           // no input
		{"batch", in, "--config", cfg},                                       // clients but no key
		{"batch", in, "--config", cfg, "--key", "k", "--out", in},            // output over the input
		{"batch", in, "--config", write(t, "providers: {}\n"), "--key", "k"}, // bad configuration
	} {
		if err := Run(context.Background(), args, &out, &errs); ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit %d (%v); want %d", args[1:], ExitCode(err), err, ExitUsage)
		}
	}
	err = Run(context.Background(), []string{"batch", in, "--config", cfg, "--key", "wrong", "--progress", "none", "--out", filepath.Join(t.TempDir(), "o.jsonl")}, &out, &errs)
	if ExitCode(err) != ExitKeyRefused {
		t.Errorf("wrong key: exit %d (%v)", ExitCode(err), err)
	}
}

// Two `fusebox batch` runs on one output: while one holds it, the second
// exits with ExitError and says who holds it, having written nothing.
func TestBatchCommandRefusesASecondRun(t *testing.T) {
	cfg, in := batchSetup(t, 3)
	results := strings.TrimSuffix(in, ".jsonl") + ".results.jsonl"
	lock := flock.New(results + ".lock")
	if ok, err := lock.TryLock(); !ok || err != nil {
		t.Fatalf("taking the lock: %v %v", ok, err)
	}
	holder := `{"pid":4242,"host":"other-host","started":"2026-12-01T10:00:00Z"}` + "\n"
	if err := os.WriteFile(results+".lock", []byte(holder), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	err := Run(context.Background(), []string{"batch", in, "--config", cfg, "--key", "sk-b", "--progress", "none"}, &out, &errs)
	if ExitCode(err) != ExitError || err == nil || !strings.Contains(err.Error(), "another run (pid 4242 on other-host, started 2026-12-01T10:00:00Z)") {
		t.Fatalf("exit %d (%v); want %d naming the holder", ExitCode(err), err, ExitError)
	}
	if b, _ := os.ReadFile(results); len(b) != 0 {
		t.Errorf("the refused run wrote %d bytes of results", len(b))
	}
	lock.Close()
	err = Run(context.Background(), []string{"batch", in, "--config", cfg, "--key", "sk-b", "--progress", "none"}, &out, &errs)
	if ExitCode(err) != ExitDeadLetters {
		t.Fatalf("once the lock is free: exit %d (%v)", ExitCode(err), err)
	}
}
