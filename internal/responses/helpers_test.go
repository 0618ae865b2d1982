package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// created is the creation time of the responses in tests.
var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testID is a valid response id.
const testID = "resp_0123456789abcdef"

// decode unmarshals JSON into a generic value, failing the test on error.
func decode(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	return v
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decode(t, a), decode(t, b))
}

// tb is what the helpers need of a test: *testing.T and *rapid.T both.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// chat translates body with ToChat, failing the test on error.
func chat(t tb, body string, history ...Item) ([]byte, Request) {
	t.Helper()
	out, req, err := ToChat([]byte(body), history)
	if err != nil {
		t.Fatalf("ToChat(%s): %v", body, err)
	}
	if !json.Valid(out) {
		t.Fatalf("ToChat(%s) wrote invalid JSON: %s", body, out)
	}
	return out, req
}

// refusal translates body with ToChat and returns its *Error.
func refusal(t testing.TB, body string) *Error {
	t.Helper()
	out, _, err := ToChat([]byte(body), nil)
	if err == nil {
		t.Fatalf("ToChat(%s) = %s, want an error", body, out)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("ToChat(%s) error %v (%T), want an *Error", body, err, err)
	}
	return e
}

// field returns the value at a path of keys and indexes in a decoded
// JSON value, or nil.
func field(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// str is a decoded JSON string, or "".
func str(v any) string { s, _ := v.(string); return s }

// chatBody is a chat completion whose one choice has the given message
// and finish_reason.
func chatBody(message, finish string) []byte {
	return []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"up-model","choices":[{"index":0,"message":` +
		message + `,"finish_reason":"` + finish + `"}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18,` +
		`"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}`)
}

func itoa(i int) string { return strconv.Itoa(i) }

// equalValues compares decoded JSON values.
func equalValues(a, b any) bool { return reflect.DeepEqual(a, b) }

// mustJSON encodes a decoded JSON value for a message.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
