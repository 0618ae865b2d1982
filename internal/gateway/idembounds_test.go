package gateway

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// The idempotency records are bounded per client: one client flooding
// keys pushes out only its own oldest, another's answer is still replayed;
// a key is scoped to its endpoint; an overlong key is refused.
func TestIdempotencyIsBoundedPerClient(t *testing.T) {
	p := newUpstream(t, chatOK("up"))
	cfg := strings.Replace(oneTarget, "idempotency: {ttl: 1h}", "idempotency: {ttl: 1h, max_records: 5}", 1) +
		"clients:\n  - {name: a, key: ka}\n  - {name: b, key: kb}\n"
	_, gw := gateway(t, nil, cfg, p)
	send := func(path, client, key, body string) (int, http.Header) {
		req, _ := http.NewRequest("POST", gw.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+client)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	const chat = `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`
	send("/v1/chat/completions", "kb", "b-key", chat)
	for i := range 50 { // a floods
		send("/v1/chat/completions", "ka", "a-"+strconv.Itoa(i), chat)
	}
	if _, h := send("/v1/chat/completions", "kb", "b-key", chat); h.Get("X-Fusebox-Idempotent-Replay") != "true" {
		t.Error("b's answer was not replayed after a flooded the store")
	}
	if _, h := send("/v1/chat/completions", "ka", "a-49", chat); h.Get("X-Fusebox-Idempotent-Replay") != "true" {
		t.Error("a's newest answer was not replayed")
	}
	if _, h := send("/v1/chat/completions", "ka", "a-0", chat); h.Get("X-Fusebox-Idempotent-Replay") == "true" {
		t.Error("a's oldest answer is still kept beyond its bound of 5")
	}
	calls := p.calls()
	if code, h := send("/v1/embeddings", "kb", "b-key", `{"model":"smart","input":"hi"}`); code == http.StatusUnprocessableEntity || h.Get("X-Fusebox-Idempotent-Replay") == "true" {
		t.Errorf("the same key on another endpoint: %d, replay %q; want its own request", code, h.Get("X-Fusebox-Idempotent-Replay"))
	}
	if p.calls() != calls+1 {
		t.Error("the embeddings request did not reach the upstream")
	}
	if code, _ := send("/v1/chat/completions", "ka", strings.Repeat("k", 256), chat); code != http.StatusBadRequest {
		t.Errorf("a 256-byte key: %d; want 400", code)
	}
}
