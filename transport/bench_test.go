package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// canned is a base RoundTripper that answers at once without a network, so
// the benchmark measures the transport's own work.
type canned struct{}

const cannedBody = `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`

func (canned) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(cannedBody)),
		ContentLength: int64(len(cannedBody)),
		Request:       req,
	}, nil
}

const benchBody = `{"model":"gpt-4.1","messages":[{"role":"user","content":"Say hello in one word."}],"max_tokens":16}`

func benchRequest(b *testing.B, url string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(benchBody))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test")
	req.Header.Set("Idempotency-Key", "bench") // the SDKs set one; the transport keeps it
	return req
}

func roundTrip(b *testing.B, rt http.RoundTripper, url string) {
	req := benchRequest(b, url)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// BenchmarkOverhead compares a successful request sent by the base
// RoundTripper alone with the same request through the Transport (breaker,
// classification, body replay buffer, one endpoint), with no network in
// the way: the difference is the transport's cost per request.
func BenchmarkOverhead(b *testing.B) {
	const url = "https://api.example.test/v1/chat/completions"
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			roundTrip(b, canned{}, url)
		}
	})
	b.Run("transport", func(b *testing.B) {
		rt, err := New(Config{Base: canned{}, Endpoints: []Endpoint{{BaseURL: "https://api.example.test/v1"}}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			roundTrip(b, rt, url)
		}
	})
	b.Run("transport-limits", func(b *testing.B) {
		rt, err := New(Config{Base: canned{}, Endpoints: []Endpoint{{BaseURL: "https://api.example.test/v1"}},
			Limits: Limits{RequestsPerMinute: 1e12, TokensPerMinute: 1e15, MaxInFlight: 1 << 20}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			roundTrip(b, rt, url)
		}
	})
}

// BenchmarkLoopback is the same over real HTTP to a local server, for
// scale: the transport's cost next to a loopback round trip.
func BenchmarkLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, cannedBody)
	}))
	defer srv.Close()
	base := srv.Client().Transport
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			roundTrip(b, base, srv.URL+"/v1/chat/completions")
		}
	})
	b.Run("transport", func(b *testing.B) {
		rt, err := New(Config{Base: base, Endpoints: []Endpoint{{BaseURL: srv.URL + "/v1"}}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			roundTrip(b, rt, srv.URL+"/v1/chat/completions")
		}
	})
}
