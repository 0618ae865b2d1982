package geminiapi

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// chunkEvent returns a chat chunk event with a delta for choice 0.
func chunkEvent(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"c1","model":"up","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
}

const usageEvent = `data: {"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}` + "\n\n"

// readAll reads a translated stream whole.
func readAll(t *testing.T, chatSSE string, sse bool) (string, error) {
	t.Helper()
	return readFrom(NewStream(strings.NewReader(chatSSE), "gem", sse))
}

func readFrom(r io.Reader) (string, error) {
	var b strings.Builder
	_, err := io.Copy(&b, r)
	return b.String(), err
}

func TestStreamSSE(t *testing.T) {
	in := chunkEvent(`{"role":"assistant","content":""}`, "") + chunkEvent(`{"content":"Hel"}`, "") +
		chunkEvent(`{"content":"lo"}`, "") + chunkEvent(`{}`, "stop") + usageEvent + "data: [DONE]\n\n"
	got, err := readAll(t, in, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],"modelVersion":"gem","responseId":"c1"}` + "\r\n\r\n" +
		`data: {"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"index":0}],"modelVersion":"gem","responseId":"c1"}` + "\r\n\r\n" +
		`data: {"candidates":[{"content":{"parts":[],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7},"modelVersion":"gem","responseId":"c1"}` + "\r\n\r\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestStreamArray reads the array form as a JSON decoder would: one
// array whose elements are the responses.
func TestStreamArray(t *testing.T) {
	in := chunkEvent(`{"content":"Hi"}`, "") +
		chunkEvent(`{"tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{\"a\""}}]}`, "") +
		chunkEvent(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}`, "") +
		chunkEvent(`{"tool_calls":[{"index":1,"id":"t2","function":{"name":"g","arguments":""}}]}`, "") +
		chunkEvent(`{}`, "tool_calls") + usageEvent + "data: [DONE]\n\n"
	got, err := readAll(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	var rs []struct {
		Candidates []struct {
			Content struct {
				Parts []map[string]any
			}
			FinishReason string
		}
		UsageMetadata map[string]int
	}
	if err := json.Unmarshal([]byte(got), &rs); err != nil {
		t.Fatalf("not one JSON array: %v\n%s", err, got)
	}
	if len(rs) != 2 || rs[0].Candidates[0].Content.Parts[0]["text"] != "Hi" {
		t.Fatalf("responses %s", got)
	}
	last := rs[1].Candidates[0]
	calls := asJSON(last.Content.Parts)
	if calls != `[{"functionCall":{"args":{"a":1},"id":"t1","name":"f"}},{"functionCall":{"args":{},"id":"t2","name":"g"}}]` ||
		last.FinishReason != "STOP" || rs[1].UsageMetadata["totalTokenCount"] != 7 {
		t.Errorf("last response %s", got)
	}
	if !strings.HasPrefix(got, "[{") || !strings.Contains(got, "},\r\n{") || !strings.HasSuffix(got, "}]") {
		t.Errorf("framing %q", got)
	}
}

// TestStreamEnds covers how a chat stream may end, and what the client
// gets: a complete answer, an error object, or a cut with
// io.ErrUnexpectedEOF and no finishReason.
func TestStreamEnds(t *testing.T) {
	text := chunkEvent(`{"content":"Hi"}`, "")
	tests := []struct {
		name, in  string
		finish    bool   // the answer has a finishReason
		errObject string // the error object's status, if one ends it
		cut       bool   // Read returns io.ErrUnexpectedEOF
	}{
		{"done", text + chunkEvent(`{}`, "stop") + usageEvent + "data: [DONE]\n\n", true, "", false},
		{"finish then eof", text + chunkEvent(`{}`, "length"), true, "", false},
		{"done without finish", text + "data: [DONE]\n\n", true, "", false},
		{"eof", text, false, "", true},
		{"empty", "", false, "", true},
		{"truncated frame", text + `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"x"}`, false, "", true},
		{"garbage", text + "data: {not json\n\n", false, "INTERNAL", false},
		{"error chunk", text + `data: {"error":{"message":"slow down","type":"rate_limit_exceeded"}}` + "\n\n", false, "RESOURCE_EXHAUSTED", false},
		{"error event", text + "event: error\ndata: {}\n\n", false, "INTERNAL", false},
		{"bad arguments", chunkEvent(`{"tool_calls":[{"index":0,"id":"t","function":{"name":"f","arguments":"{\"a"}}]}`, "") + chunkEvent(`{}`, "tool_calls") + "data: [DONE]\n\n", false, "INTERNAL", false},
		{"too many choices", manyChoices(maxCandidates + 1), false, "INTERNAL", false},
	}
	for _, tt := range tests {
		for _, sse := range []bool{true, false} {
			got, err := readAll(t, tt.in, sse)
			if tt.cut != errors.Is(err, io.ErrUnexpectedEOF) || !tt.cut && err != nil {
				t.Errorf("%s (sse %v): error %v", tt.name, sse, err)
			}
			if strings.Contains(got, "finishReason") != tt.finish {
				t.Errorf("%s (sse %v): finishReason in %s", tt.name, sse, got)
			}
			if tt.errObject != "" && !strings.Contains(got, `"status":"`+tt.errObject+`"}}`) {
				t.Errorf("%s (sse %v): no %s error object in %s", tt.name, sse, tt.errObject, got)
			}
			if !sse && !tt.cut {
				var v []json.RawMessage
				if json.Unmarshal([]byte(got), &v) != nil {
					t.Errorf("%s: not one JSON array: %s", tt.name, got)
				}
			}
			if !sse && tt.cut && strings.HasSuffix(got, "]") {
				t.Errorf("%s: a cut answer closed its array: %s", tt.name, got)
			}
		}
	}
}

// manyChoices returns a stream with n choices.
func manyChoices(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`data: {"choices":[{"index":` + strconv.Itoa(i) + `,"delta":{"content":"a"}}]}` + "\n\n")
	}
	return b.String()
}

// brokenReader yields data, then fails as a reset connection does.
type brokenReader struct {
	data string
	err  error
}

func (r *brokenReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestStreamReset(t *testing.T) {
	in := &brokenReader{data: chunkEvent(`{"content":"Hi"}`, ""), err: syscall.ECONNRESET}
	got, err := readFrom(NewStream(in, "gem", true))
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("error %v, want one wrapping io.ErrUnexpectedEOF and the reset", err)
	}
	if !strings.Contains(got, `"text":"Hi"`) || strings.Contains(got, "finishReason") {
		t.Errorf("got %s", got)
	}
	// A reset after the finish_reason leaves the answer whole.
	in = &brokenReader{data: chunkEvent(`{"content":"Hi"}`, "stop"), err: syscall.ECONNRESET}
	got, err = readFrom(NewStream(in, "gem", false))
	if err != nil || !strings.Contains(got, `"finishReason":"STOP"`) || !strings.HasSuffix(got, "]") {
		t.Errorf("after the finish: %v %s", err, got)
	}
}

// TestStreamStall: a stream that stalls blocks the reader, which its
// caller's watchdog ends by closing the body; what was sent stays
// unfinished.
func TestStreamStall(t *testing.T) {
	pr, pw := io.Pipe()
	s := NewStream(pr, "gem", true)
	go func() {
		io.WriteString(pw, chunkEvent(`{"content":"Hi"}`, ""))
		// the upstream stalls here; the watchdog closes the body
		pw.CloseWithError(errors.New("idle timeout"))
	}()
	got, err := readFrom(s)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(got, `"Hi"`) {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestStreamCandidates(t *testing.T) {
	in := `data: {"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"reasoning_content":"r","content":"b"}}]}` + "\n\n" +
		`data: {"choices":[{"index":1,"delta":{},"finish_reason":"length"}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}` + "\n\n" + usageEvent
	got, err := readAll(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"},"index":0},{"content":{"parts":[{"text":"r","thought":true},{"text":"b"}],"role":"model"},"index":1}],"modelVersion":"gem"},` + "\r\n" +
		`{"candidates":[{"content":{"parts":[],"role":"model"},"finishReason":"SAFETY","index":0},{"content":{"parts":[],"role":"model"},"finishReason":"MAX_TOKENS","index":1}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7},"modelVersion":"gem","responseId":"c1"}]`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestStreamTextAsSent: a delta's JSON string is copied as it came, and
// decodes to the text the upstream meant; invalid UTF-8 becomes U+FFFD.
func TestStreamTextAsSent(t *testing.T) {
	in := chunkEvent(`{"content":"\u00e9\n\"<\ud83d\ude00"}`, "") + chunkEvent("{\"content\":\"a\xffb\"}", "stop")
	got, err := readAll(t, in, false)
	if err != nil {
		t.Fatal(err)
	}
	var rs []struct {
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
	}
	if err := json.Unmarshal([]byte(got), &rs); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if a, b := rs[0].Candidates[0].Content.Parts[0].Text, rs[1].Candidates[0].Content.Parts[0].Text; a != "é\n\"<😀" || b != "a\uFFFDb" {
		t.Errorf("texts %q %q", a, b)
	}
}
