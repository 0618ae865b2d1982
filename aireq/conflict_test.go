package aireq

import (
	"encoding/json"
	"testing"
)

// TestScanConflicts lists the ways a client can make the gateway and the
// upstream read a routing field differently; each must be reported.
func TestScanConflicts(t *testing.T) {
	for _, tc := range []struct {
		name, body    string
		field, reason string
	}{
		{"escaped duplicate", `{"model":"cheap","mod\u0065l":"o1-pro"}`, "model", ReasonDuplicate},
		{"escaped first", `{"mod\u0065l":"o1-pro","model":"cheap"}`, "model", ReasonDuplicate},
		{"plain duplicate", `{"model":"a","messages":[],"model":"b"}`, "model", ReasonDuplicate},
		{"escape of every letter", `{"model":"a","\u006d\u006f\u0064\u0065\u006c":"b"}`, "model", ReasonDuplicate},
		{"Model", `{"model":"cheap","Model":"o1-pro"}`, "model", ReasonCaseVariant},
		{"MODEL alone", `{"MODEL":"o1-pro"}`, "model", ReasonCaseVariant},
		{"escaped case variant", `{"model":"a","M\u006fdel":"b"}`, "model", ReasonCaseVariant},
		{"Kelvin sign", `{"max_to\u212aens":100000}`, "max_tokens", ReasonCaseVariant},
		{"long s", "{\"\u017ftream\":true}", "stream", ReasonCaseVariant},
		{"json/v2 delimiters", `{"max-tokens":5}`, "max_tokens", ReasonCaseVariant},
		{"no underscore", `{"streamoptions":{}}`, "stream_options", ReasonCaseVariant},
		{"escaped stream", `{"stream":false,"str\u0065am":true}`, "stream", ReasonDuplicate},
		{"Stream", `{"Stream":true}`, "stream", ReasonCaseVariant},
		{"stream as a string", `{"stream":"true"}`, "stream", ReasonType},
		{"stream as a number", `{"stream":1}`, "stream", ReasonType},
		{"include_usage twice", `{"stream_options":{"include_usage":false,"include_usage":true}}`, "stream_options.include_usage", ReasonDuplicate},
		{"include_usage escaped twice", `{"stream_options":{"include_usage":false,"include\u005fusage":true}}`, "stream_options.include_usage", ReasonDuplicate},
		{"Include_Usage", `{"stream_options":{"Include_Usage":true}}`, "stream_options.include_usage", ReasonCaseVariant},
		{"include_usage string", `{"stream_options":{"include_usage":"true"}}`, "stream_options.include_usage", ReasonType},
		{"stream_options twice", `{"stream_options":{"include_usage":true},"stream_options":null}`, "stream_options", ReasonDuplicate},
		{"invalid UTF-8 in a key", "{\"mod\xffel\":\"o1-pro\"}", "model", ReasonInvalid},
		{"invalid UTF-8 elsewhere", "{\"a\xff\":1}", "", ReasonInvalid},
		{"overlong encoding", "{\"mod\xc1\xa5l\":1}", "", ReasonInvalid},
		{"lone surrogate in a key", `{"mod\ud800el":"o1-pro"}`, "model", ReasonInvalid},
		{"lone low surrogate", `{"x\udc00":1}`, "", ReasonInvalid},
		{"unknown escape", `{"mod\el":"x"}`, "model", ReasonInvalid},
		{"bad u escape", `{"\u00zz":1}`, "", ReasonInvalid},
		{"invalid key in stream_options", "{\"stream_options\":{\"a\xff\":1}}", "stream_options", ReasonInvalid},
		{"lone surrogate in the model", `{"model":"o1-pro\ud800"}`, "model", ReasonInvalid},
		{"invalid UTF-8 in the model", "{\"model\":\"o1-pro\xff\"}", "model", ReasonInvalid},
		{"invalid UTF-8 in the user", "{\"user\":\"u\xff\"}", "user", ReasonInvalid},
		{"max_tokens string", `{"max_tokens":"100000"}`, "max_tokens", ReasonType},
		{"max_tokens boolean", `{"max_completion_tokens":true}`, "max_completion_tokens", ReasonType},
		{"max_tokens Infinity", `{"max_tokens":Infinity}`, "max_tokens", ReasonType},
		{"max_tokens hex", `{"max_tokens":0x10}`, "max_tokens", ReasonType},
		{"messages twice", `{"messages":[],"messages":[{"role":"user","content":"x"}]}`, "messages", ReasonDuplicate},
		{"tools twice", `{"tools":[],"t\u006fols":[{}]}`, "tools", ReasonDuplicate},
		{"Tool_Choice", `{"Tool_Choice":"none"}`, "tool_choice", ReasonCaseVariant},
		{"n twice", `{"n":1,"n":8}`, "n", ReasonDuplicate},
		{"N", `{"N":8}`, "n", ReasonCaseVariant},
		{"response_format twice", `{"response_format":{},"response_format":{}}`, "response_format", ReasonDuplicate},
		{"user twice", `{"user":"a","user":"b"}`, "user", ReasonDuplicate},
		{"input twice", `{"input":"a","INPUT":"b"}`, "input", ReasonCaseVariant},
		{"prompt twice", `{"prompt":"a","prompt":"b"}`, "prompt", ReasonDuplicate},
		{"first conflict wins", `{"Model":"a","stream":true,"stream":true}`, "model", ReasonCaseVariant},
	} {
		f := Scan([]byte(tc.body))
		if f.Conflict.Field != tc.field || f.Conflict.Reason != tc.reason {
			t.Errorf("%s: Scan(%q).Conflict = %q; want %q", tc.name, tc.body, f.Conflict, Conflict{tc.field, tc.reason})
		}
	}
}

