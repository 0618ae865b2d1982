package cache

import (
	"encoding/json"
	"errors"
	"testing"
)

const typical = `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256,"stream":false,"user":"u-1234"}`

func mustKey(t *testing.T, alias string, scope Scope, client, body string) KeyHash {
	t.Helper()
	k, err := Key(alias, scope, client, []byte(body))
	if err != nil {
		t.Fatalf("Key(%s): %v", body, err)
	}
	return k
}

func TestKeyNormalisation(t *testing.T) {
	base := mustKey(t, "smart", ScopeClient, "web", typical)
	same := map[string]string{
		"key order and whitespace": `{ "user":"u-1234", "max_tokens" : 256,
			"messages":[ {"content":"You are a helpful assistant. Answer briefly.","role":"system"},
			{"content":"What is the capital of France, and why is it famous?","role":"user"}],
			"temperature":0.2, "model":"smart" }`,
		"stream flag":      `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256,"stream":true,"stream_options":{"include_usage":true},"user":"u-1234"}`,
		"user dropped":     `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256}`,
		"other user":       `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256,"user":"someone-else","metadata":{"a":"b"},"store":true}`,
		"escaped string":   `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"\u0075ser","content":"What is the capital of France, and why is it famous\u003f"}],"temperature":0.2,"max_tokens":256}`,
		"escaped key":      `{"model":"smart","m\u0065ssages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256}`,
		"duplicate key":    `{"temperature":1,"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256}`,
		"model in body":    `{"model":"openai/gpt-4.1","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256}`,
		"service tier etc": `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256,"service_tier":"flex","safety_identifier":"x","prompt_cache_key":"y"}`,
	}
	for name, body := range same {
		if got := mustKey(t, "smart", ScopeClient, "web", body); got != base {
			t.Errorf("%s: key changed", name)
		}
	}
	differ := map[string]string{
		"temperature":       `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.3,"max_tokens":256}`,
		"number as written": `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.20,"max_tokens":256}`,
		"max_tokens":        `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":257}`,
		"message":           `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of Spain, and why is it famous?"}],"temperature":0.2,"max_tokens":256}`,
		"message order":     `{"model":"smart","messages":[{"role":"user","content":"What is the capital of France, and why is it famous?"},{"role":"system","content":"You are a helpful assistant. Answer briefly."}],"temperature":0.2,"max_tokens":256}`,
		"tools":             `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256,"tools":[{"type":"function","function":{"name":"f"}}]}`,
		"unknown field":     `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256,"verbosity":"low"}`,
		"nested user kept":  `{"model":"smart","messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly.","user":"x"},{"role":"user","content":"What is the capital of France, and why is it famous?"}],"temperature":0.2,"max_tokens":256}`,
	}
	for name, body := range differ {
		if got := mustKey(t, "smart", ScopeClient, "web", body); got == base {
			t.Errorf("%s: key unchanged", name)
		}
	}
	if mustKey(t, "other", ScopeClient, "web", typical) == base {
		t.Error("alias not in the key")
	}
}

func TestKeyScope(t *testing.T) {
	a := mustKey(t, "smart", ScopeClient, "web", typical)
	b := mustKey(t, "smart", ScopeClient, "batch", typical)
	if a == b {
		t.Error("ScopeClient: two clients share a key")
	}
	ga := mustKey(t, "smart", ScopeGlobal, "web", typical)
	gb := mustKey(t, "smart", ScopeGlobal, "batch", typical)
	if ga != gb {
		t.Error("ScopeGlobal: two clients have different keys")
	}
	if ga == a {
		t.Error("ScopeGlobal and ScopeClient share a key")
	}
	// A client name cannot be confused with the start of the body.
	if mustKey(t, "a", ScopeClient, "b", typical) == mustKey(t, "ab", ScopeClient, "", typical) {
		t.Error("alias and client run together")
	}
}

func TestKeyInvalid(t *testing.T) {
	for _, body := range []string{``, `[]`, `"x"`, `null`, `{`, `{"a":}`, `{"a":1}x`, `  `} {
		if _, err := Key("smart", ScopeClient, "", []byte(body)); !errors.Is(err, ErrInvalidBody) {
			t.Errorf("Key(%q) = %v, want ErrInvalidBody", body, err)
		}
	}
	if _, err := Key("smart", ScopeClient, "", []byte(" {} ")); err != nil {
		t.Errorf("Key({}) = %v", err)
	}
}

// TestCanonicalForm checks the canonical text itself, which the hash hides.
func TestCanonicalForm(t *testing.T) {
	for in, want := range map[string]string{
		`{"b" : [1 , 2.50, {"z":null,"a":true}], "a":"x\ny\u00e9\/"}`: `{"a":"x\nyé/","b":[1,2.50,{"a":true,"z":null}]}`,
		`{"stream":true,"messages":[],"user":"u"}`:                    `{"messages":[]}`,
		`{"a":{},"b":[],"c":"\u0001\"\\"}`:                            `{"a":{},"b":[],"c":"\u0001\"\\"}`,
	} {
		c := &canon{}
		c.object([]byte(in), 0, true)
		if string(c.buf) != want {
			t.Errorf("canonical(%s) = %s, want %s", in, c.buf, want)
		}
		if !json.Valid(c.buf) {
			t.Errorf("canonical(%s) is not valid JSON", in)
		}
	}
}

