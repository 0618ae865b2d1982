package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// quoteJSON writes s as a JSON string the way encoding/json does.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The text of a chat answer is the output_text of the response, whole or
// streamed in any pieces.
func TestRoundTripAnswerText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.String().Draw(t, "text")
		out, err := FromChat(chatBody(`{"role":"assistant","content":`+quoteJSON(text)+`}`, "stop"), Request{}, testID, created)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Output []struct {
				Content []struct{ Type, Text string }
			}
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Output) != 1 || r.Output[0].Content[0].Text != text ||
			r.Output[0].Content[0].Type != "output_text" {
			t.Fatalf("FromChat of %q: %s", text, out)
		}

		// The same text streamed, cut anywhere (at byte boundaries, as
		// JSON escapes keep any cut valid).
		s := NewStream(Request{}, testID, created)
		cuts := rapid.SliceOfN(rapid.IntRange(0, len(text)), 0, 5).Draw(t, "cuts")
		var streamed strings.Builder
		prev := 0
		for _, c := range append(cuts, len(text)) {
			if c < prev {
				continue
			}
			piece := text[prev:c]
			prev = c
			evs, err := s.Chunk([]byte(delta(`{"content":` + quoteJSON(piece) + `}`)))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Name == evTextDelta {
					var d struct{ Delta string }
					json.Unmarshal(e.Data, &d)
					streamed.WriteString(d.Delta)
				}
			}
		}
		s.Chunk([]byte(finish("stop")))
		s.Done()
		var final struct {
			Output []struct {
				Content []struct{ Text string }
			}
		}
		json.Unmarshal(s.Response(), &final)
		// Pieces cut inside a rune each read as U+FFFD, as encoding/json
		// reads them: compare with what the pieces say.
		want := streamedText(text, cuts)
		if final.Output[0].Content[0].Text != want || streamed.String() != want {
			t.Fatalf("streamed %q in pieces at %v: deltas %q, final %q", text, cuts, streamed.String(), final.Output[0].Content[0].Text)
		}
	})
}

// streamedText is text as its pieces decode one by one.
func streamedText(text string, cuts []int) string {
	var b strings.Builder
	prev := 0
	for _, c := range append(cuts, len(text)) {
		if c < prev {
			continue
		}
		var piece string
		json.Unmarshal([]byte(quoteJSON(text[prev:c])), &piece)
		b.WriteString(piece)
		prev = c
	}
	return b.String()
}

// A user's text is the chat message's text.
func TestRoundTripInputText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.String().Draw(t, "text")
		out, _, err := ToChat([]byte(`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":`+quoteJSON(text)+`}]}]}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Messages []struct{ Content string } }
		if err := json.Unmarshal(out, &c); err != nil || c.Messages[0].Content != text {
			t.Fatalf("ToChat of %q: %s", text, out)
		}
	})
}

// A function call answered by a chat target, stored, comes back to the
// next chat request as the same tool call: call_id, name and arguments.
func TestRoundTripFunctionCall(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.StringN(1, 40, -1).Draw(t, "call_id")
		name := rapid.StringMatching(`[a-zA-Z_][a-zA-Z0-9_-]{0,30}`).Draw(t, "name")
		args := rapid.String().Draw(t, "arguments")

		call := `{"id":` + quoteJSON(id) + `,"type":"function","function":{"name":` + quoteJSON(name) + `,"arguments":` + quoteJSON(args) + `}}`
		_, req := chat(t, `{"model":"m","input":"go"}`)
		resp, err := FromChat(chatBody(`{"role":"assistant","content":null,"tool_calls":[`+call+`]}`, "tool_calls"), req, testID, created)
		if err != nil {
			t.Fatal(err)
		}
		st, err := NewStored(req, resp, "a", created)
		if err != nil {
			t.Fatal(err)
		}
		// Through a store's file, too.
		data, err := encodeStored(&st)
		if err != nil {
			t.Fatal(err)
		}
		if st, err = decodeStored(data); err != nil {
			t.Fatal(err)
		}
		next := `{"model":"m","previous_response_id":"` + testID + `","input":[{"type":"function_call_output","call_id":` + quoteJSON(id) + `,"output":"ok"}]}`
		out, _ := chat(t, next, st.History()...)
		var c struct {
			Messages []struct {
				Role      string
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
				ToolCallID string `json:"tool_call_id"`
			}
		}
		if err := json.Unmarshal(out, &c); err != nil || len(c.Messages) != 3 {
			t.Fatalf("second turn: %s", out)
		}
		tc := c.Messages[1].ToolCalls
		want := struct{ id, name, args string }{decodedJSON(id), name, decodedJSON(args)}
		if len(tc) != 1 || tc[0].ID != want.id || tc[0].Function.Name != want.name || tc[0].Function.Arguments != want.args ||
			c.Messages[2].ToolCallID != want.id {
			t.Fatalf("the call came back as %s, want %+v", out, want)
		}
	})
}

// decodedJSON is s after a trip through JSON (invalid UTF-8 as U+FFFD).
func decodedJSON(s string) string {
	var out string
	json.Unmarshal([]byte(quoteJSON(s)), &out)
	return out
}
