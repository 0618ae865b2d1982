package keys

import (
	"errors"
	"strings"
	"testing"
)

// Bodies a hostile admin client (or a confused script) might send: each
// is refused with the field it is about, never half-read.
func TestDecodeRefusesAmbiguousBodies(t *testing.T) {
	for _, c := range []struct{ body, field, msg string }{
		{`{"name":"a","name":"b"}`, "name", "more than once"},
		{`{"name":"a","n\u0061me":"b"}`, "name", "more than once"},
		{`{"name":"a","limits":{"rpm":1,"rp\u006d":100000}}`, "limits.rpm", "more than once"},
		{`{"NAME":"a"}`, "NAME", "unknown field"},
		{`{"name":"a","key":"fbx_mine"}`, "key", "unknown field"},
		{`{"name":"a","limits":{"max_in_flight":3}}`, "limits.max_in_flight", "unknown field"},
		{`{"name":"a","weight":"2"}`, "weight", "a number"},
		{`{"name":"a","models":"chat"}`, "models", "a list"},
		{`{"name":"a","limits":[1]}`, "limits", "an object"},
		{`{"name":"a"} {"name":"b"}`, "", "one JSON object"},
		{`["name"]`, "", "a JSON object"},
		{`{"name":"a",`, "", "not valid JSON"},
		{`{"name":""}`, "name", "needs a name"},
		{`{"name":"a\nb"}`, "name", "printable"},
		{`{"name":"a","limits":{"rpm":-1}}`, "limits.rpm", "negative"},
		{`{"name":"a","budget":{"daily":-0.5}}`, "budget.daily", "USD"},
		{`{"name":"a","weight":100000}`, "weight", "1 to 1000"},
		{`{"name":"` + strings.Repeat("x", 200) + `"}`, "name", "at most 128"},
	} {
		_, err := DecodeSpec([]byte(c.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("%s: got %v, want field %q with %q", c.body, err, c.field, c.msg)
		}
	}
}

func TestDecodePatch(t *testing.T) {
	p, err := DecodePatch([]byte(`{"rotate":true,"limits":{"tpm":5000},"budget":{"monthly":30}}`))
	if err != nil || !p.Rotate || p.Limits.RPM != nil || *p.Limits.TPM != 5000 || *p.Budget.Monthly != 30 || p.Models != nil {
		t.Fatalf("%+v %v", p, err)
	}
	for body, field := range map[string]string{
		`{"name":"other"}`:          "name",
		`{"rotate":"yes"}`:          "rotate",
		`{"rotate":true,"id":"x"}`:  "id",
		`{"weight":1,"weight":999}`: "weight",
	} {
		var fe *FieldError
		if _, err := DecodePatch([]byte(body)); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want field %s", body, err, field)
		}
	}
}

func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(`{"name":"a","models":["x"],"limits":{"rpm":1},"budget":{"daily":1},"weight":2}`))
	f.Add([]byte(`{"name":"a","n\u0061me":"b"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := DecodeSpec(body)
		if err == nil && (s.Name == "" || s.Check() != nil) {
			t.Fatalf("accepted %q as %+v", body, s)
		}
	})
}
