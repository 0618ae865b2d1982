package aierr

import (
	"net/http"
	"testing"
)

// A typical OpenAI 429 as net/http hands it over: canonical header keys, the
// usual dozen headers, a JSON body.
var (
	bench429Header = http.Header{
		"Date":                           {"Sun, 01 Jun 2025 12:00:00 GMT"},
		"Content-Type":                   {"application/json; charset=utf-8"},
		"Content-Length":                 {"312"},
		"Connection":                     {"keep-alive"},
		"Vary":                           {"Origin"},
		"X-Request-Id":                   {"req_5f1c0e2a9b7d4c3e8f6a1b2c3d4e5f60"},
		"X-Ratelimit-Limit-Requests":     {"10000"},
		"X-Ratelimit-Limit-Tokens":       {"30000"},
		"X-Ratelimit-Remaining-Requests": {"9998"},
		"X-Ratelimit-Remaining-Tokens":   {"0"},
		"X-Ratelimit-Reset-Requests":     {"12ms"},
		"X-Ratelimit-Reset-Tokens":       {"2.328s"},
		"Retry-After":                    {"3"},
		"Openai-Processing-Ms":           {"4"},
		"Strict-Transport-Security":      {"max-age=31536000; includeSubDomains; preload"},
		"Cf-Cache-Status":                {"DYNAMIC"},
		"Server":                         {"cloudflare"},
		"Cf-Ray":                         {"8b2f0e7a9c3d1e2f-AMS"},
	}
	bench429Body = []byte(`{
    "error": {
        "message": "Rate limit reached for gpt-4o in organization org-abc123 on tokens per min (TPM): Limit 30000, Used 29812, Requested 2650. Please try again in 4.924s. Visit https://platform.openai.com/account/rate-limits to learn more.",
        "type": "tokens",
        "param": null,
        "code": "rate_limit_exceeded"
    }
}`)
	bench503Header = http.Header{
		"Date":           {"Sun, 01 Jun 2025 12:00:00 GMT"},
		"Content-Type":   {"text/html"},
		"Content-Length": {"190"},
		"Connection":     {"keep-alive"},
		"Server":         {"cloudflare"},
		"Cf-Ray":         {"8b2f0e7a9c3d1e2f-AMS"},
	}
	bench503HTML = []byte("<html>\n<head><title>503 Service Temporarily Unavailable</title></head>\n<body>\n<center><h1>503 Service Temporarily Unavailable</h1></center>\n<hr><center>cloudflare</center>\n</body>\n</html>\n")
	bench503JSON = []byte(`{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}`)
	benchChunk   = []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":null}]}`)
)

// A Bedrock 429 as the AWS endpoint sends it: the exception in
// x-amzn-ErrorType, a one-field body.
var (
	benchBedrockHeader = http.Header{
		"Date":              {"Sun, 01 Jun 2025 12:00:00 GMT"},
		"Content-Type":      {"application/json"},
		"Content-Length":    {"66"},
		"Connection":        {"keep-alive"},
		"X-Amzn-Requestid":  {"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"},
		"X-Amzn-Errortype":  {"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
		"X-Amzn-Bedrock-Id": {"b"},
	}
	benchBedrockBody = []byte(`{"message":"Too many requests, please wait before trying again."}`)
)

var sinkVerdict Verdict

func BenchmarkClassifyOpenAI429(b *testing.B) {
	c := testClassifier()
	b.ReportAllocs()
	for b.Loop() {
		sinkVerdict = c.Classify(429, bench429Header, bench429Body)
	}
	if sinkVerdict.Kind != Throttle {
		b.Fatal(sinkVerdict)
	}
}

func BenchmarkClassifyBedrock429(b *testing.B) {
	c := testClassifier()
	b.ReportAllocs()
	for b.Loop() {
		sinkVerdict = c.Classify(429, benchBedrockHeader, benchBedrockBody)
	}
	if sinkVerdict.Kind != Throttle || sinkVerdict.Code != "ThrottlingException" {
		b.Fatal(sinkVerdict)
	}
}

func BenchmarkClassify503HTML(b *testing.B) {
	c := testClassifier()
	b.ReportAllocs()
	for b.Loop() {
		sinkVerdict = c.Classify(503, bench503Header, bench503HTML)
	}
	if sinkVerdict.Kind != Outage {
		b.Fatal(sinkVerdict)
	}
}

func BenchmarkClassify503JSON(b *testing.B) {
	c := testClassifier()
	b.ReportAllocs()
	for b.Loop() {
		sinkVerdict = c.Classify(503, bench503Header, bench503JSON)
	}
	if sinkVerdict.Kind != Outage {
		b.Fatal(sinkVerdict)
	}
}

func BenchmarkClassifyEventChunk(b *testing.B) {
	c := testClassifier()
	b.ReportAllocs()
	for b.Loop() {
		sinkVerdict = c.ClassifyEvent("", benchChunk)
	}
	if sinkVerdict.Kind != Success {
		b.Fatal(sinkVerdict)
	}
}

func BenchmarkClassifyOpenAI429Parallel(b *testing.B) {
	c := testClassifier()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if v := c.Classify(429, bench429Header, bench429Body); v.Kind != Throttle {
				b.Error(v)
			}
		}
	})
}

// BenchmarkClassifyWorstCase feeds 64 KiB bodies built to make a naive
// scanner slow; the time per byte must stay flat.
func BenchmarkClassifyWorstCase(b *testing.B) {
	rep := func(s string) []byte {
		out := make([]byte, 0, MaxBody+len(s))
		for len(out) < MaxBody {
			out = append(out, s...)
		}
		return out
	}
	bodies := map[string][]byte{
		"backslashes":  append([]byte(`{"error":{"message":"`), rep(`\\\"`)...),
		"deep":         rep(`{"a":[`),
		"keys":         append([]byte(`{`), rep(`"error":{"message":"x"},`)...),
		"phrases":      append([]byte(`{"error":{"message":"`), rep(`try again in try again inn per da context lengt `)...),
		"text":         rep("retry after retry after <title <title "),
		"numbers":      append([]byte(`[`), rep(`1234567890,`)...),
		"long-strings": append([]byte(`{"error":{"code":"`), rep(`a`)...),
		"unicode-esc":  append([]byte(`{"error":{"message":"`), rep(`\ud83d\u`)...),
	}
	h := http.Header{"Retry-After": {string(rep("9"))}, "X-Ratelimit-Reset-Tokens": {string(rep("1h"))}}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				sinkVerdict = Classify(429, h, body)
				sinkVerdict = ClassifyEvent("error", body)
			}
		})
	}
}
