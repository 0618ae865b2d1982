package vertex

import "testing"

func TestMessagesBody(t *testing.T) {
	cases := []struct {
		in   string
		beta []string
		want string
	}{
		{`{}`, nil, `{"anthropic_version":"vertex-2023-10-16"}`},
		{` { "model" : "c" } `, nil, `{"anthropic_version":"vertex-2023-10-16"}`},
		// Nested "model" keys belong to the content and stay.
		{`{"messages":[{"role":"user","content":[{"type":"tool_result","content":"{\"model\":1}"}]}],"tools":[{"name":"t","input_schema":{"properties":{"model":{}}}}],"model":"c"}`, nil,
			`{"anthropic_version":"vertex-2023-10-16","messages":[{"role":"user","content":[{"type":"tool_result","content":"{\"model\":1}"}]}],"tools":[{"name":"t","input_schema":{"properties":{"model":{}}}}]}`},
		// Escaped and repeated keys are found as a JSON reader finds them.
		{`{"m\u006fdel":"a","max_tokens":1,"model":"b","anthropic_version":"x","\u0061nthropic_version":"y"}`, nil,
			`{"anthropic_version":"vertex-2023-10-16","max_tokens":1}`},
		// The client's beta flags join the body, unless it has its own.
		{`{"max_tokens":1}`, []string{"a, b", "c"}, `{"anthropic_version":"vertex-2023-10-16","max_tokens":1,"anthropic_beta":["a","b","c"]}`},
		{`{"anthropic_beta":["z"]}`, []string{"a"}, `{"anthropic_version":"vertex-2023-10-16","anthropic_beta":["z"]}`},
	}
	for _, c := range cases {
		got, err := messagesBody([]byte(c.in), c.beta)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %s, %v\nwant %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `[]`, `{"a":}`, `{"a":1`, `{"a":1} {"b":2}`, `"x"`} {
		if got, err := messagesBody([]byte(bad), nil); err == nil {
			t.Errorf("%q: got %s, want an error", bad, got)
		}
	}
}
