package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// delta is a chunk of choice 0 with the given delta.
func delta(d string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":` + d + `,"finish_reason":null}]}`
}

// finish is a chunk with choice 0's finish_reason.
func finish(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

const usageChunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}`

// feed passes chunks to s, then calls Done, and returns every event;
// a Chunk error fails the test.
func feed(t *testing.T, s *Stream, chunks ...string) []Event {
	t.Helper()
	var all []Event
	for _, c := range chunks {
		evs, err := s.Chunk([]byte(c))
		if err != nil {
			t.Fatalf("Chunk(%s): %v", c, err)
		}
		all = append(all, evs...)
	}
	return append(all, s.Done()...)
}

// names lists the events' names.
func names(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Name
	}
	return out
}

// checkEvents checks what holds for every stream: each event is one line
// of JSON whose type is its name, sequence numbers count from 0, and the
// stream ends with one terminal event.
func checkEvents(t *testing.T, evs []Event) {
	t.Helper()
	for i, e := range evs {
		if bytes.ContainsAny(e.Data, "\r\n") {
			t.Errorf("event %d has a line break: %s", i, e.Data)
		}
		v := decode(t, e.Data)
		if str(field(v, "type")) != e.Name {
			t.Errorf("event %d: type %q, name %q", i, str(field(v, "type")), e.Name)
		}
		if n, _ := field(v, "sequence_number").(json.Number).Int64(); n != int64(i) {
			t.Errorf("event %d (%s) has sequence_number %d", i, e.Name, n)
		}
		terminal := e.Name == evCompleted || e.Name == evIncomplete || e.Name == evFailed
		if terminal != (i == len(evs)-1) {
			t.Errorf("event %d of %d is %s", i, len(evs), e.Name)
		}
	}
}

// final is the response of a stream's last event.
func final(t *testing.T, evs []Event) any {
	t.Helper()
	return field(decode(t, evs[len(evs)-1].Data), "response")
}

func TestStreamText(t *testing.T) {
	s := NewStream(Request{Model: "asked"}, testID, created)
	evs := feed(t, s, delta(`{"role":"assistant","content":""}`), delta(`{"content":"Hel"}`), delta(`{"content":"lo"}`), finish("stop"), usageChunk, "[DONE]")
	checkEvents(t, evs)
	want := []string{evCreated, evInProgress, evItemAdded, evPartAdded, evTextDelta, evTextDelta,
		evTextDone, evPartDone, evItemDone, evCompleted}
	if got := names(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q\nwant %q", got, want)
	}
	r := final(t, evs)
	if str(field(r, "status")) != "completed" || str(field(r, "model")) != "up-model" {
		t.Errorf("final status %q model %q", field(r, "status"), field(r, "model"))
	}
	if got := str(field(r, "output", 0, "content", 0, "text")); got != "Hello" {
		t.Errorf("final text %q, want Hello", got)
	}
	if got := mustJSON(field(r, "usage")); got != `{"input_tokens":11,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":18}` {
		t.Errorf("final usage %s", got)
	}
	created := field(decode(t, evs[0].Data), "response")
	if str(field(created, "status")) != "in_progress" || field(created, "usage") != nil || len(field(created, "output").([]any)) != 0 {
		t.Errorf("response.created response %s", mustJSON(created))
	}
	delta := decode(t, evs[4].Data)
	if str(field(delta, "item_id")) != "msg_0123456789abcdef0000" || str(field(delta, "delta")) != "Hel" ||
		field(delta, "logprobs") == nil || mustJSON(field(delta, "output_index")) != "0" || mustJSON(field(delta, "content_index")) != "0" {
		t.Errorf("delta event %s", evs[4].Data)
	}
	if !bytes.Equal(s.Response(), mustRaw(t, evs[len(evs)-1].Data, "response")) {
		t.Errorf("Response() is not the final event's response")
	}
}

