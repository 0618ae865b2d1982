package gemini

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

const benchChat = `{"model":"gemini-2.5-flash","stream":true,"stream_options":{"include_usage":true},"max_tokens":512,"temperature":0.7,
"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What is the weather in Paris?"},
{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},
{"role":"tool","tool_call_id":"c1","content":"18C and sunny"},{"role":"user","content":"And tomorrow?"}],
"tools":[{"type":"function","function":{"name":"weather","description":"Weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`

func BenchmarkTranslateChat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := TranslateChat([]byte(benchChat), false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTranslateChatParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := TranslateChat([]byte(benchChat), false); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchStream is a 20-event Gemini stream.
var benchStream = func() string {
	ev := make([]string, 0, 20)
	for range 19 {
		ev = append(ev, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Some words of the answer, "}]},"index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":40},"modelVersion":"gemini-2.5-flash","responseId":"abcdefgh"}`)
	}
	ev = append(ev, `{"candidates":[{"content":{"role":"model","parts":[{"text":"done."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":44},"modelVersion":"gemini-2.5-flash","responseId":"abcdefgh"}`)
	return sseOf(ev...)
}()

// BenchmarkChatStream translates a 20-event stream; allocations are per
// stream.
func BenchmarkChatStream(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchStream)))
	buf := make([]byte, 32<<10)
	for b.Loop() {
		resp := ChatStream(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(benchStream))}, "m", true, 1)
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

func BenchmarkChatAnswer(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		resp, err := ChatAnswer(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(answerBody))}, "m", 1)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err)
		}
	}
}
