package aireq

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// readAny reads the value at r into what encoding/json decodes it to (with
// UseNumber): keys decoded, the last duplicate winning. It checks the Text
// methods against each other on the way.
func readAny(t *testing.T, r *Reader) (any, bool) {
	switch r.Kind() {
	case Object:
		m := map[string]any{}
		ok := r.Object(func(k Text) bool {
			name := checkText(t, k)
			v, ok := readAny(t, r)
			m[name] = v
			return ok
		})
		return m, ok
	case Array:
		a := []any{}
		ok := r.Array(func() bool {
			v, ok := readAny(t, r)
			a = append(a, v)
			return ok
		})
		return a, ok
	case String:
		s, ok := r.ReadString()
		return checkText(t, s), ok
	}
	v, ok := r.Value()
	switch {
	case !ok:
		return nil, false
	case string(v) == "null":
		return nil, true
	case string(v) == "true" || string(v) == "false":
		return string(v) == "true", true
	}
	return json.Number(v), true
}

// checkText checks that Is, Bytes and Decode agree with String, and
// returns String.
func checkText(t *testing.T, s Text) string {
	t.Helper()
	str := s.String()
	if !s.Is(str) || s.Is(str+"x") || (str != "" && s.Is(str[1:])) {
		t.Fatalf("Text %q: Is disagrees with String %q", s.Raw(), str)
	}
	var small [4]byte
	if b := s.Bytes(small[:0]); string(b) != str {
		t.Fatalf("Text %q: Bytes %q, String %q", s.Raw(), b, str)
	}
	buf := make([]byte, len(str))
	if n, all := s.Decode(buf); !all || string(buf[:n]) != str {
		t.Fatalf("Text %q: Decode %q %v, String %q", s.Raw(), buf[:n], all, str)
	}
	if len(str) > 0 {
		n, all := s.Decode(buf[:len(str)-1])
		if all || !strings.HasPrefix(str, string(buf[:n])) {
			t.Fatalf("Text %q: Decode into %d bytes gave %q %v", s.Raw(), len(str)-1, buf[:n], all)
		}
	}
	if (len(str) == 0) != (len(s.Raw()) == 0) {
		t.Fatalf("Text %q decodes to %q", s.Raw(), str)
	}
	return str
}

// FuzzReaderMatchesEncodingJSON checks the Reader against encoding/json:
// a strict Reader reads a value to the end exactly when json.Valid accepts
// it, whether it reads every value or skips them, and then reads what
// encoding/json decodes (escaped keys decoded, the last duplicate winning,
// invalid UTF-8 as U+FFFD); a lenient Reader reads the same from valid
// JSON.
func FuzzReaderMatchesEncodingJSON(f *testing.F) {
	for _, s := range readerCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		isValid := json.Valid(data)
		skip := NewStrictReader(data)
		if _, ok := skip.Value(); (ok && skip.End()) != isValid {
			t.Fatalf("strict Value(%q): %v, json.Valid %v", data, ok && skip.End(), isValid)
		}
		r := NewStrictReader(data)
		got, ok := readAny(t, &r)
		if (ok && r.End()) != isValid {
			t.Fatalf("strict read of %q: %v, json.Valid %v", data, ok && r.End(), isValid)
		}
		if !isValid {
			lenient := NewReader(data) // no panic
			lenient.Value()
			lenient = NewReader(data)
			readAny(t, &lenient)
			return
		}
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("decoding %q: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("strict read of %q: %#v; encoding/json %#v", data, got, want)
		}
		lenient := NewReader(data)
		if got, ok := readAny(t, &lenient); !ok || !lenient.End() || !reflect.DeepEqual(got, want) {
			t.Fatalf("lenient read of %q: %#v %v; encoding/json %#v", data, got, ok, want)
		}
	})
}

var readerCases = []string{
	`{"a":1,"a":2}`, `{"c\u006fntent":"x","content":"y"}`, `{"\ud83d\ude00":"\ud800\u0041"}`,
	"{\"\xff\":\"\xfe\"}", `[1,2.5,-0,1e3,1E+2,-1.5e-3]`, `{"a":[{"b":[[],{}]}],"c":null,"d":true,"e":false}`,
	` {"a" : "b" } `, `"\/\b\f\n\r\t\"\\"`, `123`, `-`, `01`, `1.`, `1e`, `.5`, `+1`, `[1,]`, `{"a":1,}`,
	`{"a"}`, `{"a":}`, `{,}`, `[,1]`, `tru`, `truex`, `nul`, `[true false]`, `{"a":1 "b":2}`,
	"\"a\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `{"a":"b"}}`, `{"a":"b"`, `[`, `]`, `{]`, `[}`, ``, ` `,
	"\xef\xbb\xbf{}", `{"a":[1,2}`, `[{"a":1]}`, `{"":""}`, `{"a\\":1}`, `"\\\""`,
}

