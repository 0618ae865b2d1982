package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func FuzzToChat(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","instructions":"x","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"https://x"}]}]}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":{"type":"function","name":"f"}}`,
		`{"model":"m","input":"q","text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"},"strict":true}},"reasoning":{"effort":"low"},"stream":true,"max_output_tokens":5}`,
		`{"model":"m","model":"n","\u0069nput":"q","tools":[{"type":"web_search"}]}`,
		`{"model":"m","input":[{"role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"r"}]}],"metadata":{"a":"b"}}`,
		`{"model":"m","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"a","name":"f","arguments":"{\"x\":1}"},{"type":"function_call","call_id":"b","name":"g","arguments":""},` +
			`{"type":"function_call_output","call_id":"a","output":[{"type":"input_text","text":"1"},{"type":"input_text","text":"2"}]},{"type":"function_call_output","call_id":"b","output":"\u00e9"},` +
			`{"role":"assistant","content":[{"type":"output_text","text":"done"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"[]"},{"type":"function_call_output","call_id":"c","output":""}]}`,
		`[1,2]`, `{"model":"m","input":[[[[[]]]]]}`, "{\"model\":\"\xff\",\"input\":\"\\ud800\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, req, err := ToChat(body, nil)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == "" || e.Message == "" {
				t.Fatalf("error %v (%T) is not a complete *Error", err, err)
			}
			return
		}
		var c struct {
			Model    *string          `json:"model"`
			Messages []map[string]any `json:"messages"`
			Stream   bool             `json:"stream"`
		}
		if !json.Valid(out) || json.Unmarshal(out, &c) != nil || c.Model == nil || len(c.Messages) == 0 {
			t.Fatalf("ToChat(%q) wrote %s", body, out)
		}
		if bytes.ContainsAny(out, "\n\r") {
			t.Fatalf("ToChat wrote a line break: %s", out)
		}
		for i, m := range c.Messages {
			switch m["role"] {
			case "system", "developer", "user", "assistant", "tool":
			default:
				t.Fatalf("message %d has role %v: %s", i, m["role"], out)
			}
		}
		// The fields read are those encoding/json reads into a map: the
		// last of duplicates, keys exact.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("ToChat accepted what encoding/json refuses (%v): %q", err, body)
		}
		var model string
		if json.Unmarshal(m["model"], &model) != nil || model != req.Model || *c.Model != model {
			t.Fatalf("model %q (chat %q), encoding/json reads %s", req.Model, *c.Model, m["model"])
		}
		var stream bool
		json.Unmarshal(m["stream"], &stream)
		if stream != req.Stream || c.Stream != stream {
			t.Fatalf("stream %v, encoding/json reads %s", req.Stream, m["stream"])
		}
		again, _, _ := ToChat(body, nil)
		if !bytes.Equal(out, again) {
			t.Fatalf("two translations differ:\n%s\n%s", out, again)
		}
		checkCallsKept(t, body, out)
		checkAssistantRoundTrip(t, out, req)
	})
}

func FuzzStream(f *testing.F) {
	f.Add([]byte(delta(`{"role":"assistant","content":""}`)+"\n"+delta(`{"content":"hi"}`)+"\n"+finish("stop")+"\n"+usageChunk), byte(0))
	f.Add([]byte(delta(`{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{"}}]}`)+"\n"+
		delta(`{"tool_calls":[{"index":1,"id":"d","function":{"name":"g"}}]}`)+"\n"+
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}`)), byte(1))
	f.Add([]byte(delta(`{"refusal":"no"}`)+"\n"+delta(`{"content":"yes"}`)+"\n"+finish("length")+"\n[DONE]\n"+delta(`{"content":"late"}`)), byte(2))
	f.Add([]byte("garbage\n{}\n[]\n{\"choices\":[{\"delta\":{\"content\":7}}]}\n"+`{"error":{"message":"x"}}`), byte(3))
	f.Fuzz(func(t *testing.T, data []byte, end byte) {
		s := NewStream(Request{Model: "m"}, testID, created)
		var evs []Event
		for _, line := range bytes.Split(data, []byte("\n")) {
			got, _ := s.Chunk(line)
			evs = append(evs, got...)
			if end&4 != 0 && s.Committed() {
				break // fail mid-stream, right after the commit
			}
		}
		committed := s.Committed()
		var last []Event
		if end&1 == 0 {
			last = s.Done()
		} else {
			last = s.Fail("server_error", "broken")
		}
		evs = append(evs, last...)
		if s.Response() == nil && len(last) > 0 {
			t.Fatal("no Response after the end")
		}
		ended := false
		for i, e := range evs {
			var v struct {
				Type string `json:"type"`
				Seq  *int   `json:"sequence_number"`
			}
			if bytes.ContainsAny(e.Data, "\r\n") || json.Unmarshal(e.Data, &v) != nil || v.Type != e.Name || v.Seq == nil || *v.Seq != i {
				t.Fatalf("event %d: %s %s", i, e.Name, e.Data)
			}
			if ended {
				t.Fatalf("event %d (%s) after the terminal event", i, e.Name)
			}
			ended = e.Name == evCompleted || e.Name == evIncomplete || e.Name == evFailed
		}
		if len(evs) > 0 && !ended {
			t.Fatalf("the stream has no terminal event: last %s", evs[len(evs)-1].Name)
		}
		if end&1 == 1 && committed && len(last) > 0 && last[len(last)-1].Name != evFailed {
			t.Fatalf("Fail after content ended with %s", last[len(last)-1].Name)
		}
		if s.Response() != nil && !json.Valid(s.Response()) {
			t.Fatalf("Response is not JSON: %s", s.Response())
		}
	})
}
