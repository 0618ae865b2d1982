package anthropic

import (
	"bytes"
	"io"
	"os"
	"testing"
)

func benchFile(b *testing.B, name string) []byte {
	body, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkTranslateRequest is the cost of translating a multi-turn
// request with tools and tool results.
func BenchmarkTranslateRequest(b *testing.B) {
	body := benchFile(b, "testdata/request/tools.openai.json")
	maxTokens := testUpstream(b).defaultMaxTokens
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := translateRequest(body, maxTokens); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranslateResponse is the cost of translating an answer with
// text and tool calls.
func BenchmarkTranslateResponse(b *testing.B) {
	body := benchFile(b, "testdata/response/tool_use.anthropic.json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := translateResponse(body, testCreated); err != nil {
			b.Fatal(err)
		}
	}
}

// endless is an Anthropic stream that never ends: a message_start, then
// the same text delta forever.
type endless struct {
	head  []byte
	delta []byte
	off   int
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.head) > 0 {
		n := copy(p, e.head)
		e.head = e.head[n:]
		return n, nil
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.delta[e.off:])
		n += c
		e.off = (e.off + c) % len(e.delta)
	}
	return n, nil
}

func newEndless() *endless {
	return &endless{
		head:  []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"),
		delta: []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" the quick brown fox\"}}\n\n"),
	}
}

// BenchmarkStreamChunk is the cost of translating one streamed text
// delta: each op reads one chat.completion.chunk.
func BenchmarkStreamChunk(b *testing.B) {
	s := newChatStream(io.NopCloser(newEndless()), false, testCreated)
	buf := make([]byte, 4096)
	s.Read(buf) // the role chunk
	b.ReportAllocs()
	for b.Loop() {
		if n, err := s.Read(buf); err != nil || !bytes.HasPrefix(buf[:n], []byte("data: ")) {
			b.Fatal(n, err)
		}
	}
}

func BenchmarkStreamChunkParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := newChatStream(io.NopCloser(newEndless()), false, testCreated)
		buf := make([]byte, 4096)
		s.Read(buf)
		for pb.Next() {
			if _, err := s.Read(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
