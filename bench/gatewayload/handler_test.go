package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
)

// BenchmarkHandler times the gateway's handler path without any network:
// the gateway is built in process over instantUpstream, a RoundTripper that
// answers at once with the same fixed completion or stream as the load
// run's upstream, and each op is one ServeHTTP into an httptest recorder.
// The "direct" sub-benchmarks call instantUpstream themselves with the same
// request and read the answer the same way, so fusebox minus direct is what
// the handler adds per request, in time and in allocations.
func BenchmarkHandler(b *testing.B) {
	for _, stream := range []bool{false, true} {
		mode := "json"
		if stream {
			mode = "stream"
		}
		b.Run(mode+"/direct", func(b *testing.B) { benchDirect(b, stream) })
		b.Run(mode+"/fusebox", func(b *testing.B) { benchFusebox(b, stream) })
	}
}

// BenchmarkHandlerParallel is BenchmarkHandler/*/fusebox from GOMAXPROCS
// goroutines, to show contention in the shared state (breaker, health
// figures, key rotation).
func BenchmarkHandlerParallel(b *testing.B) {
	for _, stream := range []bool{false, true} {
		mode := "json"
		if stream {
			mode = "stream"
		}
		b.Run(mode, func(b *testing.B) {
			h := newHandler(b)
			body := requestBody("fast", stream)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := serveOnce(h, body, stream); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func benchDirect(b *testing.B, stream bool) {
	body := requestBody("m", stream)
	rt := instantUpstream{}
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		io.Copy(rec, resp.Body)
		resp.Body.Close()
		if err := checkAnswer(resp.StatusCode, rec.Body.Bytes(), stream); err != nil {
			b.Fatal(err)
		}
	}
}

func benchFusebox(b *testing.B, stream bool) {
	h := newHandler(b)
	body := requestBody("fast", stream)
	b.ReportAllocs()
	for b.Loop() {
		if err := serveOnce(h, body, stream); err != nil {
			b.Fatal(err)
		}
	}
}

// newHandler builds the gateway in process with the load run's config,
// its upstream reached through instantUpstream.
func newHandler(b *testing.B) http.Handler {
	b.Helper()
	cfg, err := config.Parse("gatewayload.yaml", []byte(fuseboxConfig(8080, "http://upstream.invalid/v1")), nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := gateway.New(gateway.Options{Config: cfg, Transport: instantUpstream{}})
	if err != nil {
		b.Fatal(err)
	}
	return srv.Handler()
}

// serveOnce sends one chat request through h and checks the answer, so a
// misconfigured gateway fails the benchmark instead of timing an error.
func serveOnce(h http.Handler, body []byte, stream bool) error {
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer k")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return checkAnswer(rec.Code, rec.Body.Bytes(), stream)
}

func checkAnswer(code int, body []byte, stream bool) error {
	want := completionJSON
	if stream {
		want = streamBody
	}
	if code != http.StatusOK || !bytes.Equal(body, want) {
		return &answerError{code, body}
	}
	return nil
}

type answerError struct {
	code int
	body []byte
}

func (e *answerError) Error() string {
	return "status " + strconv.Itoa(e.code) + ", not the upstream's answer: " + string(e.body)
}

// instantUpstream is the fast upstream as an in-process RoundTripper: it
// reads the request body and answers at once.
type instantUpstream struct{}

func (instantUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	out, ctype := completionJSON, "application/json"
	if isStream(body) {
		out, ctype = streamBody, "text/event-stream"
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {ctype}},
		Body:          io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)),
		Request:       req,
	}, nil
}
