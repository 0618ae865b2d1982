package main

import (
	"bytes"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/jsonlog"
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
	b.ReportAllocs()
	for b.Loop() {
		if err := directOnce(body, stream); err != nil {
			b.Fatal(err)
		}
	}
}

// directOnce sends one chat request to instantUpstream itself and reads
// the answer as serveOnce does.
func directOnce(body []byte, stream bool) error {
	req, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer k")
	resp, err := instantUpstream{}.RoundTrip(req)
	if err != nil {
		return err
	}
	rec := httptest.NewRecorder()
	io.Copy(rec, resp.Body)
	resp.Body.Close()
	return checkAnswer(resp.StatusCode, rec.Body.Bytes(), stream)
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
// its upstream reached through instantUpstream, with its metrics and its
// JSON access log (rendered as fusebox serve renders it, then discarded).
func newHandler(b *testing.B) http.Handler {
	return newHandlerWith(b, true, true)
}

// newHandlerWith is newHandler with metrics and the access log each on or
// off; off, the log's handler drops records before encoding them.
func newHandlerWith(b *testing.B, metrics, logs bool) http.Handler {
	return newGateway(b, "http://upstream.invalid/v1", instantUpstream{}, metrics, logs)
}

// newGateway builds the gateway in process in front of upstream, reached
// through transport (nil: the gateway's own), with metrics and the access
// log each on or off.
func newGateway(b *testing.B, upstream string, transport http.RoundTripper, metrics, logs bool) http.Handler {
	b.Helper()
	cfg, err := config.Parse("gatewayload.yaml", []byte(fuseboxConfig(8080, upstream)), nil)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if logs {
		log = slog.New(jsonlog.NewHandler(io.Discard, nil)) // as fusebox serve logs, less the write
	}
	srv, err := gateway.New(gateway.Options{Config: cfg, Transport: transport, Logger: log, NoMetrics: !metrics})
	if err != nil {
		b.Fatal(err)
	}
	return srv.Handler()
}

// BenchmarkTelemetry measures what the metrics and the access log add to
// the gateway's per-request overhead. Each iteration sends one request
// directly and one through each of four gateways (bare, metrics only, log
// only, both), timing each, so drift on a shared machine hits all of them
// alike. It reports the mean time of each per request and
// telemetry-% = (both − bare) / (both − direct): the share of the
// gateway's overhead that is metrics and logging.
//
// The inproc sub-benchmarks call the handler with no network, as
// BenchmarkHandler does, so the overhead is the handler's own work; the
// loopback ones go over HTTP on loopback (client, gateway and upstream in
// this process, the gateway with its own upstream transport), so the
// overhead is what a gateway hop costs a request in service.
func BenchmarkTelemetry(b *testing.B) {
	for _, stream := range []bool{false, true} {
		mode := "json"
		if stream {
			mode = "stream"
		}
		b.Run("inproc/"+mode, func(b *testing.B) {
			send := func(h http.Handler) func(body []byte) error {
				return func(body []byte) error { return serveOnce(h, body, stream) }
			}
			benchTelemetry(b, stream, func(body []byte) error { return directOnce(body, stream) }, func(metrics, logs bool) func([]byte) error {
				return send(newHandlerWith(b, metrics, logs))
			})
		})
		b.Run("loopback/"+mode, func(b *testing.B) {
			up, err := startUpstream()
			if err != nil {
				b.Fatal(err)
			}
			defer up.close()
			client := newClient(8)
			defer client.CloseIdleConnections()
			post := func(url string) func([]byte) error {
				return func(body []byte) error { return postOnce(client, url, body, stream) }
			}
			var servers []*httptest.Server
			defer func() {
				for _, s := range servers {
					s.Close()
				}
			}()
			benchTelemetry(b, stream, post(up.baseURL()+"/chat/completions"), func(metrics, logs bool) func([]byte) error {
				s := httptest.NewServer(newGateway(b, up.baseURL(), nil, metrics, logs))
				servers = append(servers, s)
				return post(s.URL + "/v1/chat/completions")
			})
		})
	}
}

// benchTelemetry runs BenchmarkTelemetry's interleaved loop: direct sends
// straight to the upstream, gateway builds a sender through a gateway with
// metrics and logs on or off.
func benchTelemetry(b *testing.B, stream bool, direct func([]byte) error, gateway func(metrics, logs bool) func([]byte) error) {
	variants := []struct {
		name string
		send func([]byte) error
		sum  time.Duration
	}{
		{name: "bare", send: gateway(false, false)},
		{name: "metrics", send: gateway(true, false)},
		{name: "logs", send: gateway(false, true)},
		{name: "both", send: gateway(true, true)},
	}
	body, directBody := requestBody("fast", stream), requestBody("m", stream)
	var directSum time.Duration
	// Each iteration takes the variants in a new random order, so that no
	// variant always follows another (a warm cache, a pending GC).
	order := []int{0, 1, 2, 3}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := direct(directBody); err != nil {
			b.Fatal(err)
		}
		directSum += time.Since(start)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			start := time.Now()
			if err := variants[i].send(body); err != nil {
				b.Fatal(err)
			}
			variants[i].sum += time.Since(start)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	for _, v := range variants {
		b.ReportMetric(per(v.sum), v.name+"-ns/req")
	}
	b.ReportMetric(per(directSum), "direct-ns/req")
	both, bare := per(variants[3].sum), per(variants[0].sum)
	b.ReportMetric(100*(both-bare)/(both-per(directSum)), "telemetry-%")
}

// postOnce sends one chat request over HTTP and checks the answer.
func postOnce(c *http.Client, url string, body []byte, stream bool) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer k")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return checkAnswer(resp.StatusCode, got, stream)
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
