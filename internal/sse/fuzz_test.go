package sse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// fuzzMax is the event size limit under fuzzing: small, so that the limit
// is reached often.
const fuzzMax = 512

// rawSlack is how far past the limit an event's Raw may go: none.
const rawSlack = 0

func addSeeds(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data: a\r\n\r\n", "data: a\r\r\n", "\xEF\xBB\xBFdata: x\n\n",
		": c\n\nevent: e\ndata: 1\ndata: 2\nid: 3\nretry: 10\n\n", "data: a\n\ndata: b",
		"event: x\n", "data\n\ndata:\n\n",
	} {
		f.Add([]byte(s))
	}
	names, _ := filepath.Glob("testdata/*.sse")
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
}

// FuzzReader checks, for any stream: no panic; no event's Raw over the
// limit; the joined Raw of the events is a prefix of the stream
// (pass-through fidelity); the same events whether the stream arrives whole
// or one byte at a time; and HasContent agrees with encoding/json.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := fuzzRead(t, bytes.NewReader(in), in)
		bytewise := fuzzRead(t, iotest.OneByteReader(bytes.NewReader(in)), in)
		if errors.Is(whole.err, ErrEventTooLarge) || errors.Is(bytewise.err, ErrEventTooLarge) {
			// A "\n" after "\r" may fall in either of two events, so the
			// two readings can differ by one byte at the limit.
			return
		}
		if whole.err != bytewise.err || whole.tail != bytewise.tail || !equalEvents(whole.events, bytewise.events) {
			t.Fatalf("whole read %q %v %q\nbyte-wise read %q %v %q",
				whole.events, whole.err, whole.tail, bytewise.events, bytewise.err, bytewise.tail)
		}
	})
}

func fuzzRead(t *testing.T, rd io.Reader, in []byte) readResult {
	var res readResult
	var joined []byte
	r := NewReader(rd, Options{MaxEventSize: fuzzMax})
	for {
		ev, err := r.Next()
		if err == nil || errors.Is(err, ErrIncomplete) {
			if len(ev.Raw) > fuzzMax+rawSlack {
				t.Fatalf("Raw of %d bytes, limit %d", len(ev.Raw), fuzzMax)
			}
			if len(ev.Data) > len(ev.Raw) {
				t.Fatalf("Data longer than Raw")
			}
			joined = append(joined, ev.Raw...)
			if !bytes.HasPrefix(in, joined) {
				t.Fatalf("joined Raw %q is not a prefix of %q", joined, in)
			}
			if got, want := HasContent(ev), decodeContent(ev.Name, ev.Data); got != want {
				t.Fatalf("HasContent(%q, %q) = %v, encoding/json says %v", ev.Name, ev.Data, got, want)
			}
		}
		switch {
		case err == nil:
			res.events = append(res.events, toGot(ev))
			continue
		case errors.Is(err, ErrIncomplete):
			res.tail = toGot(ev)
		}
		res.err = err
		return res
	}
}

// FuzzHasContent checks that HasContent and encoding/json agree on any
// data, with and without the names of Anthropic events. HasContent has no
// fallback to encoding/json: escaped keys, duplicates and deep nesting are
// its own to read.
func FuzzHasContent(f *testing.F) {
	names, _ := filepath.Glob("testdata/*.sse")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		r := NewReader(bytes.NewReader(b), Options{})
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			f.Add(ev.Name, bytes.Clone(ev.Data))
		}
	}
	for _, d := range []string{
		`{"choices":[{"delta":{"con\u0074ent":"a"}}]}`,
		`{"choices":[{"delta":{"content":"a","content":""}}]}`,
		`{"\u0065rror":null,"error":{},"choices":[{"d\u0065lta":{"tool_calls":[{}]}}]}`,
		`{"type":"content_block_st\u0061rt","content_block":{"type":"th\u0069nking","thinking":"\ud800"}}`,
		"{\"choices\":[{\"delta\":{\"content\xff\":\"a\",\"refusal\":\"\xfe\"}}]}",
		`{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"type":"content_block_delta"}`,
	} {
		f.Add("", []byte(d))
	}
	f.Add("message_delta", []byte(`{"delta":{"stop_reason":"end_turn","stop_re\u0061son":""}}`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if got, want := HasContent(Event{Name: name, Data: data}), decodeContent(name, data); got != want {
			t.Fatalf("HasContent(%q, %q) = %v, encoding/json says %v", name, data, got, want)
		}
	})
}
