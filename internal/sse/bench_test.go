package sse

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// openAIStream is a typical 40-event chat completion stream: a role-only
// chunk, 37 content chunks, a finish chunk, and data: [DONE].
func openAIStream() []byte {
	const head = `data: {"id":"chatcmpl-BRjQ2fZx8Xr3vYQx1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":`
	var b bytes.Buffer
	b.WriteString(head + `{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	for i := range 37 {
		fmt.Fprintf(&b, head+`{"content":" word%d"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n", i)
	}
	b.WriteString(head + `{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func BenchmarkReaderOpenAIStream(b *testing.B) {
	stream := openAIStream()
	src := bytes.NewReader(stream)
	r := NewReader(src, Options{})
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(stream)
		r.Reset(src)
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 40 {
			b.Fatalf("%d events", n)
		}
	}
}

// BenchmarkReaderOpenAIStreamSmallReads reads the stream in 64-byte reads,
// as a slow network delivers it.
func BenchmarkReaderOpenAIStreamSmallReads(b *testing.B) {
	stream := openAIStream()
	src := bytes.NewReader(stream)
	small := &smallReader{r: src, n: 64}
	r := NewReader(small, Options{})
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(stream)
		r.Reset(small)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

type smallReader struct {
	r io.Reader
	n int
}

func (s *smallReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

func BenchmarkReaderParallel(b *testing.B) {
	stream := openAIStream()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		src := bytes.NewReader(stream)
		r := NewReader(src, Options{})
		for pb.Next() {
			src.Reset(stream)
			r.Reset(src)
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
		}
	})
}

func BenchmarkHasContent(b *testing.B) {
	cases := []struct{ name, event, data string }{
		{"openai_content", "", `{"id":"chatcmpl-BRjQ2fZx8Xr3vYQx1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}`},
		{"openai_role_only", "", `{"id":"chatcmpl-BRjQ2fZx8Xr3vYQx1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`},
		{"anthropic_delta", "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`},
		{"anthropic_message_start", "message_start", `{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`},
	}
	for _, c := range cases {
		ev := Event{Name: c.event, Data: []byte(c.data)}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				HasContent(ev)
			}
		})
		b.Run(c.name+"/encoding_json", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				decodeContent(ev.Name, ev.Data)
			}
		})
	}
}

func BenchmarkHasContentParallel(b *testing.B) {
	ev := Event{Data: []byte(`{"id":"chatcmpl-BRjQ2fZx8Xr3vYQx1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}`)}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			HasContent(ev)
		}
	})
}

func BenchmarkWriterWriteRaw(b *testing.B) {
	raw := []byte(`data: {"id":"chatcmpl-BRjQ2fZx8Xr3vYQx1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	w := NewFlushWriter(io.Discard, func() error { return nil })
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteRaw(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriterWriteEvent(b *testing.B) {
	data := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`)
	w := NewFlushWriter(io.Discard, func() error { return nil })
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteEvent("content_block_delta", data); err != nil {
			b.Fatal(err)
		}
	}
}
