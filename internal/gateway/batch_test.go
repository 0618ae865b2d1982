package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/batch"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// The batch engine through the gateway, in the process: lines as a named
// client (WithClient, as the Batch API runs them), ladders and breakers
// as for the client's own requests.

// simGateway starts two simulated providers and a gateway whose alias
// "chat" has the first as primary and the second as secondary, for the
// client "batch".
func simGateway(t *testing.T) (gw *Server, primary, secondary *sim.Server) {
	t.Helper()
	var sims []*sim.Server
	var urls []any
	for i, name := range []string{"primary", "secondary"} {
		s, err := sim.New(sim.Config{Name: name, Seed: uint64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(s.Close)
		t.Cleanup(hs.Close)
		urls, sims = append(urls, hs.URL+"/v1"), append(sims, s)
	}
	gw, _ = start(t, Options{}, fmt.Sprintf(`
clients:
  - {name: batch, key: sk-batch}
providers:
  primary: {type: openai, base_url: %q, keys: [pk]}
  secondary: {type: openai, base_url: %q, keys: [sk]}
models:
  - name: chat
    targets:
      - {provider: primary, model: sim-large, price: {input: 1, output: 2}}
      - {provider: secondary, model: sim-small, price: {input: 0.5, output: 1}}
    breaker: {consecutive: 3, open: 1h}
    retry: {attempts: 1}
`, urls...))
	return gw, sims[0], sims[1]
}

// asClient makes a line's request the named client's.
func asClient(name string) func(*http.Request) {
	return func(r *http.Request) { *r = *r.WithContext(WithClient(r.Context(), name)) }
}

// chatLines returns n chat lines with custom_ids q1…qn.
func chatLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"custom_id":"q%d","method":"POST","url":"/v1/chat/completions","body":{"model":"chat","messages":[{"role":"user","content":"hi %d"}]}}`+"\n", i, i)
	}
	return b.String()
}

// runBatch runs input with o into a new directory's files.
func runBatch(t *testing.T, input string, o batch.Options) (batch.Summary, batch.Paths) {
	t.Helper()
	d := t.TempDir()
	p := batch.Paths{Out: filepath.Join(d, "out.jsonl"), Dead: filepath.Join(d, "dead.jsonl")}
	r, err := batch.New(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Run(context.Background(), strings.NewReader(input), p)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// outputLine is what these tests read of an output line.
type outputLine struct {
	Response struct {
		StatusCode int `json:"status_code"`
	} `json:"response"`
	Fusebox struct {
		Target string  `json:"target"`
		Cost   float64 `json:"cost"`
	} `json:"fusebox"`
}

func outputLines(t *testing.T, path string) []outputLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []outputLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l outputLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d is not JSON: %v", len(out)+1, err)
		}
		out = append(out, l)
	}
	return out
}

// The primary fails in the middle of the batch: every line is answered,
// those after the failure by the secondary while the primary's breaker is
// open, and the primary hears only the few calls that opened it.
func TestBatchOutageOfThePrimaryMidBatch(t *testing.T) {
	gw, primary, _ := simGateway(t)
	const total, failAt = 300, 100
	var sent, primaryAtFailure atomic.Int64
	prepare := func(r *http.Request) {
		asClient("batch")(r)
		if sent.Add(1) == failAt {
			primaryAtFailure.Store(primary.Stats().Calls)
			primary.SetFaults([]sim.Fault{{Kind: sim.ErrorStorm, Status: 503}})
		}
	}
	s, p := runBatch(t, chatLines(total), batch.Options{Handler: gw.Handler(), Prepare: prepare, Concurrency: 8})
	if s.OK != total || s.Dead != 0 || s.Cost <= 0 || s.TokensIn == 0 {
		t.Fatalf("summary %+v; want every line answered, with cost and tokens", s)
	}
	bySecondary := 0
	for _, l := range outputLines(t, p.Out) {
		if l.Response.StatusCode != 200 || l.Fusebox.Target == "" || l.Fusebox.Cost <= 0 {
			t.Fatalf("line %+v", l)
		}
		if l.Fusebox.Target == "secondary/sim-small" {
			bySecondary++
		}
	}
	if bySecondary < total-failAt {
		t.Errorf("the secondary served %d lines; want at least the %d after the failure", bySecondary, total-failAt)
	}
	a, _ := gw.Router().Lookup("chat")
	if st := a.Targets[0].Breaker().State(); st != breaker.StateOpen {
		t.Errorf("primary breaker %v; want open", st)
	}
	if after := primary.Stats().Calls - primaryAtFailure.Load(); after > 3+8 {
		t.Errorf("the primary heard %d calls after it failed; want only those that opened its breaker", after)
	}
}

// A line sent twice under its idempotency key (as after a crash) is
// answered from the gateway's record, not sent upstream again.
func TestBatchRepeatedLineIsReplayed(t *testing.T) {
	gw, primary, _ := simGateway(t)
	o := batch.Options{Handler: gw.Handler(), Prepare: asClient("batch"), BatchID: "b-same"}
	runBatch(t, chatLines(5), o)
	before := primary.Stats().Calls
	runBatch(t, chatLines(5), o) // new files, same batch id: the same keys
	if after := primary.Stats().Calls; after != before {
		t.Fatalf("the repeated lines reached the provider: %d calls, then %d", before, after)
	}
}

// A client the configuration does not know stops the batch at once,
// nothing dead-lettered.
func TestBatchUnknownClientStops(t *testing.T) {
	gw, _, _ := simGateway(t)
	s, _ := runBatch(t, chatLines(20), batch.Options{Handler: gw.Handler(), Prepare: asClient("nobody")})
	if s.Stopped != batch.StoppedAuth || s.Dead != 0 || s.OK != 0 {
		t.Fatalf("%+v", s)
	}
}
