package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func standard(s string) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// AppendString writes what encoding/json writes, for any bytes.
func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "\x00\x1f\n\r\t", "<html>&", "\u2028\u2029", "\xff\xfe", "é, 日本, 🎉", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), standard(s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s; encoding/json writes %s", s, got, want)
		}
		if got := AppendString([]byte("x"), []byte(s)); !bytes.Equal(got[1:], standard(s)) {
			t.Fatalf("the []byte form differs for %q: %s", s, got)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	s := "The quick brown fox jumps over the lazy dog, \"twice\".\n"
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

func TestKind(t *testing.T) {
	for raw, want := range map[string]string{`"x"`: "a string", ` {}`: "an object", "\n[1]": "an array", `true`: "a boolean",
		`false`: "a boolean", `null`: "null", `-1.5`: "a number", ``: "nothing", "  \t": "nothing"} {
		if got := Kind([]byte(raw)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", raw, got, want)
		}
	}
}
