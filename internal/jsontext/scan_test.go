package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// AppendCompact writes what encoding/json's Compact writes for any valid
// JSON value, escaped quotes and backslashes in strings included.
func FuzzAppendCompactMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2 , {"b":"c \" d"}], "e" : null}`, `"\\\\"`, ` [ true,false ] `, `{"k":"\\\"}{"}`, `-1.5e3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if got := AppendCompact(nil, []byte(s)); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("AppendCompact(%q) = %q, want %q", s, got, want.Bytes())
		}
	})
}

func TestNestingWithin(t *testing.T) {
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	for _, tc := range []struct {
		in   string
		max  int
		want bool
	}{
		{`{"a":[1,{"b":2}]}`, 3, true},
		{`{"a":[1,{"b":2}]}`, 2, false},
		{`{"a":"[[[[[[[["}`, 1, true}, // brackets in a string do not nest
		{`{"a":"\"[[["}`, 1, true},
		{deep, 64, false},
		{deep, 65, true},
	} {
		if got := NestingWithin([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("NestingWithin(%.20q, %d) = %v, want %v", tc.in, tc.max, got, tc.want)
		}
	}
}
