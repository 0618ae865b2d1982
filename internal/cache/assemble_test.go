package cache

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// liveText is a streamed text answer as OpenAI sends it, usage included.
var liveText = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Paris is"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" the capital \"de\" la France.\n"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`,
	`[DONE]`,
}

const liveTextWant = `{"id":"chatcmpl-1","object":"chat.completion","created":1745769600,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"message":{"role":"assistant","content":"Paris is the capital \"de\" la France.\n","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21},"system_fingerprint":"fp_1","service_tier":"default"}`

// liveTools is a streamed answer with two tool calls whose arguments
// arrive in pieces, interleaved.
var liveTools = []string{
	`{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1745769601,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1745769601,"model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1745769601,"model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1745769601,"model":"gpt-4.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}},{"index":1,"function":{"arguments":"\"CET\"}"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-2","object":"chat.completion.chunk","created":1745769601,"model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
}

const liveToolsWant = `{"id":"chatcmpl-2","object":"chat.completion","created":1745769601,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"CET\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}]}`

func assemble(t *testing.T, events []string) string {
	t.Helper()
	a := NewAssembler(0)
	for i, ev := range events {
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatalf("Add(event %d): %v", i, err)
		}
	}
	out, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	return string(out)
}

func TestAssemble(t *testing.T) {
	if got := assemble(t, liveText); got != liveTextWant {
		t.Errorf("text:\n got %s\nwant %s", got, liveTextWant)
	}
	if got := assemble(t, liveTools); got != liveToolsWant {
		t.Errorf("tools:\n got %s\nwant %s", got, liveToolsWant)
	}
}

func TestAssembleExtras(t *testing.T) {
	// Two choices, reasoning, logprobs, whitespace inside values, an
	// unknown object field.
	events := []string{
		`{"id":"x","created":1,"model":"m","choices":[{"index":1,"delta":{"role":"assistant","reasoning_content":"think "}},{"index":0,"delta":{"role":"assistant","content":"A","audio":{"id": "au"}},"logprobs":{"content":[{"token":"A","logprob":-0.1}]}}]}`,
		`{"choices":[{"index":1,"delta":{"reasoning_content":"hard","content":"B"}},{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-0.2}],"refusal":null}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"length"},{"index":1,"delta":{},"finish_reason":"stop"}]}`,
	}
	want := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[` +
		`{"index":0,"message":{"role":"assistant","content":"Aa","refusal":null,"audio":{"id":"au"}},"logprobs":{"content":[{"token":"A","logprob":-0.1},{"token":"a","logprob":-0.2}],"refusal":null},"finish_reason":"length"},` +
		`{"index":1,"message":{"role":"assistant","content":"B","refusal":null,"reasoning_content":"think hard"},"logprobs":null,"finish_reason":"stop"}]}`
	if got := assemble(t, events); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestAssembleErrors(t *testing.T) {
	for name, events := range map[string][]string{
		"no finish":   liveText[:3],
		"nothing":     nil,
		"only usage":  liveText[4:],
		"not JSON":    {liveText[0], `{"choices":`},
		"error event": {liveText[0], `{"error":{"message":"overloaded","type":"overloaded_error"}}`},
		"other":       {`{"object":"chat.completion","choices":[]}`},
		"array":       {`[1]`},
		"null":        {`null`},
	} {
		a := NewAssembler(0)
		var err error
		for _, ev := range events {
			if err = a.Add([]byte(ev)); err != nil {
				break
			}
		}
		if _, rerr := a.Result(); rerr == nil {
			t.Errorf("%s: Result gave no error", name)
		} else if err != nil && !errors.Is(rerr, err) {
			t.Errorf("%s: Result = %v, Add = %v", name, rerr, err)
		}
	}
}

func TestAssembleLimit(t *testing.T) {
	a := NewAssembler(int64(len(liveText[0]) + 10))
	if err := a.Add([]byte(liveText[0])); err != nil {
		t.Fatal(err)
	}
	if err := a.Add([]byte(liveText[1])); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Add past the limit: %v", err)
	}
	if _, err := a.Result(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Result: %v", err)
	}
}

func TestEachPiece(t *testing.T) {
	s := strings.Repeat("héllo wörld, ", 40) + strings.Repeat("é", 100)
	var joined strings.Builder
	n := 0
	eachPiece([]byte(s), func(p []byte) {
		if len(p) == 0 || len(p) > pieceSize {
			t.Fatalf("piece of %d bytes", len(p))
		}
		if !utf8.Valid(p) {
			t.Fatalf("piece cut a rune: %q", p)
		}
		joined.Write(p)
		n++
	})
	if joined.String() != s || n < len(s)/pieceSize {
		t.Fatalf("%d pieces do not rebuild the text", n)
	}
}

// A stream whose deltas decoders read differently was assembled into one
// reading, or into a body with a key twice: content given twice in a delta
// joined ("ab"), a field that is a string in one delta and an object in
// another written twice, content parts next to "content":null, a tool
// call with a numeric id or a fractional index dropped. Such a stream is
// not kept.
func TestAssembleRefusesAmbiguousDeltas(t *testing.T) {
	for _, deltas := range [][]string{
		{`{"content":"a","content":"b"}`},
		{`{"reasoning":"a"}`, `{"reasoning":{"x":1}}`},
		{`{"reasoning":{"x":1}}`, `{"reasoning":"a"}`},
		{`{"content":[{"type":"text","text":"x"}]}`},
		{`{"role":1}`},
		{`{"tool_calls":[{"index":0,"id":7}]}`},
		{`{"tool_calls":[{"index":1.5,"id":"a"}]}`},
		{`{"tool_calls":["x"]}`},
		{`{"tool_calls":[{"index":0,"function":{"arguments":"{","arguments":"}"}}]}`},
	} {
		a := NewAssembler(0)
		var err error
		for _, d := range deltas {
			if err = a.Add([]byte(`{"choices":[{"index":0,"delta":` + d + `}]}`)); err != nil {
				break
			}
		}
		if !errors.Is(err, ErrNotChunk) {
			t.Errorf("%s: %v, want ErrNotChunk", deltas, err)
		}
	}
}
