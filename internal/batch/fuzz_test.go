package batch

import (
	"encoding/json"
	"testing"
)

// Any line is either refused with a code or read into a line whose body
// is a JSON object and whose url is supported; never a panic.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m"}}`,
		`{"custom_id":"a","custom_id":"b"}`, `{"cust\u006fm_id":"a","url":"/v1/embeddings","body":{}}`,
		`{"CUSTOM_ID":"a"}`, `[1]`, `{"custom_id":"a","url":"/v1/messages","body":{"stream":true}}`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		l, err := parseLine(1, text, "")
		if err != nil {
			if err.Code == "" || err.N != 1 {
				t.Fatalf("error %+v", err)
			}
			return
		}
		if l.CustomID == "" || !supported(l.URL) || !json.Valid(l.Body) || l.Body[0] != '{' {
			t.Fatalf("accepted %q as %+v", text, l)
		}
		out := appendOutput(nil, "id", &l, text, &Outcome{Verdict: "x", Err: "e"})
		if !json.Valid(out) {
			t.Fatalf("dead letter %q is not JSON", out)
		}
	})
}
