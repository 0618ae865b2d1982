package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/redistest"
)

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
	up := newUpstream(t, chatOK("up"))
	cfg := "state: " + redistest.Start(t).URL() + "\n" + twoTargets
	var logs bytes.Buffer
	sw := &syncWriter{w: &logs}
	log := slog.New(slog.NewTextHandler(sw, nil))
	var urls []string
	for range 3 {
		_, g := gatewayWithLog(t, log, cfg, up, up)
		urls = append(urls, g.URL)
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
	sw.mu.Lock()
	n := strings.Count(logs.String(), "unreachable")
	sw.mu.Unlock()
	if n > 0 {
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
