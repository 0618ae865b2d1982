package gateway

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// usageStream streams two words and, when the request asks for it, the
// usage chunk include_usage adds (no choices, 5 + 7 tokens).
func usageStream(w http.ResponseWriter, r *http.Request, n int, body string) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, chunk(`{"role":"assistant","content":"Hel"}`))
	io.WriteString(w, chunk(`{"content":"lo"}`))
	if strings.Contains(body, `"include_usage":true`) {
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`+"\n\n")
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// A streamed answer is priced even when the client did not ask for its
// usage: the gateway asks the upstream for it, counts it against the
// client's budget and sends the cost as a trailer, and the client's stream
// has no usage chunk it did not ask for. A client that asked gets it.
func TestStreamsArePricedWithoutAskingForUsage(t *testing.T) {
	var p *upstream
	p = newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		p.mu.Lock()
		body := p.bodies[n-1]
		p.mu.Unlock()
		usageStream(w, r, n, body)
	})
	_, gw := gateway(t, nil, "clients:\n  - {name: web, key: kw, budget: {daily: 1}}\n"+twoTargets, p, newUpstream(t, chatOK("s")))

	c := newClient(gw.URL, option.WithAPIKey("kw"))
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	var text strings.Builder
	for st.Next() {
		ch := st.Current()
		if len(ch.Choices) == 0 || ch.Usage.TotalTokens != 0 {
			t.Fatalf("the client got a usage chunk it did not ask for: %s", ch.RawJSON())
		}
		text.WriteString(ch.Choices[0].Delta.Content)
	}
	if st.Err() != nil || text.String() != "Hello" {
		t.Fatalf("%q %v", text.String(), st.Err())
	}
	if !strings.Contains(p.bodies[0], `"stream_options":{"include_usage":true}`) {
		t.Fatalf("upstream body %s", p.bodies[0])
	}
	// 5 in at $2/M + 7 out at $8/M = $0.000066.
	eventually(t, "the stream's cost in the metrics", func() bool {
		return strings.Contains(scrape(t, gw.URL), `fusebox_client_cost_usd_total{client="web"} 6.6e-05`)
	})

	// The cost trailer, read with a plain client.
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer kw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, bufio.NewReader(resp.Body))
	resp.Body.Close()
	if got := resp.Trailer.Get("X-Fusebox-Cost"); got != "0.000066" {
		t.Fatalf("cost trailer %q, want 0.000066 (trailers %v)", got, resp.Trailer)
	}

	// A client that asks for usage gets the chunk.
	pr := params("smart")
	pr.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st = c.Chat.Completions.NewStreaming(t.Context(), pr)
	var usage int64
	for st.Next() {
		usage += st.Current().Usage.TotalTokens
	}
	if st.Err() != nil || usage != 12 {
		t.Fatalf("usage %d, %v", usage, st.Err())
	}
}
