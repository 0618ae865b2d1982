// Package fleetrun holds the fleet's real-time runs of several gateways
// on one Redis: a package of its own so that its minute of mostly idle
// waiting runs beside the gateway package's tests, not after them.
package fleetrun_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/redistest"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// The fleet's check on a healthy Redis, in real time: 30 requests a
// second for 60 s spread over three replicas (chat with an
// Idempotency-Key, Responses stored and continued on another replica),
// each replica's /readyz polled every 100 ms. No request may fail, no
// replica may say Redis is unreachable, and /readyz must say "shared"
// throughout. docs/BENCHMARKS.md has the same run with three fusebox
// processes.
func TestReplicasStayUpOnAHealthyRedis(t *testing.T) {
	if os.Getenv("FUSEBOX_REQUIRE_SCENARIOS") != "1" {
		t.Skip("a real-time scenario run (60 s): FUSEBOX_REQUIRE_SCENARIOS=1 runs it, as .ci/run does")
	}
	provider, err := sim.New(sim.Config{Name: "up", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(provider.Handler())
	t.Cleanup(up.Close)
	cfg, err := config.Parse("fusebox.yaml", []byte(fmt.Sprintf(twoTargets, redistest.Start(t).URL(), up.URL, up.URL)),
		func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	var urls []string
	for range 3 {
		s, err := gateway.New(gateway.Options{Config: cfg, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(s.Close) // after the listener: cleanups run last first
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	stop := make(chan struct{})
	var polls sync.WaitGroup
	for _, u := range urls {
		polls.Go(func() { pollReady(t, u, stop) })
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	prev := map[string]string{} // a stored response's id, by the replica that stored it
	begin := time.Now()
	for i := range 30 * 60 {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * time.Second / 30)))
		u, other := urls[i%3], urls[(i+1)%3]
		wg.Go(func() {
			body := `{"model":"smart","input":"turn ` + fmt.Sprint(i) + `","store":true`
			mu.Lock()
			if id := prev[other]; id != "" && i%2 == 0 {
				body += `,"previous_response_id":"` + id + `"`
			}
			mu.Unlock()
			path, hdr := "/v1/responses", ""
			if i%4 == 3 {
				path, hdr, body = "/v1/chat/completions", fmt.Sprintf("run-%d", i), `{"model":"smart","messages":[{"role":"user","content":"hi"}]`
			}
			req, _ := http.NewRequest("POST", u+path, strings.NewReader(body+"}"))
			if hdr != "" {
				req.Header.Set("Idempotency-Key", hdr)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("request %d to %s: %d %s", i, path, resp.StatusCode, b)
				return
			}
			var v struct{ ID string }
			if path == "/v1/responses" && json.Unmarshal(b, &v) == nil {
				mu.Lock()
				prev[u] = v.ID
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	polls.Wait()
	if n := strings.Count(logs.String(), "unreachable"); n > 0 {
		t.Errorf(`the replicas logged "unreachable" %d times on a healthy Redis`, n)
	}
}

// pollReady fails t for each /readyz of u, every 100 ms until stop, that
// does not answer 200 with the state shared.
func pollReady(t *testing.T, u string, stop chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		resp, err := http.Get(u + "/readyz")
		if err != nil {
			t.Errorf("readyz: %v", err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"state":"shared"`)) {
			t.Errorf("%s/readyz: %d %s", u, resp.StatusCode, b)
		}
	}
}

// twoTargets is a fleet's configuration: Redis, then two OpenAI-compatible
// providers.
const twoTargets = `
state: %s
providers:
  primary: {type: openai, base_url: "%s/v1", keys: [pk1, pk2]}
  secondary: {type: openai, base_url: "%s/v1", keys: [sk1]}
defaults:
  timeouts: {ttfb: 2s, idle: 5s, total: 60s}
models:
  - name: smart
    targets:
      - {provider: primary, model: gpt-4.1, price: {input: 2, output: 8}}
      - {provider: secondary, model: deepseek-chat, price: {input: 0.27, output: 1.1}}
    breaker: {consecutive: 3, open: 10s}
    retry: {attempts: 1}
`

// syncBuffer is a bytes.Buffer safe for the replicas' concurrent logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
