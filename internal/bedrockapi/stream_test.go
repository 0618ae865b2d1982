package bedrockapi

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// frame is a decoded event-stream message: its :event-type or
// :exception-type and its payload.
type decoded struct {
	kind    string // "event" or "exception"
	typ     string
	payload string
}

func decodeOne(t *testing.T, dec *eventstream.Decoder, r io.Reader) (decoded, error) {
	t.Helper()
	msg, err := dec.Decode(r, nil)
	if err != nil {
		return decoded{}, err
	}
	d := decoded{kind: msg.Headers.Get(":message-type").String(), payload: string(msg.Payload)}
	if d.kind == "exception" {
		d.typ = msg.Headers.Get(":exception-type").String()
	} else {
		d.typ = msg.Headers.Get(":event-type").String()
	}
	if ct := msg.Headers.Get(":content-type"); ct == nil || ct.String() != "application/json" {
		t.Errorf("frame %s has content type %v", d.typ, ct)
	}
	if !json.Valid(msg.Payload) {
		t.Errorf("frame %s payload is not JSON: %q", d.typ, msg.Payload)
	}
	return d, nil
}

func decodeAll(t *testing.T, r io.Reader) []decoded {
	t.Helper()
	dec := eventstream.NewDecoder()
	var out []decoded
	for {
		d, err := decodeOne(t, dec, r)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", len(out), err)
		}
		out = append(out, d)
	}
}

func sseData(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

// Frames leave as their chat events arrive, not at the end: each is
// decoded before the next chat event is written; a stream that then
// stalls has delivered everything so far, and a reset after the stall
// ends it with a modelStreamErrorException.
func TestConverseStreamIsIncremental(t *testing.T) {
	pr, pw := io.Pipe()
	out := NewConverseStream(pr)
	dec := eventstream.NewDecoder()
	steps := []struct{ chunk, typ, payload string }{
		{`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, "messageStart", `{"role":"assistant"}`},
		{`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`},
		{`{"choices":[{"index":0,"delta":{"content":"lo \"you\""}}]}`, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"lo \"you\""}}`},
	}
	for _, s := range steps {
		go pw.Write([]byte(sseData(s.chunk)))
		d, err := decodeOne(t, dec, out)
		if err != nil {
			t.Fatal(err)
		}
		if d.typ != s.typ || d.payload != s.payload {
			t.Fatalf("after %s: %s %s, want %s %s", s.chunk, d.typ, d.payload, s.typ, s.payload)
		}
	}
	pw.CloseWithError(io.ErrUnexpectedEOF) // the upstream resets mid-answer
	d, err := decodeOne(t, dec, out)
	if err != nil || d.kind != "exception" || d.typ != ExceptionModelStreamError {
		t.Fatalf("after a reset: %+v, %v", d, err)
	}
	if _, err := decodeOne(t, dec, out); err != io.EOF {
		t.Errorf("after the exception: %v, want EOF", err)
	}
}

// Blocks are numbered in order and each is closed before the next; two
// tool calls are two toolUse blocks; latency is measured on the injected
// clock; a stream that finished but lost its [DONE] is complete.
func TestConverseStreamBlocks(t *testing.T) {
	clk := clocktest.New(time.Unix(1000, 0))
	in := sseData(
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me check."}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
	)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(in))
		clk.Advance(1500 * time.Millisecond)
		pw.Close()
	}()
	got := decodeAll(t, NewConverseStreamClock(pr, clk))
	want := []decoded{
		{"event", "messageStart", `{"role":"assistant"}`},
		{"event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Let me check."}}`},
		{"event", "contentBlockStop", `{"contentBlockIndex":0}`},
		{"event", "contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"call_a","name":"f"}}}`},
		{"event", "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"x\":"}}}`},
		{"event", "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"1}"}}}`},
		{"event", "contentBlockStop", `{"contentBlockIndex":1}`},
		{"event", "contentBlockStart", `{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"call_b","name":"g"}}}`},
		{"event", "contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{}"}}}`},
		{"event", "contentBlockStop", `{"contentBlockIndex":2}`},
		{"event", "messageStop", `{"stopReason":"tool_use"}`},
		{"event", "metadata", `{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":1500}}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("frames:\n%v\nwant\n%v", got, want)
	}
}

