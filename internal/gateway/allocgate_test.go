package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// The allocation gate: what a request allocates through the handler, in
// count and bytes, for each kind of request the gateway serves most, held
// under committed ceilings. Unlike time, allocations do not vary with the
// machine's load, so the gate decides on a busy machine too. A change that
// adds an allocation to one of these paths fails here until it raises the
// ceiling in the same commit, on purpose; one that saves some should lower
// it (the test says so).
//
// The upstream answers in process (a RoundTripper, no sockets), so only
// the gateway's own work is counted, with the recorder and request that
// every case shares. Run it alone with
//
//	go test -run TestAllocationGate -count=1 ./internal/gateway
//
// (.ci/run does, without -race, whose instrumentation allocates).
var allocCeilings = []struct {
	name string
	// allocs is the most allocations a request may make; bytes the most
	// bytes, with a little room for maps and slices that grow by doubling.
	allocs, bytes int
}{
	{"json", 52, 12300},
	{"stream", 73, 17400},
	{"budgeted", 63, 13400},
	{"cached", 38, 9500},
	{"translated", 125, 16500},
	{"translated-stream", 201, 29400},
}

// allocCase is one kind of request of the gate.
type allocCase struct {
	config, path, body, auth string
	stream                   bool
	answer                   func(r *http.Request) *http.Response
}

func allocCases() map[string]allocCase {
	chat := `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`
	chatStream := `{"model":"smart","messages":[{"role":"user","content":"hi"}],"stream":true}`
	openaiUp := `providers:
  up: {type: openai, base_url: "http://up.invalid/v1", keys: [k]}
`
	return map[string]allocCase{
		"json": {config: openaiUp + `models:
  - {name: smart, targets: [{provider: up, model: m, price: {input: 1, output: 1}}]}
`, path: "/v1/chat/completions", body: chat, answer: chatAnswer},
		"stream": {config: openaiUp + `models:
  - {name: smart, targets: [{provider: up, model: m, price: {input: 1, output: 1}}]}
`, path: "/v1/chat/completions", body: chatStream, stream: true, answer: chatStreamAnswer},
		"budgeted": {config: `server: {usage_drain: 5s}
clients:
  - {name: web, key: kw, budget: {daily: 1000000}}
` + openaiUp + `models:
  - {name: smart, targets: [{provider: up, model: m, price: {input: 1, output: 1}}]}
`, path: "/v1/chat/completions", body: chat, auth: "Bearer kw", answer: chatAnswer},
		"cached": {config: openaiUp + `models:
  - {name: smart, targets: [{provider: up, model: m}], cache: {ttl: 1h}}
`, path: "/v1/chat/completions", body: chat, answer: chatAnswer},
		"translated": {config: `providers:
  up: {type: anthropic, base_url: "http://up.invalid", keys: [k]}
models:
  - {name: smart, targets: [{provider: up, model: claude-sonnet-4-5, price: {input: 1, output: 1}}]}
`, path: "/v1/chat/completions", body: chat, answer: messagesAnswer},
		"translated-stream": {config: `providers:
  up: {type: anthropic, base_url: "http://up.invalid", keys: [k]}
models:
  - {name: smart, targets: [{provider: up, model: claude-sonnet-4-5, price: {input: 1, output: 1}}]}
`, path: "/v1/chat/completions", body: chatStream, stream: true, answer: messagesStreamAnswer},
	}
}

// answerFunc is an upstream in the process.
type answerFunc func(r *http.Request) *http.Response

func (f answerFunc) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return f(r), nil
}

func answer(r *http.Request, contentType, body string) *http.Response {
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: -1, Request: r}
}

func chatAnswer(r *http.Request) *http.Response {
	return answer(r, "application/json", `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hello from up"},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`)
}

func chatStreamAnswer(r *http.Request) *http.Response {
	return answer(r, "text/event-stream", chunk(`{"role":"assistant","content":""}`)+chunk(`{"content":"Hel"}`)+chunk(`{"content":"lo"}`)+
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"+
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n"+
		"data: [DONE]\n\n")
}

func messagesAnswer(r *http.Request) *http.Response {
	return answer(r, "application/json", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",`+
		`"content":[{"type":"text","text":"hello from up"}],"stop_reason":"end_turn","stop_sequence":null,`+
		`"usage":{"input_tokens":3,"output_tokens":3}}`)
}

