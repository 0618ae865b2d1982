package bedrockapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Whatever a client sends, ConverseToChat and InvokeToMessages either
// refuse it with a 400 ValidationException or give a JSON object for the
// model of the URL; they never panic.
func FuzzRequests(f *testing.F) {
	for _, seed := range []string{
		`{"messages":[` + hi + `]}`,
		`{"messages":[` + hi + `,{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{"k":[1,{"a":null}]}}}]},` +
			`{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"json":{"x":"\u00e9"}},{"text":""}]}}]}],` + tools + `}`,
		`{"system":[{"text":"s"}],"messages":[{"role":"user","content":[{"image":{"format":"png","source":{"bytes":"AAAA"}}}]}]}`,
		`{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`,
		`{"messages":[{"role":"user","content":[{"text":"a\ud800b"}]}],"m\u0065ssages":1}`,
		`{"a":{"b":{"a":1,"a":2}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for name, run := range map[string]func() ([]byte, error){
			"converse": func() ([]byte, error) { return ConverseToChat("m", body, true) },
			"invoke":   func() ([]byte, error) { return InvokeToMessages("m", body, false) },
		} {
			out, err := run()
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Status != 400 || e.Type != TypeValidation || e.Message == "" {
					t.Fatalf("%s: refusal %#v", name, err)
				}
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("%s: output is not a JSON object: %v\n%s", name, err, out)
			}
			if string(m["model"]) != `"m"` {
				t.Fatalf("%s: model %s", name, m["model"])
			}
			if err := checkKeys("", out); err != nil {
				t.Fatalf("%s: output has a duplicate key: %v", name, err)
			}
			if strings.Contains(name, "invoke") {
				if _, ok := m["anthropic_version"]; ok {
					t.Fatalf("invoke: anthropic_version was passed on")
				}
			}
		}
	})
}
