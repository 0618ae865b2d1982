package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

const oneTarget = `
providers:
  up: {type: openai, base_url: "%s", keys: [k]}
idempotency: {ttl: 1h}
models:
  - name: smart
    targets: [{provider: up, model: m}]
    retry: {attempts: 1}
    breaker: {consecutive: 100}
`

func post(t *testing.T, base, key, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const hi = `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`

func TestIdempotentReplayAndConflict(t *testing.T) {
	clk := clocktest.New(time.Time{})
	up := newUpstream(t, counting)
	_, gw := start(t, Options{Clock: clockOf(clk)}, fmt.Sprintf(oneTarget, up.URL+"/v1"))
	code, h1, b1 := post(t, gw.URL, "order-42", hi)
	code2, h2, b2 := post(t, gw.URL, "order-42", hi)
	if code != 200 || code2 != 200 || b1 != b2 || up.calls() != 1 {
		t.Fatalf("replay: %d %d, same body %v, upstream calls %d", code, code2, b1 == b2, up.calls())
	}
	if h1.Get("X-Fusebox-Idempotent-Replay") != "" || h2.Get("X-Fusebox-Idempotent-Replay") != "true" {
		t.Fatalf("replay header: %q then %q", h1.Get("X-Fusebox-Idempotent-Replay"), h2.Get("X-Fusebox-Idempotent-Replay"))
	}
	if got := up.header(0).Get("Idempotency-Key"); !strings.HasPrefix(got, "order-42") {
		t.Fatalf("upstream key %q: want one derived from the client's", got)
	}
	code, _, body := post(t, gw.URL, "order-42", strings.Replace(hi, "hi", "hello", 1))
	if code != 422 || !strings.Contains(body, "different request body") {
		t.Fatalf("same key, other body: %d %s", code, body)
	}
	clk.Advance(time.Hour) // the record expires
	if _, _, b3 := post(t, gw.URL, "order-42", hi); b3 == b1 || up.calls() != 2 {
		t.Fatalf("after the TTL the request should run again (calls %d)", up.calls())
	}
}

// Concurrent duplicates wait for the first: one upstream call.
func TestIdempotentConcurrentDuplicatesWait(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		entered <- struct{}{}
		<-release
		counting(w, r, n)
	})
	_, gw := start(t, Options{}, fmt.Sprintf(oneTarget, up.URL+"/v1"))
	var wg sync.WaitGroup
	bodies := make([]string, 4)
	for i := range bodies {
		wg.Go(func() { _, _, bodies[i] = post(t, gw.URL, "dup", hi) })
	}
	<-entered
	close(release)
	wg.Wait()
	for i := range bodies {
		if bodies[i] != bodies[0] || !strings.Contains(bodies[0], "answer 1") {
			t.Fatalf("answers differ: %q vs %q", bodies[i], bodies[0])
		}
	}
	if up.calls() != 1 {
		t.Fatalf("%d upstream calls for 4 duplicates", up.calls())
	}
}

// A refusal is not kept: the same key succeeds once the upstream recovers.
// A streamed answer is kept as it was sent and replayed byte for byte.
func TestIdempotentRefusalNotStoredAndStreamReplay(t *testing.T) {
	up := newUpstream(t, status(503, "server_error"))
	_, gw := start(t, Options{}, fmt.Sprintf(oneTarget, up.URL+"/v1"))
	if code, _, _ := post(t, gw.URL, "k1", hi); code != 503 {
		t.Fatalf("first: %d", code)
	}
	up.set(counting)
	if code, _, body := post(t, gw.URL, "k1", hi); code != 200 || !strings.Contains(body, "answer 2") {
		t.Fatalf("after the refusal: %d %s", code, body)
	}
	stream := `{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	_, _, first := post(t, gw.URL, "k2", stream)
	_, h, again := post(t, gw.URL, "k2", stream)
	if h.Get("X-Fusebox-Idempotent-Replay") != "true" || again != first || !strings.HasSuffix(again, "data: [DONE]\n\n") {
		t.Fatalf("stream replay %v:\n%s\nwant the stream as sent:\n%s", h, again, first)
	}
	if !bytes.Contains([]byte(first), []byte("answer ")) || up.calls() != 3 {
		t.Fatalf("upstream calls %d", up.calls())
	}
}

// A stream longer than idempotency.max_bytes as sent is kept as its
// assembled completion when that fits, and replayed as a stream of it.
func TestIdempotentLongStreamKeptAssembled(t *testing.T) {
	up := newUpstream(t, counting)
	cfg := strings.Replace(fmt.Sprintf(oneTarget, up.URL+"/v1"), "idempotency: {ttl: 1h}", "idempotency: {ttl: 1h, max_bytes: 560}", 1)
	_, gw := start(t, Options{}, cfg)
	stream := `{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	_, _, first := post(t, gw.URL, "k", stream)
	_, h, again := post(t, gw.URL, "k", stream)
	if len(first) <= 560 {
		t.Fatalf("the stream is %d bytes; the test needs one longer than max_bytes", len(first))
	}
	if h.Get("X-Fusebox-Idempotent-Replay") != "true" || up.calls() != 1 || !strings.Contains(again, `"answer 1"`) || !strings.HasSuffix(again, "data: [DONE]\n\n") {
		t.Fatalf("replay %q after %d upstream calls:\n%s", h.Get("X-Fusebox-Idempotent-Replay"), up.calls(), again)
	}
}
