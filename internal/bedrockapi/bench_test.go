package bedrockapi

import (
	"io"
	"strings"
	"testing"
)

var benchConverse = []byte(`{"system":[{"text":"Be brief."}],"messages":[{"role":"user","content":[{"text":"Hello there, how are you today?"}]}],"inferenceConfig":{"maxTokens":100,"temperature":0.5}}`)

func BenchmarkConverseToChat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ConverseToChat(testModel, benchConverse, true); err != nil {
			b.Fatal(err)
		}
	}
}

// A 40-chunk chat stream translated to ConverseStream frames.
func BenchmarkConverseStream(b *testing.B) {
	var in strings.Builder
	in.WriteString(sseData(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`))
	for range 40 {
		in.WriteString(sseData(`{"choices":[{"index":0,"delta":{"content":"lorem ipsum "}}]}`))
	}
	in.WriteString(sseData(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":40}}`, "[DONE]"))
	stream := in.String()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.Copy(io.Discard, NewConverseStream(strings.NewReader(stream))); err != nil {
			b.Fatal(err)
		}
	}
}