// TestScanNoConflict lists bodies that look like tricks but read the same
// in every decoder: they must be read, not refused.
func TestScanNoConflict(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		model      string
		stream     bool
		usage      bool
		maxTokens  int
		user       string
	}{
		{"escaped key alone", `{"mod\u0065l":"o1-pro"}`, "o1-pro", false, false, 0, ""},
		{"escaped value", `{"model":"ch\u0065ap"}`, "cheap", false, false, 0, ""},
		{"escaped stream key", `{"str\u0065am":true}`, "", true, false, 0, ""},
		{"escaped include_usage", `{"stream_options":{"include\u005fusage":true}}`, "", false, true, 0, ""},
		{"nested model", `{"metadata":{"model":"o1-pro","Model":"x","model":"y"},"model":"cheap"}`, "cheap", false, false, 0, ""},
		{"model in a message", `{"messages":[{"role":"user","content":"\"model\":\"o1-pro\""}],"model":"cheap"}`, "cheap", false, false, 0, ""},
		{"backslash runs", `{"a":"\\","b":"\\\"","c":"\\\\\\\"}\"","model":"m\\"}`, "m\\", false, false, 0, ""},
		{"whitespace", " \t\r\n{ \"model\" \n:\t\"m\" , \"stream\" : true }\n", "m", true, false, 0, ""},
		{"null stream", `{"stream":null}`, "", false, false, 0, ""},
		{"false include_usage", `{"stream_options":{"include_usage":false}}`, "", false, false, 0, ""},
		{"other keys in stream_options", `{"stream_options":{"Other":1,"include_usage":true}}`, "", false, true, 0, ""},
		{"surrogate pair", `{"model":"\ud83d\ude00"}`, "😀", false, false, 0, ""},
		{"escaped replacement char", `{"model":"\ufffd"}`, "\ufffd", false, false, 0, ""},
		{"unicode key", `{"modèle":"x","model":"m"}`, "m", false, false, 0, ""},
		{"duplicate unknown key", `{"temperature":1,"temperature":2,"model":"m"}`, "m", false, false, 0, ""},
		{"escaped user", `{"user":"\u0061\/b"}`, "", false, false, 0, "a/b"},
		{"max_tokens 1e3", `{"max_tokens":1e3}`, "", false, false, 1000, ""},
		{"max_tokens 1000.0", `{"max_tokens":1000.0}`, "", false, false, 1000, ""},
		{"max_tokens 1.5", `{"max_tokens":1.5}`, "", false, false, 2, ""},
		{"max_tokens 0.001", `{"max_tokens":0.001}`, "", false, false, 1, ""},
		{"max_tokens 25E-1", `{"max_tokens":25E-1}`, "", false, false, 3, ""},
		{"max_tokens negative", `{"max_tokens":-5}`, "", false, false, 0, ""},
		{"max_tokens -0", `{"max_tokens":-0.0}`, "", false, false, 0, ""},
		{"max_tokens zero", `{"max_tokens":0}`, "", false, false, 0, ""},
		{"max_tokens null", `{"max_tokens":null}`, "", false, false, 0, ""},
		{"max_tokens huge", `{"max_tokens":99999999999999999999999}`, "", false, false, MaxTokensCap, ""},
		{"max_tokens 1e400", `{"max_tokens":1e400}`, "", false, false, MaxTokensCap, ""},
		{"max_tokens 1e-400", `{"max_tokens":1e-400}`, "", false, false, 1, ""},
		{"max_tokens just fits", `{"max_tokens":2147483647}`, "", false, false, MaxTokensCap, ""},
		{"max_tokens 10 digits", `{"max_tokens":2147483648}`, "", false, false, MaxTokensCap, ""},
		{"the larger of both", `{"max_tokens":100,"max_completion_tokens":50}`, "", false, false, 100, ""},
		{"the larger of both, reversed", `{"max_completion_tokens":500,"max_tokens":50}`, "", false, false, 500, ""},
	} {
		f := Scan([]byte(tc.body))
		if f.Conflict != (Conflict{}) || !f.Object {
			t.Errorf("%s: Scan(%s): conflict %q, object %v", tc.name, tc.body, f.Conflict, f.Object)
			continue
		}
		if f.ModelName() != tc.model || f.Stream != tc.stream || f.IncludeUsage != tc.usage || f.MaxTokens != tc.maxTokens || f.UserID() != tc.user {
			t.Errorf("%s: Scan(%s) = model %q stream %v usage %v max %d user %q; want %q %v %v %d %q", tc.name, tc.body,
				f.ModelName(), f.Stream, f.IncludeUsage, f.MaxTokens, f.UserID(), tc.model, tc.stream, tc.usage, tc.maxTokens, tc.user)
		}
	}
}

