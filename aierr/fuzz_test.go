package aierr

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseHeaderLines turns "Key: value" lines into a header, as a fuzzer's
// string input.
func parseHeaderLines(s string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			h[k] = append(h[k], v) // not canonicalized: the classifier must cope
		}
	}
	return h
}

func checkBounded(t *testing.T, what string, v Verdict) {
	t.Helper()
	if v.Kind >= numKinds || v.Sub >= numSubKinds {
		t.Fatalf("%s: kind %d sub %d out of range", what, v.Kind, v.Sub)
	}
	if len(v.Message) > MaxMessageLen || len(v.Code) > MaxCodeLen {
		t.Fatalf("%s: message %d bytes, code %d bytes", what, len(v.Message), len(v.Code))
	}
	if v.Code != "" && !isCode([]byte(v.Code)) {
		t.Fatalf("%s: code %q is not a token", what, v.Code)
	}
	if v.Wait < 0 || v.Wait > MaxWait {
		t.Fatalf("%s: wait %v", what, v.Wait)
	}
	if v.Wait != 0 && v.WaitFrom == NoWait {
		t.Fatalf("%s: wait %v with no source", what, v.Wait)
	}
	for _, w := range [...]Window{v.Limits.Requests, v.Limits.Tokens, v.Limits.InputTokens, v.Limits.OutputTokens} {
		if w.Limit < -1 || w.Remaining < -1 || w.Reset < 0 || w.Reset > MaxWait {
			t.Fatalf("%s: window %+v", what, w)
		}
	}
	p := Verdict{Kind: v.Kind, Sub: v.Sub}
	p.policy()
	if p.SameTarget != v.SameTarget || p.OtherTarget != v.OtherTarget || p.NewIdempotencyKey != v.NewIdempotencyKey {
		t.Fatalf("%s: policy fields do not follow %v/%v", what, v.Kind, v.Sub)
	}
	if (v.Breaker() == BreakerFailure) != (v.Kind == Outage) {
		t.Fatalf("%s: breaker %v for %v", what, v.Breaker(), v.Kind)
	}
}

func FuzzClassify(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.http"))
	for _, name := range files {
		status, h, body := readFixture(f, filepath.Base(name))
		var hs strings.Builder
		for k, vs := range h {
			for _, v := range vs {
				hs.WriteString(k + ": " + v + "\n")
			}
		}
		f.Add(status, hs.String(), body)
	}
	sse, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range sse {
		for _, ev := range readSSE(f, filepath.Base(name)) {
			f.Add(200, "event:"+ev.name, ev.data)
		}
	}
	f.Add(429, "retry-after: Sun, 01 Jun 2025 12:00:30 GMT\nx-ratelimit-reset-tokens: 1m30.5s", []byte(`{"error":{"message":"try again in 6m0s"}}`))
	f.Add(0, "", []byte(`[[[[[[[[[[[[[[[[[[[[{"error":"x"}]]]]]]]]]]]]]]]]]]]`))
	f.Add(500, "anthropic-ratelimit-tokens-reset: 9999-12-31T23:59:59Z", []byte(`{"error":{"message":"\ud800\u","code":1e999}}`))
	f.Add(429, "x-amzn-errortype: ThrottlingException:http://internal.amazon.com/\nX-Amzn-ErrorType: a#b:c", []byte(`{"__type":"x#ModelNotReadyException","Message":"m"}`))
	f.Add(400, "X-Amzn-Errortype: \"bad value\" #:", []byte(`{"__type":"#","message":"Input is too long"}`))
	f.Add(403, "x-amzn-errortype: AccessDeniedException", []byte(`{"message":"You don't have access to the model with the specified model ID."}`))
	f.Add(200, "event:throttlingException", []byte(`{"message":"Too many tokens, please wait before trying again."}`))
	f.Add(200, "event:"+strings.Repeat("x", 100)+"Exception", []byte(`{"message":"m"}`))
	f.Add(429, "", []byte(`[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_limit":"PerDay","quota_limit":1}},{"retryDelay":"1.250s"}]}}]`))
	f.Add(0, "", []byte(`{"statusCode":"429","statusCode":503,"message":"x"}`))

	c := testClassifier()
	f.Fuzz(func(t *testing.T, status int, header string, body []byte) {
		h := parseHeaderLines(header)
		checkBounded(t, "Classify", c.Classify(status, h, body))
		event, _ := strings.CutPrefix(header, "event:")
		checkBounded(t, "ClassifyEvent", c.ClassifyEvent(event, body))
		checkBounded(t, "ClassifyFinish", c.ClassifyFinish(body))
		checkBounded(t, "ClassifyJobError", c.ClassifyJobError(header, string(body)))
		if d, ok := MessageWait(body); ok && (d < 0 || d > MaxWait) {
			t.Fatalf("MessageWait = %v", d)
		}
		if v := c.Classify(status, h, body); utf8.Valid(body) && !utf8.ValidString(v.Message) && !strings.Contains(string(body), `\u`) {
			t.Fatalf("valid UTF-8 body gave invalid message %q", v.Message)
		}
	})
}

