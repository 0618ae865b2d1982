package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzKey checks that Key never panics, refuses exactly the bodies that
// are not JSON objects, and that the key survives re-encoding the body
// (another key order and spacing).
func FuzzKey(f *testing.F) {
	for _, s := range []string{typical, `{}`, `[]`, `{"a":[{"b":"\u00e9\n"},1.5e3,null,true]}`, `{"a":1,"a":2}`, `{`, ``, `{"\"":{"":[]}}`, `{"a":"\ud800","\udc00":"\u00e9\ud83d\ude00"}`, "{\"a\xff\":\"b\xfe\\n\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		k, err := Key("smart", ScopeClient, "web", body)
		var obj map[string]any
		isObj := json.Unmarshal(body, &obj) == nil && obj != nil
		if isObj != (err == nil) {
			t.Fatalf("Key error %v for a body that is an object: %v", err, isObj)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidBody) {
				t.Fatalf("error %v", err)
			}
			return
		}
		// Re-encoding (sorted keys, no space, numbers as float64) may
		// change numbers, so compare only bodies whose numbers survive.
		again, _ := json.MarshalIndent(obj, "", "  ")
		var back map[string]any
		json.Unmarshal(again, &back)
		if strings.ContainsAny(string(body), "0123456789") || strings.Contains(string(body), `\u`) {
			return // numbers and escapes may be spelled differently
		}
		if !utf8.Valid(body) {
			return // re-encoding repairs invalid UTF-8, which Key keeps as written
		}
		if k2, err := Key("smart", ScopeClient, "web", again); err != nil || (k2 != k && !hasDup(body)) {
			t.Fatalf("re-encoded body has another key (%v):\n%s\n%s", err, body, again)
		}
	})
}

// hasDup is a rough test for duplicate keys, which re-encoding collapses
// the same way Key does but which the fuzzer's comparison cannot see past.
func hasDup(body []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	seen := map[string]bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok {
			if seen[s] {
				return true
			}
			seen[s] = true
		}
	}
}

// FuzzAssemble feeds the Assembler arbitrary events (split on a blank
// line): it must not panic, and whatever Result returns must be valid JSON
// that Replay streams back, and that the Assembler rebuilds byte for byte
// from the replay: an assembled completion is in canonical form.
func FuzzAssemble(f *testing.F) {
	f.Add(strings.Join(liveText, "\n\n"))
	f.Add(strings.Join(liveTools, "\n\n"))
	f.Add(`{"choices":[{"index":-3,"delta":{"tool_calls":[{"function":{"arguments":"x"}},{"index":2}]},"finish_reason":"stop"}]}`)
	f.Add(`{"choices":[{"index":0,"delta":{"content":"a","x":{"y":[1]}},"logprobs":{"content":[null]},"finish_reason":"stop"}]}`)
	f.Fuzz(func(t *testing.T, stream string) {
		a := NewAssembler(1 << 20)
		for _, ev := range strings.Split(stream, "\n\n") {
			if a.Add([]byte(ev)) != nil {
				break
			}
		}
		out, err := a.Result()
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
		checkOneReading(t, out)
		events, err := Replay(Entry{Body: out}, true)
		if err != nil {
			return // content that has no delta form
		}
		b := NewAssembler(0)
		for _, ev := range events {
			data := strings.TrimSuffix(strings.TrimPrefix(string(ev), "data: "), "\n\n")
			if strings.Contains(data, "\n") {
				t.Fatalf("a line break inside an event: %q", ev)
			}
			if err := b.Add([]byte(data)); err != nil {
				t.Fatalf("replayed event %q: %v", data, err)
			}
		}
		again, err := b.Result()
		if err != nil {
			t.Fatalf("replay of %s: %v", out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("assembled from its replay:\n%s\nwas\n%s", again, out)
		}
	})
}

// checkOneReading fails if a message of the chat.completion body has a key
// twice, which decoders read differently.
func checkOneReading(t *testing.T, body []byte) {
	t.Helper()
	var c struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	for _, ch := range c.Choices {
		dec := json.NewDecoder(bytes.NewReader(ch.Message))
		dec.Token() // {
		seen := map[string]bool{}
		for dec.More() {
			k, _ := dec.Token()
			if seen[k.(string)] {
				t.Fatalf("key %q twice in %s", k, ch.Message)
			}
			seen[k.(string)] = true
			var v json.RawMessage
			dec.Decode(&v)
		}
	}
}