// Unreliable upstreams: whatever breaks the chat stream before its
// finish ends the Converse stream with an exception, never a messageStop.
func TestConverseStreamUnreliable(t *testing.T) {
	content := `{"choices":[{"index":0,"delta":{"content":"Hi"}}]}`
	cases := []struct{ name, in, exception string }{
		{"empty", "", ExceptionModelStreamError},
		{"garbage", "data: <html>502 Bad Gateway</html>\n\n", ExceptionModelStreamError},
		{"truncated event", "data: " + content + "\n\ndata: {\"choices\":[{\"ind", ExceptionModelStreamError},
		{"cut after content", sseData(content), ExceptionModelStreamError},
		{"huge event", "data: \"" + strings.Repeat("x", 2<<20) + "\"\n\n", ExceptionModelStreamError},
		{"json but not a chunk", sseData(content, `[1,2]`), ExceptionModelStreamError},
		{"throttled", sseData(content, `{"error":{"type":"tokens","code":"rate_limit_exceeded","message":"m"}}`), ExceptionThrottling},
		{"anthropic overloaded", sseData(content, `{"error":{"type":"overloaded_error","message":"m"}}`), ExceptionServiceUnavailable},
		{"unknown error", sseData(content, `{"error":{"type":"weird","message":""}}`), ExceptionModelStreamError},
	}
	for _, tc := range cases {
		got := decodeAll(t, NewConverseStream(strings.NewReader(tc.in)))
		if len(got) == 0 {
			t.Errorf("%s: no frames", tc.name)
			continue
		}
		last := got[len(got)-1]
		if last.kind != "exception" || last.typ != tc.exception {
			t.Errorf("%s: last frame %+v, want %s", tc.name, last, tc.exception)
		}
		var m struct{ Message string }
		if json.Unmarshal([]byte(last.payload), &m); m.Message == "" {
			t.Errorf("%s: exception without a message: %s", tc.name, last.payload)
		}
		for _, d := range got {
			if d.typ == "messageStop" || d.typ == "metadata" {
				t.Errorf("%s: a cut stream sent %s", tc.name, d.typ)
			}
		}
	}
}

// ExceptionFrame is one decodable exception message.
func TestExceptionFrame(t *testing.T) {
	got := decodeAll(t, strings.NewReader(string(ExceptionFrame(ExceptionThrottling, "Too many \"tokens\""))))
	want := []decoded{{"exception", ExceptionThrottling, `{"message":"Too many \"tokens\""}`}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
}

// The Invoke stream: a chunk per event (base64 of the event's JSON), the
// invocation metrics on message_stop on the injected clock, and an
// exception for an error event, a cut stream or garbage.
func TestInvokeStream(t *testing.T) {
	clk := clocktest.New(time.Unix(1000, 0))
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }
	in := ev("message_start", `{"type":"message_start","message":{"id":"m","usage":{"input_tokens":9,"output_tokens":1}}}`) +
		": keep-alive\n\n" +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
	pr, pw := io.Pipe()
	go func() {
		clk.Advance(20 * time.Millisecond)
		io.WriteString(pw, in[:strings.Index(in, ": keep")])
		clk.Advance(300 * time.Millisecond)
		io.WriteString(pw, in[strings.Index(in, ": keep"):])
		pw.Close()
	}()
	var events []string
	for _, d := range decodeAll(t, NewInvokeStreamClock(pr, clk)) {
		var chunk struct{ Bytes string }
		json.Unmarshal([]byte(d.payload), &chunk)
		raw, err := base64.StdEncoding.DecodeString(chunk.Bytes)
		if d.typ != "chunk" || err != nil {
			t.Fatalf("frame %+v: %v", d, err)
		}
		events = append(events, string(raw))
	}
	want := []string{
		`{"type":"message_start","message":{"id":"m","usage":{"input_tokens":9,"output_tokens":1}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
		`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":9,"outputTokenCount":4,"invocationLatency":320,"firstByteLatency":20}}`,
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events:\n%q\nwant\n%q", events, want)
	}

	start := ev("message_start", `{"type":"message_start","message":{}}`)
	cases := []struct{ name, in, exception string }{
		{"overloaded", start + ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), ExceptionServiceUnavailable},
		{"rate limited", start + ev("error", `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`), ExceptionThrottling},
		{"api error", start + ev("error", `{"type":"error","error":{"type":"api_error","message":"x"}}`), ExceptionInternalServer},
		{"cut", start, ExceptionModelStreamError},
		{"garbage", start + "data: not json\n\n", ExceptionModelStreamError},
		{"truncated", start + "data: {\"type\":\"content_bl", ExceptionModelStreamError},
	}
	for _, tc := range cases {
		got := decodeAll(t, NewInvokeStream(strings.NewReader(tc.in)))
		if len(got) != 2 || got[0].typ != "chunk" || got[1].kind != "exception" || got[1].typ != tc.exception {
			t.Errorf("%s: frames %+v, want a chunk then %s", tc.name, got, tc.exception)
		}
	}
}