func TestScope(t *testing.T) {
	for _, s := range []string{"", "client", "global"} {
		sc, err := ParseScope(s)
		if err != nil {
			t.Fatal(err)
		}
		if s != "" && sc.String() != s {
			t.Errorf("%q round trip: %v", s, sc)
		}
	}
	if _, err := ParseScope("nobody"); err == nil {
		t.Error("ParseScope(nobody) gave no error")
	}
}

// TestKeyInvalidStringsExact: strings that decoding would repair to U+FFFD
// (invalid UTF-8, lone surrogates) are keyed as written, so prompts that
// differ only there never share an answer; valid spellings of the same
// string still do.
func TestKeyInvalidStringsExact(t *testing.T) {
	prompt := func(content string) string {
		return `{"model":"smart","messages":[{"role":"user","content":"` + content + `"}]}`
	}
	differ := [][2]string{
		{`\ud800`, `\ud801`},
		{`\ud800`, `\ufffd`},
		{`\udc00`, `\ud800`},
		{`\ud800`, "\ufffd"},
		{`a\ud83dz`, `a\ud83ez`},         // high surrogates not followed by a low one
		{`\ud83d\u0041`, `\ud83e\u0041`}, // a high surrogate followed by another escape
		{"hi\xff\\n", "hi\xfe\\n"},       // invalid bytes next to an escape
		{"hi\xff", "hi\xfe"},             // invalid bytes alone
		{"hi\xff", "hi\ufffd"},           // an invalid byte is not U+FFFD
		{"\xed\xa0\x80", "\xed\xa0\x81"}, // surrogates encoded in UTF-8 (CESU-8)
		{"\xc1\xa5", "e"},                // an overlong encoding
		{`\ud800`, `\\ud800`},            // an escaped backslash is text
	}
	for _, d := range differ {
		if mustKey(t, "smart", ScopeClient, "web", prompt(d[0])) == mustKey(t, "smart", ScopeClient, "web", prompt(d[1])) {
			t.Errorf("%q and %q share a key", d[0], d[1])
		}
	}
	same := [][2]string{
		{"é", `\u00e9`},
		{"é", `\u00E9`},
		{"😀", `\ud83d\ude00`},
		{"😀", `\uD83D\uDE00`},
		{"\ufffd", `\ufffd`},
		{`a\/b`, "a/b"},
	}
	for _, s := range same {
		if mustKey(t, "smart", ScopeClient, "web", prompt(s[0])) != mustKey(t, "smart", ScopeClient, "web", prompt(s[1])) {
			t.Errorf("%q and %q have different keys", s[0], s[1])
		}
	}
	// Keys too: two invalid keys are two members, and an invalid key never
	// equals a valid one, whatever it decodes to.
	keyed := func(k string) KeyHash {
		return mustKey(t, "smart", ScopeClient, "web", `{"messages":[],"`+k+`":1}`)
	}
	for _, d := range [][2]string{{`\ud800`, `\ud801`}, {"a\xff", "a\xfe"}, {`\ud800`, `\ufffd`}, {`\u0000\\ud800`, `\ud800`}} {
		if keyed(d[0]) == keyed(d[1]) {
			t.Errorf("keys %q and %q share a key", d[0], d[1])
		}
	}
	if mustKey(t, "smart", ScopeClient, "web", `{"messages":[],"\ud800":1,"\ud801":1}`) ==
		mustKey(t, "smart", ScopeClient, "web", `{"messages":[],"\ud801":1}`) {
		t.Error("two invalid keys merged as duplicates")
	}
	if keyed(`t\u0065mperature`) != keyed("temperature") {
		t.Error("an escaped valid key is not its plain spelling")
	}
	// An invalid top-level key is never one of the ignored fields.
	if mustKey(t, "smart", ScopeClient, "web", `{"messages":[],"us\ud800er":"a"}`) ==
		mustKey(t, "smart", ScopeClient, "web", `{"messages":[],"us\ud800er":"b"}`) {
		t.Error("an invalid key was dropped as if it were user")
	}
}

func TestExactString(t *testing.T) {
	for s, want := range map[string]bool{
		``: true, `abc`: true, `\n\"\\`: true, `é`: true, `\u00e9`: true, `\ud83d\ude00`: true, `\ufffd`: true,
		`\\ud800`: true, `x\\\ud83d\ude00`: true,
		`\ud800`: false, `\udc00`: false, `\ud800\u0041`: false, `\ud800\ud800`: false, `\ud83d\n`: false,
		"\xff": false, "a\xffb": false, "\xff\\n": false, "\xed\xa0\x80": false, `x\\\ud800`: false, `\ud800x`: false,
	} {
		if got := exactString([]byte(s)); got != want {
			t.Errorf("exactString(%q) = %v; want %v", s, got, want)
		}
	}
}
