package aireq

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// goFields is how encoding/json decoding into a struct reads a body:
// case-insensitive names, the last duplicate wins. Values are left
// undecoded (any, with numbers as json.Number) so the test can tell a
// string from a boolean.
type goFields struct {
	Model               any             `json:"model"`
	Stream              any             `json:"stream"`
	StreamOptions       json.RawMessage `json:"stream_options"`
	MaxTokens           any             `json:"max_tokens"`
	MaxCompletionTokens any             `json:"max_completion_tokens"`
	User                any             `json:"user"`
	Messages            json.RawMessage `json:"messages"`
}

type goStreamOptions struct {
	IncludeUsage any `json:"include_usage"`
}

var routingNames = []string{"model", "stream", "stream_options", "n", "max_tokens", "max_completion_tokens",
	"tools", "tool_choice", "response_format", "user", "messages", "input", "prompt"}

// FuzzScanMatchesEncodingJSON checks Scan against encoding/json: for a
// body encoding/json reads as an object, either Scan reports a Conflict or
// it reads every routing field as encoding/json does, both into a struct
// (case-insensitive, as a Go upstream) and into a map (case-sensitive, as
// Python's json); and a duplicate or case variant of a routing field, or
// an invalid key, is always a Conflict. The corpus in testdata holds the
// known tricks.
func FuzzScanMatchesEncodingJSON(f *testing.F) {
	f.Add([]byte(`{"model":"cheap","mod\u0065l":"o1-pro"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fs := Scan(body)
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil || m == nil {
			return
		}
		if !fs.Object {
			t.Fatalf("Scan(%q): an object encoding/json reads is not Object", body)
		}
		if c := mustConflict(body); c != "" && fs.Conflict.Reason == "" {
			t.Fatalf("Scan(%q): %s, and no Conflict", body, c)
		}
		if fs.Conflict.Reason != "" {
			return
		}
		var g goFields
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&g); err != nil {
			t.Fatalf("decoding %q: %v", body, err)
		}
		got, want := fromScan(fs), fromGo(t, g)
		if want.maxTokensUnknown {
			got.maxTokensUnknown = true
			want.maxTokens = got.maxTokens
		}
		if got != want {
			t.Fatalf("Scan(%q) = %+v; encoding/json (struct) reads %+v", body, got, want)
		}
		mw := fromMap(t, m)
		if mw.maxTokensUnknown {
			mw.maxTokens = want.maxTokens
		}
		if mw != want {
			t.Fatalf("Scan(%q): encoding/json reads %+v into a struct and %+v into a map, and no Conflict", body, want, mw)
		}
		checkRewrites(t, body, fs)
	})
}

// read is what a body asks of routing.
type read struct {
	model, user             string
	hasModel, stream, usage bool
	streamOptions           bool
	maxTokens               int
	messages                byte
	maxTokensUnknown        bool // too large an exponent for the test to work out
}

func fromScan(f Fields) read {
	return read{model: f.ModelName(), user: f.UserID(), hasModel: f.Model != nil, stream: f.Stream,
		usage: f.IncludeUsage, streamOptions: f.StreamOptions, maxTokens: f.MaxTokens, messages: f.Messages}
}

func fromGo(t *testing.T, g goFields) read {
	var r read
	r.model, r.hasModel = g.Model.(string)
	r.user, _ = g.User.(string)
	r.stream = wantBool(t, "stream", g.Stream)
	if g.StreamOptions != nil {
		r.streamOptions = true
		if g.StreamOptions[0] == '{' {
			var so goStreamOptions
			dec := json.NewDecoder(bytes.NewReader(g.StreamOptions))
			dec.UseNumber()
			if err := dec.Decode(&so); err != nil {
				t.Fatalf("stream_options %s: %v", g.StreamOptions, err)
			}
			r.usage = wantBool(t, "include_usage", so.IncludeUsage)
		}
	}
	a, ua := wantTokens(t, g.MaxTokens)
	b, ub := wantTokens(t, g.MaxCompletionTokens)
	r.maxTokens, r.maxTokensUnknown = max(a, b), ua || ub
	if g.Messages != nil {
		r.messages = g.Messages[0]
	}
	return r
}

func fromMap(t *testing.T, m map[string]json.RawMessage) read {
	g := goFields{StreamOptions: m["stream_options"], Messages: m["messages"]}
	for name, dst := range map[string]*any{"model": &g.Model, "stream": &g.Stream, "max_tokens": &g.MaxTokens,
		"max_completion_tokens": &g.MaxCompletionTokens, "user": &g.User} {
		if v, ok := m[name]; ok {
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			if err := dec.Decode(dst); err != nil {
				t.Fatalf("%s %s: %v", name, v, err)
			}
		}
	}
	return fromGo(t, g)
}

// wantBool reads a flag that has no Conflict: true, false or absent.
func wantBool(t *testing.T, name string, v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	}
	t.Fatalf("%s is %#v and Scan reports no Conflict", name, v)
	return false
}

// wantTokens works out a max tokens value as Scan documents it, exactly,
// with math/big.
func wantTokens(t *testing.T, v any) (n int, unknown bool) {
	switch v := v.(type) {
	case nil:
		return 0, false
	case json.Number:
		s := string(v)
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			if e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+")); err != nil || e > 1000 || e < -1000 {
				return 0, true
			}
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("max tokens %s: not a number", s)
		}
		if r.Sign() <= 0 {
			return 0, false
		}
		q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
		if rem.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		if q.Cmp(big.NewInt(MaxTokensCap)) > 0 {
			return MaxTokensCap, false
		}
		return int(q.Int64()), false
	}
	t.Fatalf("max tokens is %#v and Scan reports no Conflict", v)
	return 0, false
}

// mustConflict says why Scan must report a Conflict for body, worked out
// with encoding/json's tokenizer: a routing field whose decoded key
// appears twice or in another case (bytes.EqualFold is how encoding/json
// matches), at the top level or for include_usage inside stream_options;
// or a top-level key encoding/json had to repair (U+FFFD that the key
// does not spell).
func mustConflict(body []byte) string {
	var keys, inner []string
	var rawKeys, rawInner [][]byte
	Members(body, func(k, v []byte) bool {
		rawKeys = append(rawKeys, k)
		key := decodeKey(k)
		keys = append(keys, key)
		if key == "stream_options" {
			Members(v, func(k, _ []byte) bool {
				inner = append(inner, decodeKey(k))
				rawInner = append(rawInner, k)
				return true
			})
		}
		return true
	})
	if why := folded(keys, routingNames); why != "" {
		return why
	}
	if why := folded(inner, []string{"include_usage"}); why != "" {
		return "stream_options." + why
	}
	for i, raw := range append(rawKeys, rawInner...) {
		if strings.ContainsRune(append(keys, inner...)[i], utf8.RuneError) && !bytes.Contains(raw, []byte("\uFFFD")) &&
			!bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
			return "key " + strconv.Quote(string(raw)) + " was repaired"
		}
	}
	return ""
}

// decodeKey decodes a key as encoding/json does.
func decodeKey(k []byte) string {
	var s string
	json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &s)
	return s
}

// folded reports a name of names that keys hold twice, or in another case.
func folded(keys, names []string) string {
	for _, name := range names {
		n := 0
		for _, k := range keys {
			switch {
			case k == name:
				n++
			case strings.EqualFold(k, name):
				return name + " has a case variant " + strconv.Quote(k)
			}
		}
		if n > 1 {
			return name + " is duplicated"
		}
	}
	return ""
}

// checkRewrites checks that the rewriters keep a body encoding/json reads
// the same but for what they change.
func checkRewrites(t *testing.T, body []byte, fs Fields) {
	const model = "m\"\\\x01é😀"
	if out := fs.WithModel(body, model); fs.Model != nil {
		var g struct{ Model string }
		if err := json.Unmarshal(out, &g); err != nil || g.Model != model {
			t.Fatalf("WithModel(%q) = %q: model %q, %v", body, out, g.Model, err)
		}
		if r := Scan(out); r.Conflict.Reason != "" || r.ModelName() != model {
			t.Fatalf("WithModel(%q) = %q: rescanned %q, %q", body, out, r.ModelName(), r.Conflict)
		}
	} else if &out[0] != &body[0] {
		t.Fatalf("WithModel(%q) changed a body without a model: %q", body, out)
	}
	if out := fs.WithIncludeUsage(body); !fs.StreamOptions {
		r := Scan(out)
		if !json.Valid(out) || !r.IncludeUsage || r.Conflict.Reason != "" {
			t.Fatalf("WithIncludeUsage(%q) = %q: usage %v, %q", body, out, r.IncludeUsage, r.Conflict)
		}
	}
	if out, g := fs.WithIncludeUsageFields(body); !sameFields(g, Scan(out)) {
		t.Fatalf("WithIncludeUsageFields(%q) = %q, %+v; Scan reads %+v", body, out, g, Scan(out))
	}
}
