package gateway

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// A client that reads its stream slowly holds the gateway's writes, and so
// its reads of the upstream; that time is the client's, not the upstream's
// silence: the stream is not cut by its idle budget, and the target's
// breaker hears a success.
func TestSlowClientDoesNotTripTheUpstream(t *testing.T) {
	word := strings.Repeat("x", 4000)
	const events = 4000 // 16 MB: more than the sockets between hold
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		for range events {
			if _, err := io.WriteString(w, chunk(fmt.Sprintf(`{"content":%q}`, word))); err != nil {
				return
			}
		}
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})
	srv, gw := gateway(t, nil, silentLadder("{ttfb: 2s, idle: 200ms}", ""), p, newUpstream(t, chatOK("secondary")))
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(time.Second) // five idle budgets without reading a byte
	body, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(body), "data: [DONE]\n\n") || strings.Contains(string(body), "stream_interrupted") {
		t.Fatalf("%d bytes, %v; want the whole stream; ends %q", len(body), err, body[max(0, len(body)-300):])
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 0 || tot.Succeeded != 1 {
		t.Fatalf("primary's breaker %+v; want one success", tot)
	}
}

// A client that stops reading altogether is dropped after the server
// block's write_timeout: its exchange ends (no goroutine, no buffers held)
// and its upstream is not blamed.
func TestClientThatStopsReadingIsDropped(t *testing.T) {
	word := strings.Repeat("x", 4000)
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`))
		for range 4000 {
			if _, err := io.WriteString(w, chunk(fmt.Sprintf(`{"content":%q}`, word))); err != nil {
				return
			}
		}
	})
	var logs syncBuffer
	cfg := silentLadder("{ttfb: 2s, idle: 5s}", "") + "server: {write_timeout: 300ms}\n"
	srv, gw := start(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}, cfg, p, newUpstream(t, chatOK("secondary")))
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // never read
	eventually(t, "the exchange to end", func() bool { return strings.Contains(logs.String(), `"outcome":"canceled"`) })
	if tot := settled(t, srv, "primary/gpt-4.1", 1); tot.Failed != 0 {
		t.Fatalf("primary's breaker %+v; want no failure", tot)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
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