func messagesStreamAnswer(r *http.Request) *http.Response {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	return answer(r, "text/event-stream",
		ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}`)+
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)+
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`)+
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`)+
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)+
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`)+
			ev("message_stop", `{"type":"message_stop"}`))
}

// allocServer is a gateway for one case, and a function that sends it one
// request and checks the answer.
func allocServer(tb testing.TB, c allocCase) func() {
	tb.Helper()
	cfg, err := config.Parse("gate.yaml", []byte(c.config), func(string) (string, bool) { return "", false })
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(Options{Config: cfg, NoMetrics: true, Logger: slog.New(slog.DiscardHandler), Transport: answerFunc(c.answer)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	h := s.Handler()
	body := []byte(c.body)
	return func() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, c.path, bytes.NewReader(body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || (c.stream && !strings.Contains(rec.Body.String(), "[DONE]")) {
			tb.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

// measure returns the allocations and bytes of one call of f, averaged
// over runs after a warm-up.
func measure(f func(), runs int) (allocs, bytes float64) {
	for range 20 {
		f()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs), float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}

func TestAllocationGate(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's instrumentation allocates; .ci/run runs the gate without -race")
	}
	cases := allocCases()
	for _, ceil := range allocCeilings {
		t.Run(ceil.name, func(t *testing.T) {
			serve := allocServer(t, cases[ceil.name])
			allocs, bytes := measure(serve, 400)
			t.Logf("%s: %.1f allocs, %.0f bytes per request (ceilings %d, %d)", ceil.name, allocs, bytes, ceil.allocs, ceil.bytes)
			// Half an allocation of room: a background timer or a pool
			// refilled after a GC adds a tenth now and then, one more
			// allocation on every request adds a whole one.
			if allocs > float64(ceil.allocs)+0.5 {
				t.Errorf("%s: %.1f allocations per request, over the ceiling of %d: find the new allocation, or raise the ceiling in allocgate_test.go on purpose", ceil.name, allocs, ceil.allocs)
			}
			if int(bytes) > ceil.bytes {
				t.Errorf("%s: %.0f bytes allocated per request, over the ceiling of %d", ceil.name, bytes, ceil.bytes)
			}
			if allocs+1.5 < float64(ceil.allocs) {
				t.Errorf("%s: %.1f allocations per request, well under the ceiling of %d: lower it to %d, so the gain is kept", ceil.name, allocs, ceil.allocs, int(allocs+0.5))
			}
		})
	}
}

// BenchmarkAllocationGate is the gate's cases as benchmarks, for profiles:
//
//	go test -run xxx -bench AllocationGate -benchmem -cpuprofile cpu.out ./internal/gateway
func BenchmarkAllocationGate(b *testing.B) {
	cases := allocCases()
	for _, ceil := range allocCeilings {
		b.Run(ceil.name, func(b *testing.B) {
			serve := allocServer(b, cases[ceil.name])
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}

// BenchmarkSignedCall is the same chat completion to Claude on Bedrock,
// signed with SigV4 and sent with a Bedrock API key instead, beside the
// same answer from an OpenAI-compatible target: what signing adds to a
// request (credentials are resolved once, not per call).
//
//	go test -run xxx -bench SignedCall -benchmem -count 6 ./internal/gateway
func BenchmarkSignedCall(b *testing.B) {
	chat := `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`
	bedrockUp := func(auth string) string {
		return `providers:
  up: {type: bedrock, region: us-east-1, base_url: "http://up.invalid", ` + auth + `}
models:
  - {name: smart, targets: [{provider: up, model: claude-sonnet-4-5}]}
`
	}
	for _, tc := range []struct {
		name string
		c    allocCase
	}{
		{"openai", allocCases()["json"]},
		{"bedrock-sigv4", allocCase{config: bedrockUp(`aws: {access_key_id: AKIDEXAMPLE, secret_access_key: secret}`), path: "/v1/chat/completions", body: chat, answer: messagesAnswer}},
		{"bedrock-apikey", allocCase{config: bedrockUp(`keys: [bedrock-api-key]`), path: "/v1/chat/completions", body: chat, answer: messagesAnswer}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			serve := allocServer(b, tc.c)
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}