// TestFixturesAreSmall keeps the fixture files readable.
func TestFixturesAreSmall(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > 8<<10 {
			t.Errorf("%s is %d bytes", f, st.Size())
		}
	}
}

// FuzzBodyMatchesEncodingJSON checks the body reader against encoding/json
// on bodies it accepts: the error's code, type, status, inner code and
// message, the top-level code and type, and a string error are what
// encoding/json decodes, escaped keys and values decoded and the last
// duplicate winning. (A repeated error object is merged into the first, as
// encoding/json decodes into a struct, so the test leaves those bodies
// out; and a message without escapes is kept as it is, invalid UTF-8
// included.)
func FuzzBodyMatchesEncodingJSON(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.http"))
	for _, name := range files {
		_, _, body := readFixture(f, filepath.Base(name))
		f.Add(body)
	}
	for _, s := range []string{
		`{"error":{"c\u006fde":"insufficient_quota","code":"rate\u005flimit_exceeded"}}`,
		`{"error":{"message":"a\nb","message":"c\u00e9","type":1,"type":"x"},"error":{"status":"S"}}`,
		`{"code":"queue_full","type":"error","error_type":"x","error":"e\"rr"}`,
		`{"error":{"innererror":{"code":"A","code":"B"}},"":{"error":{"code":"C"}}}`,
		`{"__type":"com.amazon#ThrottlingException","__type":"Validation\u0045xception","Message":"m"}`,
		`{"__type":1,"__type":null,"message":"m"}`,
		"{\"error\":{\"code\xff\":\"queue_full\",\"message\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var top map[string]any
		if len(body) > MaxBody || json.Unmarshal(body, &top) != nil || top == nil {
			return
		}
		var fs bodyFields
		if !fs.parse(body) {
			t.Fatalf("%q: not read as JSON", body)
		}
		str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
		check := func(what string, got []byte, want string) {
			if string(got) != want {
				t.Fatalf("%q: %s = %q; encoding/json reads %q", body, what, got, want)
			}
		}
		if e, ok := top["error"].(map[string]any); ok && topKeys(body)["error"] == 1 {
			check("error.code", fs.errCode, str(e, "code"))
			check("error.type", fs.errType, str(e, "type"))
			check("error.status", fs.errStatus, str(e, "status"))
			if in, ok := e["innererror"].(map[string]any); ok {
				check("error.innererror.code", fs.innerCode, str(in, "code"))
			}
			if msg, ok := e["message"].(string); ok && utf8.Valid(body) && len(msg) < 256 {
				m, _ := fs.message()
				want := strings.TrimSpace(strings.NewReplacer("\n", " ", "\r", " ", "\t", " ", "\b", "", "\f", "").Replace(msg))
				if got := decodeMessage(m, MaxMessageLen); got != want {
					t.Fatalf("%q: message %q; encoding/json reads %q", body, got, want)
				}
			}
		}
		check("error (a string)", fs.errString, str(top, "error"))
		check("__type", fs.awsType, str(top, "__type"))
		if _, ok := top["errors"]; !ok {
			check("code", fs.topCode, str(top, "code"))
		}
		if _, ok := top["error_type"]; !ok && str(top, "type") != "error" {
			check("type", fs.topType, str(top, "type"))
		}
	})
}

// topKeys counts the decoded keys of the object body, with encoding/json's
// tokenizer.
func topKeys(body []byte) map[string]int {
	n := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return n
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return n
		}
		n[k.(string)]++
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return n
		}
	}
	return n
}
