package bedrock

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// canned answers every request at once, without a network, so a benchmark
// measures the upstream's own work.
type canned struct{ body []byte }

func (c canned) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c.body)), Request: req}, nil
}

func benchUpstream(b *testing.B, answer []byte) *Upstream {
	u, err := New(context.Background(), Config{Region: testRegion, AccessKeyID: testKeyID, SecretAccessKey: testSecret,
		SessionToken: "session-token", Transport: canned{answer}, Clock: clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))})
	if err != nil {
		b.Fatal(err)
	}
	return u
}

const benchChat = `{"model":"meta.llama3-70b-instruct-v1:0","messages":[{"role":"system","content":"You are terse."},` +
	`{"role":"user","content":"What is the capital of France? Answer in one word, and explain nothing at all."}],` +
	`"max_tokens":64,"temperature":0.2,"stream":false}`

// BenchmarkPost is one request sent and answered, signed with SigV4 or
// with a bearer API key (no signature): the difference is the signing
// cost per call, whose budget is 30 µs.
func BenchmarkPost(b *testing.B) {
	body := []byte(benchChat)
	for _, mode := range []struct{ name, key string }{{"sigv4", ""}, {"bearer", "bedrock-api-key"}} {
		b.Run(mode.name, func(b *testing.B) {
			u := benchUpstream(b, nil)
			c := &router.Call{Key: mode.key}
			p := u.paths.get("meta.llama3-70b-instruct-v1:0")
			b.ReportAllocs()
			for b.Loop() {
				resp, err := u.post(context.Background(), c, p.converse, body, false)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}

func BenchmarkTranslateConverse(b *testing.B) {
	body := []byte(benchChat)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := translateConverse(body, "meta.llama3-70b-instruct-v1:0"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConverseSend(b *testing.B) {
	u := benchUpstream(b, []byte(converseOK))
	c := &router.Call{Path: "/chat/completions", Model: "meta.llama3-70b-instruct-v1:0", Body: []byte(benchChat)}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := u.Send(context.Background(), c)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func BenchmarkConverseStreamTranslation(b *testing.B) {
	stream := converseStreamFrames(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		s := &converseSSE{src: io.NopCloser(nil), frames: newFrames(bytes.NewReader(stream)), tools: map[int]int{}, includeUsage: true}
		s.setPrefix("chatcmpl-1", "amazon.nova-pro-v1:0", 1)
		if _, err := io.Copy(io.Discard, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPostParallel(b *testing.B) {
	u := benchUpstream(b, nil)
	body := []byte(benchChat)
	p := u.paths.get("meta.llama3-70b-instruct-v1:0")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c := &router.Call{}
		for pb.Next() {
			resp, err := u.post(context.Background(), c, p.converse, body, false)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
}