// mustRaw returns a member of a JSON object as it is written.
func mustRaw(t *testing.T, data []byte, key string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

func TestStreamToolCalls(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	evs := feed(t, s,
		delta(`{"role":"assistant","content":null}`),
		delta(`{"content":"Let me look."}`),
		delta(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get","arguments":""}}]}`),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}`),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`),
		delta(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"put","arguments":"{}"}}]}`),
		finish("tool_calls"), usageChunk)
	checkEvents(t, evs)
	want := []string{evCreated, evInProgress,
		evItemAdded, evPartAdded, evTextDelta, evTextDone, evPartDone, evItemDone,
		evItemAdded, evArgsDelta, evArgsDelta, evArgsDone, evItemDone,
		evItemAdded, evArgsDelta, evArgsDone, evItemDone,
		evCompleted}
	if got := names(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q\nwant %q", got, want)
	}
	added := field(decode(t, evs[8].Data), "item")
	if mustJSON(added) != `{"arguments":"","call_id":"call_a","id":"fc_0123456789abcdef0001","name":"get","status":"in_progress","type":"function_call"}` {
		t.Errorf("function_call added: %s", mustJSON(added))
	}
	out := field(final(t, evs), "output").([]any)
	if len(out) != 3 {
		t.Fatalf("output %s", mustJSON(out))
	}
	for i, want := range []struct{ callID, name, args string }{{"call_a", "get", `{"q":1}`}, {"call_b", "put", "{}"}} {
		o := out[i+1]
		if str(field(o, "call_id")) != want.callID || str(field(o, "name")) != want.name || str(field(o, "arguments")) != want.args || str(field(o, "status")) != "completed" {
			t.Errorf("output[%d] = %s, want %+v", i+1, mustJSON(o), want)
		}
	}
	done := decode(t, evs[11].Data)
	if str(field(done, "arguments")) != `{"q":1}` {
		t.Errorf("arguments.done %s", evs[11].Data)
	}
}

func TestStreamToolCallShapes(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		calls  []string // call_id/name/arguments of each output item
	}{{
		name: "the name after the id, arguments before the name",
		chunks: []string{
			delta(`{"tool_calls":[{"index":0,"id":"c1"}]}`),
			delta(`{"tool_calls":[{"index":0,"function":{"name":"f"}}]}`),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}`)},
		calls: []string{"c1/f/{}"},
	}, {
		name: "no index, no id: one call, and a generated call id",
		chunks: []string{
			delta(`{"tool_calls":[{"function":{"name":"f","arguments":"{\"a\""}}]}`),
			delta(`{"tool_calls":[{"function":{"arguments":":1}"}}]}`)},
		calls: []string{"call_0123456789abcdef0000/f/{\"a\":1}"},
	}, {
		name: "index jumps ahead",
		chunks: []string{
			delta(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}}]}`),
			delta(`{"tool_calls":[{"index":3,"id":"c2","function":{"name":"g","arguments":"{}"}}]}`)},
		calls: []string{"c1/f/{}", "c2/g/{}"},
	}, {
		name: "every call at index 0, told apart by id",
		chunks: []string{
			delta(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}}]}`),
			delta(`{"tool_calls":[{"index":0,"id":"c2","function":{"name":"g","arguments":"{}"}}]}`)},
		calls: []string{"c1/f/{}", "c2/g/{}"},
	}, {
		name: "whole calls in one chunk",
		chunks: []string{
			delta(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"c2","function":{"name":"g","arguments":"[]"}}]}`)},
		calls: []string{"c1/f/{}", "c2/g/[]"},
	}, {
		name: "a call with nothing at all",
		chunks: []string{
			delta(`{"tool_calls":[{"index":0}]}`)},
		calls: []string{"call_0123456789abcdef0000//"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStream(Request{}, testID, created)
			evs := feed(t, s, append(tt.chunks, finish("tool_calls"))...)
			checkEvents(t, evs)
			var got []string
			for _, o := range field(final(t, evs), "output").([]any) {
				got = append(got, str(field(o, "call_id"))+"/"+str(field(o, "name"))+"/"+str(field(o, "arguments")))
			}
			if !reflect.DeepEqual(got, tt.calls) {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
			// Every added function_call precedes its deltas and done.
			var open string
			for _, e := range evs {
				v := decode(t, e.Data)
				switch e.Name {
				case evItemAdded:
					open = str(field(v, "item", "id"))
				case evArgsDelta, evArgsDone:
					if str(field(v, "item_id")) != open {
						t.Errorf("%s for %s while %s is open", e.Name, field(v, "item_id"), open)
					}
				}
			}
		})
	}
}

func TestStreamToolCallGoingBack(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	feed0 := []string{
		delta(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{"}}]}`),
		delta(`{"tool_calls":[{"index":1,"id":"c2","function":{"name":"g","arguments":"{}"}}]}`),
	}
	for _, c := range feed0 {
		if _, err := s.Chunk([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Chunk([]byte(delta(`{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}`)))
	if !errors.Is(err, ErrBadChat) {
		t.Fatalf("a fragment for a closed call: error %v, want ErrBadChat", err)
	}
	evs := s.Fail("server_error", "the upstream stream broke")
	if len(evs) != 1 || evs[0].Name != evFailed {
		t.Errorf("Fail gave %q", names(evs))
	}
}

func TestStreamRefusal(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	evs := feed(t, s, delta(`{"role":"assistant","refusal":""}`), delta(`{"refusal":"I can't"}`), delta(`{"refusal":" help."}`), finish("stop"))
	checkEvents(t, evs)
	want := []string{evCreated, evInProgress, evItemAdded, evPartAdded, evRefusalDelta, evRefusalDelta,
		evRefusalDone, evPartDone, evItemDone, evCompleted}
	if got := names(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q\nwant %q", got, want)
	}
	if got := mustJSON(field(final(t, evs), "output", 0, "content")); got != `[{"refusal":"I can't help.","type":"refusal"}]` {
		t.Errorf("content %s", got)
	}
}

func TestStreamIncomplete(t *testing.T) {
	for _, tt := range []struct{ finish, reason string }{{"length", "max_output_tokens"}, {"content_filter", "content_filter"}} {
		s := NewStream(Request{}, testID, created)
		evs := feed(t, s, delta(`{"content":"Once"}`), finish(tt.finish), usageChunk)
		checkEvents(t, evs)
		last := evs[len(evs)-1]
		r := final(t, evs)
		if last.Name != evIncomplete || str(field(r, "status")) != "incomplete" || str(field(r, "incomplete_details", "reason")) != tt.reason {
			t.Errorf("finish %s: last event %s, response %s", tt.finish, last.Name, mustJSON(r))
		}
		if str(field(r, "output", 0, "status")) != "incomplete" {
			t.Errorf("finish %s: message status %s", tt.finish, field(r, "output", 0, "status"))
		}
	}
}

func TestStreamEmpty(t *testing.T) {
	// A stream with no chunks, or only a role chunk: an empty message, as
	// FromChat gives for an empty answer.
	for _, chunks := range [][]string{nil, {delta(`{"role":"assistant","content":""}`), finish("stop")}} {
		s := NewStream(Request{Model: "asked"}, testID, created)
		evs := feed(t, s, chunks...)
		checkEvents(t, evs)
		want := []string{evCreated, evInProgress, evItemAdded, evPartAdded, evTextDone, evPartDone, evItemDone, evCompleted}
		if got := names(evs); !reflect.DeepEqual(got, want) {
			t.Errorf("events %q\nwant %q", got, want)
		}
		r := final(t, evs)
		if str(field(r, "output", 0, "content", 0, "text")) != "" || str(field(r, "status")) != "completed" {
			t.Errorf("final %s", mustJSON(r))
		}
	}
}

func TestStreamCommit(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	evs, err := s.Chunk([]byte(delta(`{"role":"assistant","content":""}`)))
	if err != nil || s.Committed() || !reflect.DeepEqual(names(evs), []string{evCreated, evInProgress}) {
		t.Fatalf("role chunk: events %q err %v committed %v, want created and in_progress, uncommitted", names(evs), err, s.Committed())
	}
	if evs, _ := s.Chunk([]byte(usageChunk)); len(evs) != 0 || s.Committed() {
		t.Fatalf("usage chunk: %q committed %v", names(evs), s.Committed())
	}
	if _, err := s.Chunk([]byte(delta(`{"content":"a"}`))); err != nil || !s.Committed() {
		t.Fatalf("content chunk: err %v committed %v", err, s.Committed())
	}
}

func TestStreamFailBeforeContent(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	evs, _ := s.Chunk([]byte(delta(`{"role":"assistant"}`)))
	evs = append(evs, s.Fail("server_error", "upstream gone")...)
	checkEvents(t, evs)
	if got := names(evs); !reflect.DeepEqual(got, []string{evCreated, evInProgress, evFailed}) {
		t.Fatalf("events %q", got)
	}
	r := final(t, evs)
	if str(field(r, "status")) != "failed" || mustJSON(field(r, "error")) != `{"code":"server_error","message":"upstream gone"}` {
		t.Errorf("failed response %s", mustJSON(r))
	}
	// Fail alone, with nothing before it, is a whole stream too.
	evs = NewStream(Request{}, testID, created).Fail("server_error", "x")
	checkEvents(t, evs)
}

func TestStreamFailAfterContent(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	var evs []Event
	for _, c := range []string{delta(`{"content":"partial"}`), delta(`{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a"}}]}`)} {
		e, err := s.Chunk([]byte(c))
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e...)
	}
	evs = append(evs, s.Fail("server_error", "cut")...)
	checkEvents(t, evs)
	for _, e := range evs {
		if e.Name == evCompleted || e.Name == evIncomplete {
			t.Fatalf("a failed stream has %s", e.Name)
		}
	}
	r := final(t, evs)
	if str(field(r, "status")) != "failed" || str(field(r, "output", 0, "status")) != "completed" || str(field(r, "output", 1, "status")) != "incomplete" {
		t.Errorf("failed response %s", mustJSON(r))
	}
	if str(field(r, "output", 1, "arguments")) != `{"a` {
		t.Errorf("the partial call's arguments %q", field(r, "output", 1, "arguments"))
	}
	// Nothing after the end.
	if evs, err := s.Chunk([]byte(delta(`{"content":"more"}`))); !errors.Is(err, ErrStreamEnded) || evs != nil {
		t.Errorf("Chunk after Fail: %q %v", names(evs), err)
	}
	if evs := s.Done(); evs != nil {
		t.Errorf("Done after Fail: %q", names(evs))
	}
	if evs := s.Fail("x", "y"); evs != nil {
		t.Errorf("Fail after Fail: %q", names(evs))
	}
}

func TestStreamBadChunks(t *testing.T) {
	for _, c := range []string{
		`not json`, ``, `[]`, `"text"`, `{"choices":[{"delta":{"content":"x"}}]`,
		`{"error":{"message":"overloaded","type":"server_error"}}`,
		delta(`{"tool_calls":["x"]}`),
		`{"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}`,
	} {
		s := NewStream(Request{}, testID, created)
		evs, err := s.Chunk([]byte(c))
		if !errors.Is(err, ErrBadChat) {
			t.Errorf("Chunk(%s) = %q, %v; want ErrBadChat", c, names(evs), err)
		}
	}
	// A bad chunk changes nothing: the stream goes on.
	s := NewStream(Request{}, testID, created)
	s.Chunk([]byte(`garbage`))
	evs := feed(t, s, delta(`{"content":"ok"}`), finish("stop"))
	checkEvents(t, evs)
}

func TestStreamOddChunks(t *testing.T) {
	// Chunks that are odd but not wrong add nothing, or what they say.
	s := NewStream(Request{}, testID, created)
	evs := feed(t, s,
		`{"choices":[]}`,
		`{"choices":[{"index":1,"delta":{"content":"other choice"}}]}`,
		`{"choices":[{"index":0,"delta":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"parts"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"\u00e9"},"finish_reason":null}],"usage":null}`,
		finish("stop"),
		delta(`{"content":"after the finish"}`),
		usageChunk)
	checkEvents(t, evs)
	if got := str(field(final(t, evs), "output", 0, "content", 0, "text")); got != "partsé" {
		t.Errorf("text %q, want partsé", got)
	}
}

func TestStreamEventsAreNotChangedLater(t *testing.T) {
	s := NewStream(Request{}, testID, created)
	first, _ := s.Chunk([]byte(delta(`{"content":"a"}`)))
	kept := make([][]byte, len(first))
	for i, e := range first {
		kept[i] = bytes.Clone(e.Data)
	}
	for i := range 100 {
		s.Chunk([]byte(delta(`{"content":"` + strings.Repeat("x", i) + `"}`)))
	}
	s.Done()
	for i, e := range first {
		if !bytes.Equal(e.Data, kept[i]) {
			t.Fatalf("event %d changed after later calls", i)
		}
	}
}

func TestStreamAgreesWithFromChat(t *testing.T) {
	_, req := chat(t, `{"model":"m","input":"q","instructions":"i","tools":[{"type":"function","name":"f"}],"metadata":{"a":"b"}}`)
	s := NewStream(req, testID, created)
	evs := feed(t, s,
		delta(`{"role":"assistant","content":"Hi"}`),
		delta(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`),
		finish("tool_calls"), usageChunk)
	answer := chatBody(`{"role":"assistant","content":"Hi","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "tool_calls")
	whole, err := FromChat(answer, req, testID, created)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, s.Response(), whole) {
		t.Errorf("stream's response\n%s\nFromChat's\n%s", s.Response(), whole)
	}
	_ = evs
}
