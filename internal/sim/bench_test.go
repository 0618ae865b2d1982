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
