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
)

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
