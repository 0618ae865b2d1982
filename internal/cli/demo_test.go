package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// The demo's configuration has the claude alias, its targets the three
// clouds in ladder order, each provider of its cloud's type.
func TestDemoConfigHasTheClaudeLadder(t *testing.T) {
	provs := demoProviders()
	for _, p := range provs {
		p.root, p.url = "http://127.0.0.1:1", "http://127.0.0.1:1/v1"
	}
	cfg, err := config.Parse("demo", []byte(demoConfig("127.0.0.1:0", "tok", "/nonexistent/sa.json", provs)), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range cfg.Models {
		if m.Name != "claude" {
			continue
		}
		for _, tg := range m.Targets {
			got = append(got, fmt.Sprintf("%s:%s:%s", tg.Provider, cfg.Providers[tg.Provider].Type, tg.Model))
		}
	}
	want := "anthropic:anthropic:claude-sonnet-4-5 bedrock:bedrock:claude-sonnet-4-5 vertex:vertex:claude-sonnet-4-5"
	if strings.Join(got, " ") != want {
		t.Errorf("claude targets %v; want %s", got, want)
	}
}

// Against the demo's own simulators and gateway, each phase of the claude
// ladder is served where the narration says: Anthropic when healthy,
// Bedrock when Anthropic answers 529, Vertex AI when Bedrock throttles
// too; the simulators checked the SigV4 signatures and the service
// account's token, and the status the dashboard reads lists the clouds.
func TestDemoClaudeLadderServesInPhase(t *testing.T) {
	st, err := startDemo("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.gw.ListenAndServe(ctx, st.ln, time.Second) }()
	defer func() { stop(); <-done }()
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	sims := map[string]*sim.Server{}
	for _, p := range st.provs {
		sims[p.name] = p.srv
	}
	set := func(name string, fs ...sim.Fault) {
		t.Helper()
		if err := sims[name].SetFaults(fs); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		phase  string
		faults func()
		want   string
	}{
		{"healthy", func() {}, "anthropic"},
		{"Anthropic answers 529", func() { set("anthropic", sim.Fault{Kind: sim.ErrorStorm, Status: 529, Fraction: 1}) }, "bedrock"},
		{"Bedrock throttles", func() {
			set("bedrock", sim.Fault{Kind: sim.Throttle, RetryAfter: 5 * time.Second, Fraction: 1})
		}, "vertex"},
	} {
		tc.faults()
		for _, stream := range []bool{false, true} {
			target, usage, err := demoCall(context.Background(), client, st.base, "claude", stream)
			if name, _, _ := strings.Cut(target, "/"); err != nil || name != tc.want || usage[0] == 0 || usage[1] == 0 {
				t.Errorf("%s, stream %v: served by %q, usage %v, err %v; want %s with usage", tc.phase, stream, target, usage, err, tc.want)
			}
		}
	}
	if calls := sims["bedrock"].Stats().APIs["bedrock.invoke"]; calls == 0 {
		t.Error("no InvokeModel call reached the Bedrock simulator")
	}
	if calls := sims["vertex"].Stats().APIs["vertex.raw_predict"]; calls == 0 {
		t.Error("no rawPredict call reached the Vertex AI simulator")
	}
	req, _ := http.NewRequest(http.MethodGet, st.base+"/fusebox/status", nil)
	req.Header.Set("Authorization", "Bearer "+st.token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"anthropic/claude-sonnet-4-5", "bedrock/claude-sonnet-4-5", "vertex/claude-sonnet-4-5", `"claude"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("status (the dashboard's data) lacks %s:\n%s", want, b)
		}
	}
}

// The cycle's cross-cloud phases are said in order, one line each, after
// the smart ladder's, and each sets the faults it announces.
func TestDemoNarratesTheClaudeLadder(t *testing.T) {
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
	const cycle = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); scriptOutages(ctx, clk, cycle, provs, say) }()
	for range demoPhases(cycle) {
		clk.WaitForTimers(1)
		clk.AdvanceToNext()
	}
	clk.WaitForTimers(1)
	cancel()
	<-done
	s, last := strings.Join(lines, "\n"), -1
	for _, want := range []string{"phase: secondary's throttle over", "phase: Anthropic answers 529 overloaded", "phase: Bedrock throttles every call (ThrottlingException", "Vertex AI serves Claude", "phase: Anthropic and Bedrock recover"} {
		i := strings.Index(s, want)
		if i < 0 || i < last {
			t.Errorf("demo output lacks %q after the phase before it:\n%s", want, s)
		}
		last = i
	}
	for _, p := range provs {
		var kinds []string
		for _, f := range p.srv.Faults() {
			kinds = append(kinds, fmt.Sprintf("%s %d %v-%v", f.Kind, f.Status, f.From, f.To))
		}
		got := strings.Join(kinds, ", ")
		want := map[string]string{"anthropic": "error_storm 529 7s-9.5s", "bedrock": "throttle 0 8s-9.5s", "vertex": ""}[p.name]
		if p.cloud != "" && got != want {
			t.Errorf("%s faults %q; want %q", p.name, got, want)
		}
	}
}

// "served by" lists both ladders' providers in ladder order.
func TestDemoTallyOrderIsBothLadders(t *testing.T) {
	provs := demoProviders()
	tally := demoTally{}
	for _, p := range provs {
		tally.order = append(tally.order, p.name)
	}
	for _, target := range []string{"vertex/claude-sonnet-4-5", "cheap/small-fast", "anthropic/claude-sonnet-4-5", "bedrock/claude-sonnet-4-5", "primary/frontier-large"} {
		tally.record(target, 0, false)
	}
	if got := tally.line(); !strings.Contains(got, "served by: primary 1, cheap 1, anthropic 1, bedrock 1, vertex 1;") {
		t.Errorf("tally %q; want the smart ladder, then anthropic, bedrock, vertex", got)
	}
}

// A demo stopped while a client holds a request in flight (a slow client,
// its body never finished) ends as any stop does: what the
// drain did not finish is cut, said in a line, and the exit is clean.
func TestDemoStopsPastASlowClient(t *testing.T) {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- runDemo(context.Background(), demoOptions{listen: "127.0.0.1:0", duration: time.Second,
			rate: 2, cycle: time.Minute, every: time.Hour, drain: 300 * time.Millisecond}, pw)
		pw.Close()
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var all []string
	for l := range lines {
		all = append(all, l)
		if _, rest, ok := strings.Cut(l, "API        http://"); ok {
			addr, _, _ := strings.Cut(rest, "/")
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":") // and no more
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("the demo stopped with %v:\n%s", err, strings.Join(all, "\n"))
	}
	out := strings.Join(all, "\n")
	if !strings.Contains(out, "stopped: what was still in flight") || !strings.Contains(out, "done: requests") {
		t.Errorf("no cut and no summary said:\n%s", out)
	}
}