func TestReaderDepth(t *testing.T) {
	for _, n := range []int{63, 64, 65, 200, maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, pair := range [][2]string{{"[", "]"}, {`{"a":`, "}"}} {
			data := []byte(strings.Repeat(pair[0], n) + "1" + strings.Repeat(pair[1], n))
			want := json.Valid(data)
			r := NewStrictReader(data)
			if _, ok := r.Value(); (ok && r.End()) != want {
				t.Errorf("%d levels of %s: strict Value %v, json.Valid %v", n, pair[0], ok, want)
			}
			// Read partly by hand, partly skipped.
			r = NewStrictReader(data)
			var got bool
			if pair[0] == "[" {
				got = r.Array(func() bool { return r.Array(func() bool { return true }) })
			} else {
				got = r.Object(func(Text) bool { return r.Object(func(Text) bool { return true }) })
			}
			if n >= 2 && (got && r.End()) != want {
				t.Errorf("%d levels of %s: strict read %v, json.Valid %v", n, pair[0], got, want)
			}
			// A lenient Reader has no limit.
			l := NewReader(data)
			if _, ok := l.Value(); !ok || !l.End() {
				t.Errorf("%d levels of %s: lenient Value %v", n, pair[0], ok)
			}
		}
	}
}

func TestReaderObject(t *testing.T) {
	r := NewStrictReader([]byte(`{"t\u0079pe":"a","skip":{"x":[1,{"y":"}"}]},"type":"b","n":12,"s":"x"}`))
	var types []string
	var n []byte
	ok := r.Object(func(k Text) bool {
		switch {
		case k.Is("type"):
			s, _ := r.ReadString()
			types = append(types, s.String())
		case k.Is("n"):
			n, _ = r.Value()
		case k.Is("s"):
			if _, ok := r.Value(); !ok { // not left unread: a string read as a value
				t.Error("s")
			}
			r.ReadString() // nothing: the value was read
		}
		return true
	})
	if !ok || !r.End() || strings.Join(types, ",") != "a,b" || string(n) != "12" {
		t.Fatalf("read %v %q %s", ok, types, n)
	}
	// Stopping stops the whole reading, inner and outer.
	r = NewReader([]byte(`{"a":{"b":1,"c":2},"d":3}`))
	calls := 0
	if r.Object(func(Text) bool {
		calls++
		return r.Object(func(Text) bool { calls++; return false })
	}) || calls != 2 || r.Kind() != Invalid {
		t.Fatalf("stop: %d calls", calls)
	}
	// A value of another kind is left to be skipped.
	r = NewReader([]byte(`{"a":[1,2],"b":"x"}`))
	var b Text
	if !r.Object(func(k Text) bool {
		if _, ok := r.ReadString(); k.Is("a") && ok {
			t.Error("an array read as a string")
		}
		if k.Is("b") {
			b, _ = r.ReadString() // already read above: nothing
		}
		return true
	}) || len(b.Raw()) != 0 {
		t.Fatalf("kinds: %q", b.Raw())
	}
}

func TestReaderCut(t *testing.T) {
	// A lenient Reader keeps what came before the cut; a number cut by the
	// end is not read, a literal is.
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"a":"x","b":12`, "a=x"},
		{`{"a":"x","b":true`, "a=x b=true"},
		{`{"a":"x","b":"y`, "a=x"},
		{`{"a":{"c":"d"},"b":[1,`, "a.c=d b=1"},
		{`12`, "=12"},
	} {
		var got []string
		var walk func(r *Reader, path string)
		walk = func(r *Reader, path string) {
			switch r.Kind() {
			case Object:
				r.Object(func(k Text) bool {
					p := k.String()
					if path != "" {
						p = path + "." + p
					}
					walk(r, p)
					return true
				})
			case Array:
				r.Array(func() bool { walk(r, path); return true })
			case String:
				if s, ok := r.ReadString(); ok {
					got = append(got, path+"="+s.String())
				}
			default:
				if v, ok := r.Value(); ok {
					got = append(got, path+"="+string(v))
				}
			}
		}
		r := NewReader([]byte(tc.in))
		walk(&r, "")
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: read %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTextBytes(t *testing.T) {
	r := NewReader([]byte(`["plain","caf\u00e9 \ud83d\ude00", "` + strings.Repeat("x", 40) + "\xff" + `"]`))
	var got []string
	r.Array(func() bool {
		s, _ := r.ReadString()
		var buf [8]byte
		got = append(got, string(s.Bytes(buf[:0])))
		return true
	})
	if len(got) != 3 || got[0] != "plain" || got[1] != "café 😀" || got[2] != strings.Repeat("x", 40)+"\uFFFD" {
		t.Fatalf("%q", got)
	}
}

func BenchmarkReader(b *testing.B) {
	for _, strict := range []bool{false, true} {
		name := "lenient"
		if strict {
			name = "strict"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(chatBody)))
			for b.Loop() {
				r := Reader{b: chatBody, strict: strict}
				r.Object(func(k Text) bool { return !k.Is("user") })
			}
		})
	}
}

// TestPlainRun checks the word-at-a-time scan against a byte loop, for
// every byte at every position of a word and across words.
func TestPlainRun(t *testing.T) {
	naive := func(b []byte, i, end int) int {
		for i < end && textByte[b[i]] {
			i++
		}
		return i
	}
	for pos := range 20 {
		for c := range 256 {
			for _, second := range []int{-1, 0, 0x7f, 0x80, '"'} {
				b := []byte(strings.Repeat("a", 20))
				b[pos] = byte(c)
				if second >= 0 && pos+1 < len(b) {
					b[pos+1] = byte(second)
				}
				for start := range 3 {
					for _, end := range []int{len(b), len(b) - 1, pos + 1, 8 + start} {
						if end < start {
							continue
						}
						if got, want := plainRun(b, start, end), naive(b, start, end); got != want {
							t.Fatalf("plainRun(%q, %d, %d) = %d; want %d", b, start, end, got, want)
						}
					}
				}
			}
		}
	}
}
