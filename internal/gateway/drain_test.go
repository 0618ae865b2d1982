package gateway

import (
	"context"
	"fmt"
	"github.com/fuseboxhq/fusebox/internal/config"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// drainCfg is a budgeted client on twoTargets, the gateway's default
// usage_drain (5s) in force.
const drainCfg = "clients:\n  - {name: web, key: kw, budget: {daily: 1}}\n" + twoTargets

// usageCost is the price of usage 5 + 7 tokens at the primary's $2/$8 per
// Mtok.
const usageCost = 5*2/1e6 + 7*8/1e6

// releasedStream streams "Hel", waits for release (or its request's end),
// then finishes: "lo", a finish_reason, the usage chunk (5 + 7) and
// [DONE]. It closes canceled when its request was canceled instead.
func releasedStream(release <-chan struct{}, canceled chan<- struct{}) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":"Hel"}`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			close(canceled)
			return
		}
		io.WriteString(w, chunk(`{"content":"lo"}`))
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// leaveAfter sends a budgeted streamed request, reads until the stream
// has begun, and leaves (cancels and closes); it returns once the gateway
// has handled the leaving, reporting whether it drains.
func leaveAfter(t *testing.T, srv *Server, base, body, seen string) bool {
	t.Helper()
	handled := make(chan bool, 1)
	srv.testHookLeft = func(draining bool) { handled <- draining }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer kw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	buf := make([]byte, 256)
	for !strings.Contains(got.String(), seen) {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("the stream ended before %q: %v\n%s", seen, err, got.String())
		}
	}
	cancel()
	resp.Body.Close()
	select {
	case draining := <-handled:
		return draining
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway never saw its client leave")
	}
	return false
}

// spent returns what the client of drainCfg has spent today.
func spent(srv *Server) float64 { return 1 - srv.budgetsLeft()[0].Daily }

// A client that leaves in the middle of a stream is charged what the
// upstream reports: the gateway reads the rest of the stream (sending it
// to nobody) for its usage chunk, and the upstream is not cut off.
func TestClientThatLeavesIsChargedTheUpstreamsUsage(t *testing.T) {
	release, canceled := make(chan struct{}), make(chan struct{})
	p := newUpstream(t, releasedStream(release, canceled))
	srv, gw := gateway(t, clocktest.New(time.Unix(1e9, 0)), drainCfg, p, newUpstream(t, chatOK("s")))
	body := `{"model":"smart","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`
	if !leaveAfter(t, srv, gw.URL, body, "Hel") {
		t.Fatal("the gateway did not drain a stream it was relaying")
	}
	close(release) // the upstream finishes after its client left
	eventually(t, "the stream's usage charged", func() bool { return spent(srv) > 0 })
	if got := spent(srv); got < usageCost-1e-12 || got > usageCost+1e-12 {
		t.Errorf("charged $%g; want the upstream's usage, $%g (not the reservation)", got, usageCost)
	}
	select {
	case <-canceled:
		t.Error("the upstream was canceled while its answer was drained")
	default:
	}
}

// A stream that does not finish within usage_drain after its client left
// is canceled at the upstream and charged its reservation.
func TestDrainIsBounded(t *testing.T) {
	release, canceled := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	p := newUpstream(t, releasedStream(release, canceled))
	clk := clocktest.New(time.Unix(1e9, 0))
	// An idle budget past the drain's: a silence of 5s is not the
	// upstream's stall here.
	cfg := strings.Replace(drainCfg, "idle: 5s", "idle: 30s", 1)
	srv, gw := gateway(t, clk, cfg, p, newUpstream(t, chatOK("s")))
	body := `{"model":"smart","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`
	if !leaveAfter(t, srv, gw.URL, body, "Hel") {
		t.Fatal("the gateway did not drain a stream it was relaying")
	}
	clk.Advance(4 * time.Second)
	select {
	case <-canceled:
		t.Fatal("the upstream was canceled before usage_drain (5s) had passed")
	default:
	}
	clk.Advance(time.Second)
	select {
	case <-canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream was still held after usage_drain")
	}
	want := float64(len(body)/4)*2/1e6 + 100*8/1e6 // the client's body, 100 out
	eventually(t, "the reservation charged", func() bool { return spent(srv) > 0 })
	if got := spent(srv); got < want-1e-12 || got > want+1e-12 {
		t.Errorf("charged $%g; want the reservation, $%g", got, want)
	}
	for _, line := range strings.Split(scrape(t, gw.URL), "\n") {
		if strings.HasPrefix(line, `fusebox_breaker_calls_total{outcome="failed",target="primary/gpt-4.1"}`) && !strings.HasSuffix(line, " 0") {
			t.Errorf("the drained upstream was blamed: %s", line)
		}
	}
}

