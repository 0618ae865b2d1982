package aireq

import (
	"encoding/json"
	"testing"
)

func TestScan(t *testing.T) {
	for _, tc := range []struct {
		body        string
		model       string
		stream, inc bool
		maxTokens   int
		object      bool
	}{
		{`{"model":"gpt-4.1","messages":[]}`, "gpt-4.1", false, false, 0, true},
		{` { "messages" : [{"role":"user","content":"say \"model\": {x}"}], "model" : "m\"q", "stream":true, "max_tokens": 64 }`, `m\"q`, true, false, 64, true},
		{`{"metadata":{"model":"inner"},"model":"outer","max_completion_tokens":9}`, "outer", false, false, 9, true},
		{`{"stream":true,"stream_options":{"include_usage":true},"model":"x"}`, "x", true, true, 0, true},
		{`{"stream":false,"model":null}`, "", false, false, 0, true},
		{`{}`, "", false, false, 0, true},
		{`[{"model":"x"}]`, "", false, false, 0, false},
		{`{"model":"x","stream":true`, "x", true, false, 0, false},
		{`{"model":"trunc`, "", false, false, 0, false},
		{``, "", false, false, 0, false},
	} {
		f := Scan([]byte(tc.body))
		if string(f.Model) != tc.model || f.Stream != tc.stream || f.IncludeUsage != tc.inc || f.MaxTokens != tc.maxTokens || f.Object != tc.object {
			t.Errorf("Scan(%s) = %+v; want model %q stream %v usage %v max %d object %v", tc.body, f, tc.model, tc.stream, tc.inc, tc.maxTokens, tc.object)
		}
	}
}

func TestWithModelKeepsTheRest(t *testing.T) {
	body := []byte(`{"messages":[{"role":"user","content":"hi"}], "model": "gpt-4.1" ,"stream":true}`)
	f := Scan(body)
	if f.Messages != '[' {
		t.Fatalf("Messages = %q", f.Messages)
	}
	out := f.WithModel(body, `dep"loy`)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("rewritten body is not JSON: %s", out)
	}
	if m["model"] != `dep"loy` || m["stream"] != true || len(m["messages"].([]any)) != 1 {
		t.Fatalf("rewritten body %s", out)
	}
	if got := f.WithModel(body, "gpt-4.1"); &got[0] != &body[0] {
		t.Fatal("the same model should reuse the body")
	}
}

func FuzzScan(f *testing.F) {
	f.Add(`{"model":"gpt-4.1","stream":true,"max_tokens":5}`)
	f.Add(`{"a":[{"b":"}"}],"model":"\\"x","stream_options":{"include_usage":true}}`)
	f.Fuzz(func(t *testing.T, body string) {
		fs := Scan([]byte(body))
		if fs.Model != nil {
			out := fs.WithModel([]byte(body), "m")
			if len(out) > len(body)+16 {
				t.Fatalf("rewrite grew the body from %d to %d", len(body), len(out))
			}
		}
	})
}

func TestWithIncludeUsage(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","stream":true}`, `{"stream_options":{"include_usage":true},"model":"m","stream":true}`},
		{` { "model":"m" }`, ` {"stream_options":{"include_usage":true}, "model":"m" }`},
		{`{}`, `{"stream_options":{"include_usage":true}}`},
		{`{ }`, `{"stream_options":{"include_usage":true} }`},
		// Already there, or not an object: unchanged.
		{`{"stream_options":{"include_usage":false},"model":"m"}`, `{"stream_options":{"include_usage":false},"model":"m"}`},
		{`{"stream_options":null}`, `{"stream_options":null}`},
		{`[1]`, `[1]`},
		{`{"model":"m"`, `{"model":"m"`},
	} {
		f := Scan([]byte(tc.body))
		got := f.WithIncludeUsage([]byte(tc.body))
		if string(got) != tc.want {
			t.Errorf("WithIncludeUsage(%s) = %s, want %s", tc.body, got, tc.want)
		}
		if string(got) != tc.body && !Scan(got).IncludeUsage {
			t.Errorf("WithIncludeUsage(%s) = %s: Scan does not see include_usage", tc.body, got)
		}
	}
}

// FuzzWithIncludeUsage checks that a rewritten body is still JSON when the
// original was, and that it then asks for usage.
func FuzzWithIncludeUsage(f *testing.F) {
	f.Add(`{"model":"m","messages":[],"stream":true}`)
	f.Add(`{ }`)
	f.Fuzz(func(t *testing.T, body string) {
		fs := Scan([]byte(body))
		out := fs.WithIncludeUsage([]byte(body))
		if !json.Valid([]byte(body)) || string(out) == body {
			return
		}
		if !json.Valid(out) || !Scan(out).IncludeUsage {
			t.Fatalf("%s became %s", body, out)
		}
	})
}

func TestMembers(t *testing.T) {
	var got []string
	ok := Members([]byte(` {"a": 1, "b\"c":{"x":[1,"}"]}, "d":null} `), func(k, v []byte) bool {
		got = append(got, string(k)+"="+string(v))
		return true
	})
	if !ok || len(got) != 3 || got[0] != "a=1" || got[1] != `b\"c={"x":[1,"}"]}` || got[2] != "d=null" {
		t.Fatalf("%v %q", ok, got)
	}
	n := 0
	if Members([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { n++; return false }) || n != 1 {
		t.Fatalf("stopping: %d calls", n)
	}
	for _, bad := range []string{`{"a":1`, `{"a" 1}`, `[1]`, `{"a":1 "b":2}`, ``} {
		if Members([]byte(bad), func(k, v []byte) bool { return true }) {
			t.Errorf("%q read as a whole object", bad)
		}
	}
	if !Members([]byte(`{}`), func(k, v []byte) bool { return true }) {
		t.Error("{} not read")
	}
}
