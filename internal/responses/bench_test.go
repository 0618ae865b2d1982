package responses

import (
	"testing"
)

// benchRequest is a typical agent turn: instructions, a short
// conversation with a tool round trip, two function tools.
var benchRequest = []byte(`{"model":"gpt-4.1","instructions":"You are a helpful assistant. Answer briefly and use the tools when the user asks about the weather.",
"input":[
 {"role":"user","content":"What's the weather like in Oslo and in Rome today? I am packing for a trip."},
 {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me check both cities for you.","annotations":[]}]},
 {"type":"function_call","call_id":"call_8f2a","name":"get_weather","arguments":"{\"city\":\"Oslo\",\"unit\":\"celsius\"}"},
 {"type":"function_call","call_id":"call_8f2b","name":"get_weather","arguments":"{\"city\":\"Rome\",\"unit\":\"celsius\"}"},
 {"type":"function_call_output","call_id":"call_8f2a","output":"{\"temp\":-3,\"sky\":\"snow\"}"},
 {"type":"function_call_output","call_id":"call_8f2b","output":"{\"temp\":14,\"sky\":\"clear\"}"},
 {"role":"user","content":[{"type":"input_text","text":"Thanks. Should I bring an umbrella?"}]}],
"tools":[
 {"type":"function","name":"get_weather","description":"Get the current weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false},"strict":true},
 {"type":"function","name":"get_forecast","description":"Get a forecast for the coming days.","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"],"additionalProperties":false},"strict":true}],
"tool_choice":"auto","temperature":0.7,"max_output_tokens":1024,"metadata":{"session":"abc123"},"store":true}`)

// benchAnswer is a typical chat answer: text and a tool call.
var benchAnswer = chatBody(`{"role":"assistant","content":"Oslo is snowy at -3°C and Rome is clear at 14°C. No umbrella needed for Rome, but pack warm boots for Oslo. Shall I check the forecast?","tool_calls":[{"id":"call_9c1d","type":"function","function":{"name":"get_forecast","arguments":"{\"city\":\"Oslo\",\"days\":3}"}}]}`, "tool_calls")

// benchChunk is a typical content chunk of a stream.
var benchChunk = []byte(`{"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1767323045,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_1a2b3c","choices":[{"index":0,"delta":{"content":" packing"},"logprobs":null,"finish_reason":null}]}`)

func BenchmarkToChat(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		if _, _, err := ToChat(benchRequest, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkToChatParallel(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ToChat(benchRequest, nil)
		}
	})
}

func BenchmarkFromChat(b *testing.B) {
	_, req, err := ToChat(benchRequest, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchAnswer)))
	for b.Loop() {
		if _, err := FromChat(benchAnswer, req, testID, created); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamChunk(b *testing.B) {
	_, req, err := ToChat(benchRequest, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := NewStream(req, testID, created)
	s.Chunk(benchChunk) // past response.created and the message's start
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChunk)))
	for b.Loop() {
		if _, err := s.Chunk(benchChunk); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamChunkParallel(b *testing.B) {
	_, req, err := ToChat(benchRequest, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChunk)))
	b.RunParallel(func(pb *testing.PB) {
		s := NewStream(req, testID, created) // a Stream per goroutine, as per request
		s.Chunk(benchChunk)
		for pb.Next() {
			s.Chunk(benchChunk)
		}
	})
}
