package geminiapi

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// benchRequest is a typical request: a system instruction, a few turns
// with a function call and its response, a tool and generation settings.
var benchRequest = []byte(`{"systemInstruction":{"parts":[{"text":"You are a helpful assistant that answers briefly."}]},
"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris, and should I take an umbrella?"}]},
{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris","unit":"celsius"}}}]},
{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":{"sky":"rain","celsius":14}}}}]}],
"tools":[{"functionDeclarations":[{"name":"get_weather","description":"The weather in a city",
"parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"},"unit":{"type":"STRING","enum":["celsius","fahrenheit"]}},"required":["city"]}}]}],
"generationConfig":{"temperature":0.7,"topP":0.95,"topK":40,"maxOutputTokens":1024,"thinkingConfig":{"thinkingBudget":1024}}}`)

var benchChat = []byte(`{"id":"chatcmpl-123","object":"chat.completion","created":1700000000,"model":"gpt-x",
"choices":[{"index":0,"message":{"role":"assistant","content":"It is raining in Paris at 14°C: take an umbrella."},"finish_reason":"stop"}],
"usage":{"prompt_tokens":120,"completion_tokens":18,"total_tokens":138,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`)

// benchStream is a chat stream of 50 text chunks, the finish and usage.
var benchStream = func() []byte {
	var b strings.Builder
	b.WriteString(chunkEvent(`{"role":"assistant","content":""}`, ""))
	for range 50 {
		b.WriteString(chunkEvent(`{"content":"word "}`, ""))
	}
	b.WriteString(chunkEvent(`{}`, "stop") + usageEvent + "data: [DONE]\n\n")
	return []byte(b.String())
}()

func BenchmarkToChat(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		if _, err := ToChat("gemini-2.5-flash", benchRequest, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToChatParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := ToChat("gemini-2.5-flash", benchRequest, true); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkFromChat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromChat(benchChat, "gemini-2.5-flash"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewStream(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchStream)))
	buf := make([]byte, 32<<10)
	for b.Loop() {
		s := NewStream(bytes.NewReader(benchStream), "gemini-2.5-flash", true)
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{s}, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewStreamParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 32<<10)
		for pb.Next() {
			s := NewStream(bytes.NewReader(benchStream), "gemini-2.5-flash", false)
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{s}, buf); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