// TestScanNotAnObject: encoding/json refuses a BOM, and so does Scan.
func TestScanNotAnObject(t *testing.T) {
	for _, body := range []string{"\xef\xbb\xbf{\"model\":\"m\"}", "\f{}", `null`, `"model"`} {
		if f := Scan([]byte(body)); f.Object {
			t.Errorf("Scan(%q) read an object", body)
		}
	}
}

func TestModelName(t *testing.T) {
	for raw, want := range map[string]string{
		``:                    "",
		`gpt-4.1`:             "gpt-4.1",
		`ch\u0065ap`:          "cheap",
		`a\"b\\c\/d\n\t`:      "a\"b\\c/d\n\t",
		`\ud83d\ude00`:        "😀",
		`x\ud800y`:            "x\ufffdy",
		`x\ud800\u0041`:       "x\ufffdA",
		"x\xffy":              "x\ufffdy",
		`\u00e9t\u00C9`:       "étÉ",
		`\b\f\r`:              "\b\f\r",
		"caf\xc3\xa9 \\u00e9": "café é",
	} {
		f := Fields{Model: []byte(raw)}
		if got := f.ModelName(); got != want {
			t.Errorf("ModelName(%q) = %q; want %q", raw, got, want)
		}
		if !equalUnquoted([]byte(raw), want) {
			t.Errorf("equalUnquoted(%q, %q) = false", raw, want)
		}
		if equalUnquoted([]byte(raw), want+"x") || (want != "" && equalUnquoted([]byte(raw), want[:len(want)-1])) {
			t.Errorf("equalUnquoted(%q) matches another string", raw)
		}
		// encoding/json agrees.
		var s string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &s); err == nil && s != want {
			t.Errorf("encoding/json reads %q as %q; ModelName %q", raw, s, want)
		}
	}
}

// TestWithModelEscapes: the rewrite compares decoded models and writes
// JSON, not Go, string syntax.
func TestWithModelEscapes(t *testing.T) {
	body := []byte(`{"model":"ch\u0065ap","stream":true}`)
	f := Scan(body)
	if got := f.WithModel(body, "cheap"); &got[0] != &body[0] {
		t.Errorf("the same model, escaped, was rewritten: %s", got)
	}
	for _, model := range []string{"o1-pro", `a\b`, "nul\x00bell\a", "tab\t\"q\"", "😀", "bad\xffutf8", "line\u2028sep"} {
		out := f.WithModel(body, model)
		var m struct {
			Model  string
			Stream bool
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Errorf("WithModel(%q) = %s: %v", model, out, err)
			continue
		}
		want := model
		if model == "bad\xffutf8" {
			want = "bad\ufffdutf8"
		}
		if m.Model != want || !m.Stream {
			t.Errorf("WithModel(%q) = %s", model, out)
		}
		if g := Scan(out); g.ModelName() != want || g.Conflict != (Conflict{}) {
			t.Errorf("WithModel(%q) = %s: rescanned %q %q", model, out, g.ModelName(), g.Conflict)
		}
	}
	// A model spelled with two backslashes is not the one with one.
	body = []byte(`{"model":"a\\b"}`)
	if got := Scan(body).WithModel(body, `a\\b`); string(got) != `{"model":"a\\\\b"}` {
		t.Errorf("WithModel(a\\\\b) = %s", got)
	}
}

// TestWithIncludeUsageEscapedKey: an escaped stream_options is already
// there and must not be doubled.
func TestWithIncludeUsageEscapedKey(t *testing.T) {
	body := []byte(`{"stream":true,"stream_\u006fptions":{"include_usage":false}}`)
	f := Scan(body)
	if got := f.WithIncludeUsage(body); string(got) != string(body) {
		t.Errorf("WithIncludeUsage(%s) = %s", body, got)
	}
}

func TestConflictString(t *testing.T) {
	for c, want := range map[Conflict]string{
		{}:                                "",
		{"model", ReasonDuplicate}:        "model: duplicate",
		{"", ReasonInvalid}:               "invalid string",
		{"stream", ReasonType}:            "stream: wrong type",
		{"max_tokens", ReasonCaseVariant}: "max_tokens: case variant",
		{"stream_options", ReasonInvalid}: "stream_options: invalid string",
	} {
		if got := c.String(); got != want {
			t.Errorf("%#v.String() = %q; want %q", c, got, want)
		}
	}
}

// TestScanAllocs: no allocation for a body whose keys have no escapes, nor
// for one whose keys do.
func TestScanAllocs(t *testing.T) {
	for _, body := range [][]byte{chatBody, escapedBody} {
		if n := testing.AllocsPerRun(100, func() { Scan(body) }); n != 0 {
			t.Errorf("Scan allocates %v times", n)
		}
	}
}