// A non-streamed answer still arriving when its client leaves is read to
// its end and charged its usage.
func TestClientThatLeavesAPlainAnswerIsChargedItsUsage(t *testing.T) {
	release := make(chan struct{})
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",`)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`)
	})
	srv, gw := gateway(t, clocktest.New(time.Unix(1e9, 0)), drainCfg, p, newUpstream(t, chatOK("s")))
	held, handled := make(chan struct{}, 1), make(chan bool, 1)
	srv.testHookHeld = func() { held <- struct{}{} }
	srv.testHookLeft = func(draining bool) { handled <- draining }
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", gw.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"smart","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer kw")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-held // the gateway reads the answer's body
	cancel()
	<-done
	if !<-handled {
		t.Fatal("the gateway did not drain a plain answer it was reading")
	}
	close(release)
	eventually(t, "the answer's usage charged", func() bool { return spent(srv) > 0 })
	if got := spent(srv); got < usageCost-1e-12 || got > usageCost+1e-12 {
		t.Errorf("charged $%g; want the upstream's usage, $%g", got, usageCost)
	}
}

// With usage_drain: 0s, a client's leaving cancels its upstream at once.
func TestNoDrainCancelsAtOnce(t *testing.T) {
	release, canceled := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	p := newUpstream(t, releasedStream(release, canceled))
	srv, gw := gateway(t, clocktest.New(time.Unix(1e9, 0)), "server: {usage_drain: 0s}\n"+drainCfg, p, newUpstream(t, chatOK("s")))
	body := `{"model":"smart","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`
	handled := make(chan bool, 1)
	srv.testHookLeft = func(draining bool) { handled <- draining }
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", gw.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer kw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 64))
	cancel()
	resp.Body.Close()
	select {
	case <-canceled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream was not canceled when its client left")
	}
	select {
	case <-handled:
		t.Error("an exchange without usage_drain handled a drain")
	default:
	}
}

// The drain's context: the client's leaving ends it at once unless an
// answer is held, then after the bound; an answer let go after the client
// left ends it; end releases everything.
func TestDrainContext(t *testing.T) {
	clk := clocktest.New(time.Unix(1e9, 0))
	handled := make(chan bool, 1)
	s := &Server{clk: clk, testHookLeft: func(draining bool) { handled <- draining }}
	for _, tc := range []struct {
		name string
		run  func(d *drain, leave func())
		live bool
	}{
		{"left while nothing held", func(d *drain, leave func()) { leave() }, false},
		{"left while held", func(d *drain, leave func()) { d.hold(true); leave() }, true},
		{"held, left, bound passed", func(d *drain, leave func()) {
			d.hold(true)
			leave()
			clk.Advance(5 * time.Second)
		}, false},
		{"held, left, let go", func(d *drain, leave func()) { d.hold(true); leave(); d.hold(false) }, false},
		{"a failed write while held", func(d *drain, leave func()) { d.hold(true); d.leaving() }, true},
		{"held and let go, client still here", func(d *drain, leave func()) { d.hold(true); d.hold(false) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, cancel := context.WithCancel(context.Background())
			defer cancel()
			d := s.newDrain(parent, 5*time.Second)
			leave := func() { cancel(); <-handled } // the client's context ends; the drain hears it
			tc.run(d, leave)
			select {
			case <-handled: // leaving() told it directly
			default:
			}
			if live := d.ctx.Err() == nil; live != tc.live {
				t.Fatalf("drain context live = %v, want %v", live, tc.live)
			}
			d.end()
			if d.ctx.Err() == nil {
				t.Fatal("end left the context live")
			}
			if n := clk.Pending(); n != 0 {
				t.Fatalf("%d timers left after end", n)
			}
		})
	}
	if s.newDrain(context.Background(), 0) != nil {
		t.Fatal("usage_drain 0 made a drain")
	}
}

// BenchmarkBudgetedRequest is a budgeted client's chat completion through
// the handler to a loopback upstream, with and without usage_drain: what
// watching for the client's leaving costs a request.
func BenchmarkBudgetedRequest(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { chatOK("up")(w, r, 1) }))
	defer up.Close()
	for _, drain := range []string{"5s", "0s"} {
		for _, stream := range []bool{false, true} {
			b.Run(fmt.Sprintf("drain=%s/stream=%v", drain, stream), func(b *testing.B) {
				up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { chatOK("up")(w, r, 1) })
				if stream {
					up.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { usageStream(w, r, 1, `"include_usage":true`) })
				}
				cfg, err := config.Parse("b.yaml", []byte(fmt.Sprintf(`server: {usage_drain: %s}
clients:
  - {name: web, key: kw, budget: {daily: 1000000}}
providers:
  up: {type: openai, base_url: "%s/v1", keys: [k]}
models:
  - {name: smart, targets: [{provider: up, model: m, price: {input: 1, output: 1}}]}
`, drain, up.URL)), func(string) (string, bool) { return "", false })
				if err != nil {
					b.Fatal(err)
				}
				s, err := New(Options{Config: cfg, NoMetrics: true, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					b.Fatal(err)
				}
				h := s.Handler()
				body := `{"model":"smart","messages":[{"role":"user","content":"hi"}],"stream":` + fmt.Sprint(stream) + `}`
				b.ReportAllocs()
				for b.Loop() {
					rec := httptest.NewRecorder()
					req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer kw")
					h.ServeHTTP(rec, req)
					if rec.Code != 200 {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
				}
			})
		}
	}
}
