package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strings"
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
