package sim

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkChat measures a non-streamed chat completion through the
// handler, with no latency.
func BenchmarkChat(b *testing.B) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	body := chatBody(false)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkChatParallel is BenchmarkChat from many goroutines: the cost of
// the Server's one mutex under contention.
func BenchmarkChatParallel(b *testing.B) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	body := chatBody(false)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)))
		}
	})
}

// BenchmarkStream measures a streamed chat completion of 20 tokens.
func BenchmarkStream(b *testing.B) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	body := chatBody(true)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)))
	}
}

// BenchmarkClouds measures a non-streamed call on each cloud's path
// (open credentials): the translation both ways and the relay around the
// chat engine.
func BenchmarkClouds(b *testing.B) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	sigv4 := "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=00"
	for _, c := range []struct{ name, path, body, key, value string }{
		{"converse", "/model/m/converse", `{"messages":[{"role":"user","content":[{"text":"Say something, please."}]}]}`, "Authorization", sigv4},
		{"invoke", "/model/" + claudeID + "/invoke", claudeBody, "Authorization", sigv4},
		{"gemini", "/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[{"text":"Say something, please."}]}]}`, "X-Goog-Api-Key", "k"},
		{"azure", "/openai/deployments/d/chat/completions?api-version=1", `{"messages":[{"role":"user","content":"Say something, please."}]}`, "Api-Key", "k"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("POST", c.path, strings.NewReader(c.body))
				req.Header.Set(c.key, c.value)
				req.Header.Set("X-Amz-Date", "20260101T000000Z")
				s.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
}
