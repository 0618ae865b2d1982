package gateway

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reserve, then settle: 50 concurrent requests against a budget worth 3
// of them spend at most the budget plus one request's estimate, because
// each is admitted only while its most expensive outcome still fits.
func TestConcurrentRequestsCannotOverspendABudget(t *testing.T) {
	release := make(chan struct{})
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		<-release // all 50 are admitted or refused before any answers
		chatOK("primary")(w, r, n)
	})
	// Each answer costs 3 + 3 tokens at $2/$8 per Mtok = $0.00003; each
	// request reserves about $0.00006 (its ~20 prompt tokens and max_tokens
	// 3 at the dearest target's price). The budget: three reservations.
	cfg := "clients:\n  - {name: web, key: kw, budget: {daily: 0.0002}}\n" + twoTargets
	srv, gw := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	ok := burst(t, p, release, 50, gw.URL)
	spent := float64(ok) * 0.00003
	if ok == 0 || p.calls() != ok || spent > 0.0002+0.00007 {
		t.Fatalf("%d served, %d upstream calls, $%g spent; want at most the budget plus one estimate", ok, p.calls(), spent)
	}
	left := srv.budgetsLeft()[0].Daily
	if want := 0.0002 - spent; left < want-1e-12 || left > want+1e-12 {
		t.Errorf("budget left $%g; want $%g (every answer settled at its cost, reservations released)", left, want)
	}
}

// A stream that ends before its usage comes (a client that left, with no
// drain; a cut) is charged its reservation: nothing an upstream ran is
// free.
func TestStreamWithoutUsageIsChargedItsReservation(t *testing.T) {
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	p := newUpstream(t, streamOf([]string{"Hel", "lo"}, stall))
	cfg := "server: {usage_drain: 0s}\nclients:\n  - {name: web, key: kw, budget: {daily: 1}}\n" + twoTargets
	srv, gw := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", gw.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"smart","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer kw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	resp.Body.Read(buf) // the stream began
	cancel()            // and the client left before its usage came
	resp.Body.Close()
	// ~30 prompt tokens (the body) and 100 out at $2/$8 per Mtok.
	want := float64(len(`{"model":"smart","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}`)/4)*2/1e6 + 100*8/1e6
	eventually(t, "the reservation charged", func() bool {
		left := srv.budgetsLeft()[0].Daily
		return left < 1-want*0.5
	})
	if left := srv.budgetsLeft()[0].Daily; 1-left > want*1.5 {
		t.Errorf("charged $%s; want about the reservation, $%s", strconv.FormatFloat(1-left, 'g', 3, 64), strconv.FormatFloat(want, 'g', 3, 64))
	}
}

// A client that sends stream_options with include_usage: false still has
// its stream priced: the gateway asks the upstream for the usage and keeps
// the usage chunk from the client, as it asked.
func TestStreamCannotBeMadeFreeWithIncludeUsageFalse(t *testing.T) {
	var sent string
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":"hi"}`))
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})
	cfg := "clients:\n  - {name: web, key: kw, budget: {daily: 1}}\n" + twoTargets
	srv, gw := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"smart","stream":true,"stream_options":{"include_usage":false},"max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer kw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sent = p.bodies[0]
	if !strings.Contains(sent, `"include_usage":true`) {
		t.Errorf("upstream was sent %s; want include_usage true", sent)
	}
	if strings.Contains(string(b), `"usage"`) {
		t.Errorf("the client, which asked for no usage, got the usage chunk:\n%s", b)
	}
	// 3 + 3 tokens at $2/$8 per Mtok.
	if left := srv.budgetsLeft()[0].Daily; 1-left < 0.00003-1e-12 || 1-left > 0.00003+1e-12 {
		t.Errorf("charged $%g; want $0.00003", 1-left)
	}
}

// A target's tpm reservation is corrected from the answer's usage: a
// request that reserved for its max_tokens and used six tokens leaves room
// for the next.
func TestTargetTPMIsSettledFromUsage(t *testing.T) {
	p := newUpstream(t, chatOK("primary")) // 3 + 3 tokens
	cfg := strings.Replace(twoTargets, `keys: [pk1, pk2]}`, `keys: [pk1], limits: {tpm: 6000, max_wait: 10ms}}`, 1)
	_, gw := gateway(t, nil, cfg, p, newUpstream(t, chatOK("secondary")))
	for i := range 3 {
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"smart","max_tokens":500,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Fusebox-Target"); got != "primary/gpt-4.1" {
			t.Fatalf("request %d served by %q (tried %q); want the primary: its tpm settled at the 6 tokens used",
				i+1, got, resp.Header.Get("X-Fusebox-Tried"))
		}
	}
}

// burst sends n budgeted chat completions at once, spread over the
// gateways at urls in turn, to an upstream p that holds each until
// release: it waits until every request is either held at p (admitted) or
// answered (refused), lets the admitted go, and returns how many got a
// 200.
func burst(t *testing.T, p *upstream, release chan struct{}, n int, urls ...string) int {
	t.Helper()
	var wg sync.WaitGroup
	codes := make(chan int, n)
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", urls[i%len(urls)]+"/v1/chat/completions",
				strings.NewReader(burstBody))
			req.Header.Set("Authorization", "Bearer kw")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	refused := 0
	for refused+p.calls() < n {
		select {
		case <-codes:
			refused++
		case <-time.After(time.Millisecond): // an admitted one may be on its way
		}
	}
	close(release)
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		if c == 200 {
			ok++
		}
	}
	return ok
}
