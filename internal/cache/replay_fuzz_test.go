package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzReplay replays arbitrary stored bodies: Replay and WriteStream must
// agree, refuse with ErrNotCompletion or give well-framed server-sent
// events of valid JSON chunks ending in [DONE], bounded by the body's size;
// and the completion assembled from the events must say what the body
// says: per choice the role, content, refusal and other fields, tool
// calls, function_call, logprobs and finish_reason, and the usage.
// Seeds: testdata/fuzz/FuzzReplay/.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(longEntry().Body), true)
	f.Add([]byte(liveToolsWant), false)
	f.Add([]byte(liveTextWant), true)
	f.Fuzz(func(t *testing.T, body []byte, includeUsage bool) {
		e := Entry{Body: body}
		events, err := Replay(e, includeUsage)
		var w bytes.Buffer
		werr := WriteStream(&w, e, includeUsage)
		if err != nil || werr != nil {
			if !errors.Is(err, ErrNotCompletion) || !errors.Is(werr, ErrNotCompletion) || w.Len() > 0 {
				t.Fatalf("Replay %v, WriteStream %v after %d bytes", err, werr, w.Len())
			}
			return
		}
		if !bytes.Equal(bytes.Join(events, nil), w.Bytes()) {
			t.Fatal("Replay and WriteStream differ")
		}
		if n := w.Len(); n > maxReplay(len(body)) {
			t.Fatalf("%d bytes of events for a body of %d", n, len(body))
		}
		a := NewAssembler(0)
		for i, ev := range events {
			data := sseData(t, ev)
			if last := i == len(events)-1; last != (string(data) == "[DONE]") {
				t.Fatalf("event %d of %d: %q", i, len(events), ev)
			}
			if i < len(events)-1 && !json.Valid(data) {
				t.Fatalf("event %d is not JSON: %q", i, ev)
			}
			if err := a.Add(data); err != nil {
				t.Fatalf("event %q: %v", ev, err)
			}
		}
		out, err := a.Result()
		if err != nil {
			t.Fatalf("assembling the replay of %s: %v", body, err)
		}
		want, got := readCompletion(t, body, includeUsage), readCompletion(t, out, includeUsage)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the replay says another thing:\n got %+v\nwant %+v\nfrom %s\n  to %s", got, want, body, out)
		}
	})
}

// sseData returns the data of an event, which must be one "data:" line
// and a blank line.
func sseData(t *testing.T, ev []byte) []byte {
	t.Helper()
	data, ok := bytes.CutPrefix(ev, []byte("data: "))
	if data, ok = bytes.CutSuffix(data, []byte("\n\n")); !ok || bytes.ContainsAny(data, "\r\n") {
		t.Fatalf("not one data line: %q", ev)
	}
	return data
}

// said is what a chat.completion says, as a client decoding it reads it:
// exact keys in a message, the last of duplicates, null the same as
// absent; strings decoded (so spellings of one string compare equal).
type said struct {
	Choices map[int]saidChoice
	Usage   string
}

type saidChoice struct {
	Fields   map[string]string // message fields but tool calls, as canonical JSON
	Tools    []string          // id, type, name and arguments
	Logprobs string
	Finish   string
}

// readCompletion reads a body that Replay accepted, or its replay
// assembled; withUsage says whether the usage was replayed.
func readCompletion(t *testing.T, body []byte, withUsage bool) said {
	t.Helper()
	var c struct {
		Choices []struct {
			Index        int             `json:"index"`
			Message      json.RawMessage `json:"message"`
			Logprobs     json.RawMessage `json:"logprobs"`
			FinishReason json.RawMessage `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("replayed an unreadable body: %v", err)
	}
	s := said{Choices: map[int]saidChoice{}}
	if withUsage {
		s.Usage = canonicalJSON(t, c.Usage)
	}
	for _, ch := range c.Choices {
		var msg map[string]json.RawMessage
		if err := json.Unmarshal(ch.Message, &msg); err != nil || msg == nil {
			t.Fatalf("replayed a message that is not an object: %s", ch.Message)
		}
		sc := saidChoice{Fields: map[string]string{}, Finish: canonicalJSON(t, ch.FinishReason), Logprobs: logprobsSaid(t, ch.Logprobs)}
		if sc.Finish == "" {
			sc.Finish = `"stop"` // what a replay of a choice without one says
		}
		for k, v := range msg {
			if k == "tool_calls" {
				sc.Tools = toolsSaid(t, v)
			} else if k == "function_call" && !isNull(v) {
				sc.Fields[k] = functionSaid(t, v)
			} else if v := canonicalJSON(t, v); v != "" {
				sc.Fields[k] = v
			}
		}
		if role := sc.Fields["role"]; role == "" || role == `""` {
			sc.Fields["role"] = `"assistant"`
		}
		for _, k := range []string{"content", "refusal"} {
			if sc.Fields[k] == "" {
				sc.Fields[k] = "null"
			}
		}
		s.Choices[ch.Index] = sc
	}
	return s
}

// toolsSaid lists tool calls as "id type name arguments", read by exact
// keys.
func toolsSaid(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var calls []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &calls); err != nil {
		t.Fatalf("replayed tool_calls %s: %v", raw, err)
	}
	var out []string
	for _, c := range calls {
		typ := stringSaid(t, c["type"])
		if typ == "" {
			typ = "function"
		}
		out = append(out, stringSaid(t, c["id"])+" "+typ+" "+functionSaid(t, c["function"]))
	}
	return out
}

// functionSaid returns a function's "name arguments", read by exact keys.
func functionSaid(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var fn map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fn); err != nil && !isNull(raw) {
		t.Fatalf("replayed function %s: %v", raw, err)
	}
	return stringSaid(t, fn["name"]) + " " + stringSaid(t, fn["arguments"])
}

// stringSaid decodes a string that may be absent or null.
func stringSaid(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if !isNull(raw) && json.Unmarshal(raw, &s) != nil {
		t.Fatalf("replayed %s for a string", raw)
	}
	return s
}

// logprobsSaid returns the token lists of logprobs: content, then refusal.
func logprobsSaid(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var lp struct {
		Content []json.RawMessage `json:"content"`
		Refusal []json.RawMessage `json:"refusal"`
	}
	if isNull(raw) || json.Unmarshal(raw, &lp) != nil {
		return ""
	}
	var b []byte
	for _, l := range [][]json.RawMessage{lp.Content, lp.Refusal} {
		b = append(b, '[')
		for _, v := range l {
			b = append(b, canonicalJSON(t, v)...)
			b = append(b, ',')
		}
		b = append(b, ']')
	}
	return string(b)
}

// canonicalJSON re-encodes a JSON value with sorted keys and decoded
// strings, numbers as written; "" for absent or null.
func canonicalJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if isNull(raw) {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v in %q", err, raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
