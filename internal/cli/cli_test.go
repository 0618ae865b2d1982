package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fusebox.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateReportsEveryProblemWithItsLine(t *testing.T) {
	p := write(t, `listen: 127.0.0.1:8080
providers:
  openai: {type: openai, keys: [k]}
models:
  - name: smart
    stratgy: fallback
    targets:
      - {provider: opneai, model: gpt-4.1}
    breaker: {open: 10x}
`)
	var out bytes.Buffer
	err := Run(context.Background(), []string{"validate", p}, &out, &out)
	if err == nil {
		t.Fatal("validate accepted a broken file")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{p + ":6: models[0].stratgy: unknown field", p + ":8: models[0].targets[0].provider: unknown provider \"opneai\"", p + ":9: models[0].breaker.open: bad duration \"10x\""}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", out.String())
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d = %q; want prefix %q", i, lines[i], want[i])
		}
	}
}

// Every example configuration is valid, with its keys in the environment.
func TestValidateAcceptsEveryExample(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "FUSEBOX_KEY_WEB", "FUSEBOX_KEY_BATCH", "FUSEBOX_KEY_STUDIO",
		"GEMINI_API_KEY", "GOOGLE_CLOUD_PROJECT", "AZURE_OPENAI_RESOURCE", "AZURE_OPENAI_API_KEY"} {
		t.Setenv(v, "test-"+strings.ToLower(v))
	}
	// Vertex's application default credentials, from a file: nothing
	// looks for a metadata server.
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", serviceAccountKey(t))
	t.Setenv("REDIS_URL", "redis://:test-pass@127.0.0.1:6379/0") // validate does not connect
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		var out bytes.Buffer
		if err := Run(context.Background(), []string{"validate", f}, &out, &out); err != nil {
			t.Errorf("%s: %v\n%s", f, err, out.String())
		} else if !strings.Contains(out.String(), "ok (") {
			t.Errorf("%s: output %q", f, out.String())
		}
	}
}

// A broken config never starts a half-working gateway; a good one serves
// until its context ends and then stops cleanly.
func TestServeRefusesBrokenConfigAndStopsCleanly(t *testing.T) {
	var out bytes.Buffer
	bad := write(t, "listen: 127.0.0.1:0\nproviders: {}\nmodels: [{name: x}]\n")
	if err := Run(context.Background(), []string{"serve", "--config", bad}, &out, &out); err == nil || !strings.Contains(err.Error(), "nothing started") {
		t.Fatalf("serve with a broken config: %v\n%s", err, out.String())
	}
	open := write(t, "listen: 0.0.0.0:0\nproviders:\n  openai: {type: openai, keys: [k]}\nmodels: [{name: a, targets: [{provider: openai, model: m}]}]\n")
	if err := Run(context.Background(), []string{"serve", "--config", open}, &out, &out); err == nil || !strings.Contains(err.Error(), "--allow-open") {
		t.Fatalf("serve open to the network without client keys: %v", err)
	}
	good := write(t, "listen: 127.0.0.1:0\nproviders:\n  openai: {type: openai, keys: [k]}\nmodels: [{name: a, targets: [{provider: openai, model: m}]}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Run(ctx, []string{"serve", "--config", good, "--drain", "1s"}, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve stopped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The demo starts, serves its trickle with no client-visible error before
// any outage, prints its URLs and stops at --duration.
func TestDemoRunsAndStops(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), []string{"demo", "--duration", "1500ms", "--rate", "20", "--cycle", "1h", "--summary", "500ms"}, &out, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{"/dashboard#token=", "/metrics", "outage cycle 1 begins", "done: requests", "errors seen by clients 0", "served by: primary"} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q:\n%s", want, s)
		}
	}
}

// Each phase of the outage cycle is said, in order, as it comes.
func TestDemoNarratesEachPhase(t *testing.T) {
	clk := clocktest.New(time.Unix(0, 0))
	provs := demoProviders()
	for _, p := range provs {
		s, err := sim.New(sim.Config{Name: p.name, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p.srv = s
	}
	var mu sync.Mutex
	var lines []string
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); scriptOutages(ctx, clk, 2*time.Second, provs, say) }()
	for range demoPhases(2 * time.Second) { // each phase's sleep, then the cycle's end
		clk.WaitForTimers(1)
		clk.AdvanceToNext()
	}
	clk.WaitForTimers(1) // waiting for the cycle's end: every phase said
	cancel()
	<-done
	s, last := strings.Join(lines, "\n"), -1
	for _, want := range []string{"outage cycle 1 begins", "phase: primary down", "phase: secondary throttled", "phase: primary recovers", "phase: secondary's throttle over"} {
		i := strings.Index(s, want)
		if i < 0 || i < last {
			t.Errorf("demo output lacks %q after the phase before it:\n%s", want, s)
		}
		last = i
	}
}

// "served by" lists the providers in ladder order, whatever their names.
func TestDemoTallyListsTheLadderInOrder(t *testing.T) {
	tally := demoTally{order: []string{"zeta", "alpha", "mid"}}
	tally.record("mid/m", 0, false)
	tally.record("alpha/a", 0, false)
	tally.record("zeta/z", 0, false)
	tally.record("zeta/z", 0, true)
	if got := tally.line(); !strings.Contains(got, "served by: zeta 1, alpha 1, mid 1;") || !strings.Contains(got, "errors seen by clients 1") {
		t.Errorf("tally %q; want zeta, alpha, mid in ladder order", got)
	}
}

func TestMockServesAScenarioAndStops(t *testing.T) {
	var out bytes.Buffer
	bad := write(t, "name: x\nfaults:\n  - {kind: error_storm, status: 418}\n")
	if err := Run(context.Background(), []string{"mock", "--scenario", bad}, &out, &out); err == nil || !strings.Contains(out.String(), ":3:") {
		t.Fatalf("bad scenario: %v\n%s", err, out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // already over: mock starts, then stops at once
	out.Reset()
	if err := Run(ctx, []string{"mock", "--listen", "127.0.0.1:0", "--scenario", "../../examples/scenarios/outage.yaml"}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "simulated provider") || !strings.Contains(out.String(), "export AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://127.0.0.1:") {
		t.Fatalf("output %q; want the banner, and the clouds' clients' environment", out.String())
	}
}

// serviceAccountKey writes a Google service account key file, for
// application default credentials that need no network to be found.
func serviceAccountKey(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sa, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "p", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "fusebox@p.iam.gserviceaccount.com", "token_uri": "http://127.0.0.1:1/token"})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
