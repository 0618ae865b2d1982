package gateway

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// Every answer says how it was served, a cache hit too: the target that
// made it, no attempts, no cost, and the gateway's own time; streamed as
// headers, since nothing is left to learn at the end. A stale answer
// after an outage counts the attempts the walk made.
func TestCachedAnswersSayHowTheyWereServed(t *testing.T) {
	clk := clocktest.New(time.Time{})
	up := newUpstream(t, counting)
	base := cachedGateway(t, clk, "client", up)
	post := func(body string) http.Header {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer key-alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", body, resp.StatusCode)
		}
		for k, v := range resp.Trailer {
			resp.Header[k] = v
		}
		return resp.Header
	}
	for _, body := range []string{`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"smart","stream":true,"messages":[{"role":"user","content":"hello"}]}`} {
		miss := post(body)
		hit := post(body)
		if miss.Get("X-Fusebox-Cache") != "miss" || miss.Get("X-Fusebox-Attempts") != "1" {
			t.Errorf("%s: the miss said %v", body, miss)
		}
		if hit.Get("X-Fusebox-Cache") != "hit" || hit.Get("X-Fusebox-Attempts") != "0" || hit.Get("X-Fusebox-Cost") != "0" ||
			hit.Get("X-Fusebox-Target") != "up/m" || hit.Get("X-Fusebox-Tried") != "none" {
			t.Errorf("%s: the hit said %v; want cache hit, 0 attempts, cost 0, the target that made it", body, hit)
		}
		if us, err := strconv.ParseInt(hit.Get("X-Fusebox-Overhead-Us"), 10, 64); err != nil || us < 0 {
			t.Errorf("%s: the hit's overhead %q", body, hit.Get("X-Fusebox-Overhead-Us"))
		}
	}
	up.set(status(503, "server_error"))
	clk.Advance(30 * time.Minute) // expired, within stale_for
	stale := post(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`)
	if stale.Get("X-Fusebox-Cache") != "stale" || stale.Get("X-Fusebox-Attempts") != "1" || stale.Get("X-Fusebox-Cost") != "0" || stale.Get("X-Fusebox-Overhead-Us") == "" {
		t.Errorf("the stale answer said %v; want the walk's one attempt, cost 0", stale)
	}
}
