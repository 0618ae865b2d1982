package aierr

import (
	"strings"
	"testing"
)

// An unknown code becomes Verdict.Code only when it is an HTTP token of at
// most MaxCodeLen bytes: the code goes into response headers and metric
// labels, and a hostile upstream must not put a line break or a non-ASCII
// byte there (issue 19).
func TestUnknownCodeIsAToken(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"error":{"code":"model_overloaded"}}`, "model_overloaded"},
		{`{"error":{"code":"Internal.Error-42"}}`, "Internal.Error-42"},
		{`{"error":{"code":"\u00fcberlastet"}}`, ""},
		{`{"error":{"code":"überlastet"}}`, ""},
		{`{"error":{"code":"a\r\nX-Evil:1"}}`, ""},
		{`{"error":{"code":"a\u000d\u000aX-Evil:1"}}`, ""},
		{`{"error":{"code":"tab\there"}}`, ""},
		{`{"error":{"code":"two words"}}`, ""},
		{`{"error":{"code":"a,b"}}`, ""},
		{`{"error":{"code":"(x)"}}`, ""},
		{`{"error":{"code":"\u0000"}}`, ""},
		{`{"error":{"code":"` + strings.Repeat("x", MaxCodeLen) + `"}}`, strings.Repeat("x", MaxCodeLen)},
		{`{"error":{"code":"` + strings.Repeat("x", MaxCodeLen+1) + `"}}`, ""},
		{`{"error":{"code":"` + strings.Repeat(`\u0078`, MaxCodeLen) + `"}}`, strings.Repeat("x", MaxCodeLen)},
		// A hostile code first, a good type after: the type names it.
		{`{"error":{"code":"\r\n","type":"busy_signal"}}`, "busy_signal"},
		// Duplicate keys: the last counts, as encoding/json reads it.
		{`{"error":{"code":"fine_code","code":"b\u00e4d"}}`, ""},
		{`{"error":{"code":"b\u00e4d","code":"fine_code"}}`, "fine_code"},
	} {
		v := Classify(503, nil, []byte(tt.body))
		if v.Code != tt.want {
			t.Errorf("body %.80s: Code %q; want %q", tt.body, v.Code, tt.want)
		}
		if v.Kind != Outage {
			t.Errorf("body %.80s: Kind %v; want the 503's Outage", tt.body, v.Kind)
		}
	}
	if v := ClassifyJobError("a\r\nX-Evil:1", "boom"); v.Code != "" {
		t.Errorf("job code %q; want none", v.Code)
	}
}

// FuzzCodeIsAToken: whatever the body, the code is empty or a token.
func FuzzCodeIsAToken(f *testing.F) {
	f.Add(503, []byte(`{"error":{"code":"\u00fcberlastet"}}`))
	f.Add(429, []byte(`{"error":{"type":"a\r\nb","code":"x"}}`))
	f.Add(200, []byte(`data: {"error":{"code":"\u2028"}}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		v := Classify(status, nil, body)
		if v.Code != "" && !isCode([]byte(v.Code)) {
			t.Fatalf("Code %q is not a token", v.Code)
		}
	})
}
