package cache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// serveEntry answers chat completions from e as the gateway will on a hit:
// the stored body for a plain request, the replayed stream for a streamed
// one.
func serveEntry(t *testing.T, e Entry) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream        bool `json:"stream"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("request: %v", err)
		}
		if !req.Stream {
			w.Header().Set("Content-Type", e.ContentType)
			w.Write(e.Body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if err := WriteStream(w, e, req.StreamOptions.IncludeUsage); err != nil {
			t.Errorf("WriteStream: %v", err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func client(srv *httptest.Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

// longText is long enough to be replayed in many pieces, with multi-byte
// runes, quotes and line breaks.
var longText = strings.Repeat("Paris, « la Ville Lumière », is \"the\" capital.\n", 20)

func longEntry() Entry {
	body := `{"id":"chatcmpl-9","object":"chat.completion","created":1745769600,"model":"gpt-4.1-2025-04-14",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":` + string(appendString(nil, longText)) + `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":12,"completion_tokens":300,"total_tokens":312,"prompt_tokens_details":{"cached_tokens":0}},` +
		"\n" + `"service_tier":"default","system_fingerprint":"fp_1"}`
	return Entry{Body: []byte(body), ContentType: "application/json", Target: "openai/gpt-4.1"}
}

func toolsEntry(t *testing.T) Entry {
	return Entry{Body: []byte(assemble(t, liveTools)), ContentType: "application/json"}
}

// TestReplayOpenAIClient streams stored answers to the official openai-go
// client (its ssestream decoder and ChatCompletionAccumulator) and checks
// it rebuilds the same completion it parses from the plain body.
func TestReplayOpenAIClient(t *testing.T) {
	for name, e := range map[string]Entry{"text": longEntry(), "tools": toolsEntry(t)} {
		for _, usage := range []bool{false, true} {
			srv := serveEntry(t, e)
			c := client(srv)
			want, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "smart", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			p := openai.ChatCompletionNewParams{Model: "smart", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
			if usage {
				p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			}
			st := c.Chat.Completions.NewStreaming(t.Context(), p)
			var acc openai.ChatCompletionAccumulator
			chunks := 0
			for st.Next() {
				if !acc.AddChunk(st.Current()) {
					t.Fatalf("%s: the accumulator refused chunk %d", name, chunks)
				}
				chunks++
			}
			if err := st.Err(); err != nil {
				t.Fatalf("%s: stream: %v", name, err)
			}
			got := acc.ChatCompletion
			if got.ID != want.ID || got.Model != want.Model || got.Created != want.Created || len(got.Choices) != 1 {
				t.Fatalf("%s: got %+v", name, got)
			}
			gm, wm := got.Choices[0].Message, want.Choices[0].Message
			if gm.Content != wm.Content || got.Choices[0].FinishReason != want.Choices[0].FinishReason {
				t.Errorf("%s: content %q / %q, finish %q / %q", name, gm.Content, wm.Content, got.Choices[0].FinishReason, want.Choices[0].FinishReason)
			}
			if len(gm.ToolCalls) != len(wm.ToolCalls) {
				t.Fatalf("%s: %d tool calls, want %d", name, len(gm.ToolCalls), len(wm.ToolCalls))
			}
			for i := range gm.ToolCalls {
				g, w := gm.ToolCalls[i], wm.ToolCalls[i]
				if g.ID != w.ID || g.Function.Name != w.Function.Name || g.Function.Arguments != w.Function.Arguments {
					t.Errorf("%s: tool call %d: %+v, want %+v", name, i, g, w)
				}
			}
			if usage && got.Usage.TotalTokens != want.Usage.TotalTokens {
				t.Errorf("%s: usage %d, want %d", name, got.Usage.TotalTokens, want.Usage.TotalTokens)
			}
			if !usage && got.Usage.TotalTokens != 0 {
				t.Errorf("%s: usage sent unasked", name)
			}
			if name == "text" && chunks < len(longText)/pieceSize {
				t.Errorf("text in %d chunks", chunks)
			}
		}
	}
}

// TestRoundTrip checks that assembling a replay gives back the stored
// answer (in the Assembler's field order), so a streamed answer replayed
// and stored again does not drift.
func TestRoundTrip(t *testing.T) {
	for name, e := range map[string]Entry{"text": longEntry(), "tools": toolsEntry(t), "live": {Body: []byte(liveTextWant)}} {
		first := replayAssemble(t, e)
		if name != "text" && first != string(e.Body) {
			t.Errorf("%s:\n got %s\nwant %s", name, first, e.Body)
		}
		if again := replayAssemble(t, Entry{Body: []byte(first)}); again != first {
			t.Errorf("%s: second round trip drifted:\n%s\n%s", name, again, first)
		}
	}
}

func replayAssemble(t *testing.T, e Entry) string {
	t.Helper()
	events, err := Replay(e, true)
	if err != nil {
		t.Fatal(err)
	}
	var data []string
	for _, ev := range events {
		s := string(ev)
		if !strings.HasPrefix(s, "data: ") || !strings.HasSuffix(s, "\n\n") || strings.Count(s, "\n") != 2 {
			t.Fatalf("bad event framing: %q", s)
		}
		data = append(data, strings.TrimSuffix(strings.TrimPrefix(s, "data: "), "\n\n"))
	}
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("last event %q", data[len(data)-1])
	}
	return assemble(t, data)
}

// TestReplayShape checks the event sequence of a live stream: role first,
// finish_reason last before usage, usage with empty choices, [DONE].
func TestReplayShape(t *testing.T) {
	events, err := Replay(Entry{Body: []byte(liveTextWant)}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Paris is the capital \"de\" la France.\n"},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1745769600,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21}}`,
		`[DONE]`,
	}
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(events), len(want), bytes.Join(events, nil))
	}
	for i, ev := range events {
		if string(ev) != "data: "+want[i]+"\n\n" {
			t.Errorf("event %d:\n got %s\nwant data: %s", i, ev, want[i])
		}
	}
	var buf bytes.Buffer
	if err := WriteStream(&buf, Entry{Body: []byte(liveTextWant)}, true); err != nil || !bytes.Equal(buf.Bytes(), bytes.Join(events, nil)) {
		t.Fatalf("WriteStream differs from Replay: %v", err)
	}
	// Each event is one line of data: a scanner sees no stray line.
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "data: ") {
			t.Fatalf("stray line %q", l)
		}
	}
}

func TestReplayErrors(t *testing.T) {
	for _, body := range []string{
		``, `{}`, `[]`, `{"choices":[]}`, `{"object":"chat.completion.chunk","choices":[{"index":0}]}`,
		`{"choices":[{"index":0,"message":{"content":[{"type":"text","text":"x"}]}}]}`,
		`{"choices":[{"index":0,"message":{}},{"index":0,"message":{}}]}`,
	} {
		var buf bytes.Buffer
		if err := WriteStream(&buf, Entry{Body: []byte(body)}, false); !errors.Is(err, ErrNotCompletion) || buf.Len() != 0 {
			t.Errorf("WriteStream(%s) = %v, wrote %d bytes", body, err, buf.Len())
		}
	}
}

// Regression tests for what FuzzReplay found; each names the bug.

// replayed assembles the replay of a stored body again.
func replayed(t *testing.T, body string) (string, error) {
	t.Helper()
	events, err := Replay(Entry{Body: []byte(body)}, true)
	if err != nil {
		return "", err
	}
	a := NewAssembler(0)
	for _, ev := range events {
		if err := a.Add(bytes.TrimSuffix(bytes.TrimPrefix(ev, []byte("data: ")), []byte("\n\n"))); err != nil {
			t.Fatal(err)
		}
	}
	out, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	return string(out), nil
}

func storedBody(message string) string {
	return `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":` + message + `,"logprobs":null,"finish_reason":"stop"}]}`
}

// Bodies that a stream cannot say the same as were replayed anyway: a
// choice without a message (or with null or a string) as an empty
// assistant answer; a key given twice as both values joined ("ab", where
// decoders read "b"); a tool call whose id is a number, or that is not an
// object, dropped; a non-string role as "assistant".
func TestReplayRefusesWhatItCannotSay(t *testing.T) {
	for _, body := range []string{
		`{"choices":[{"index":0,"finish_reason":"stop"}]}`,
		storedBody(`null`),
		storedBody(`"hi"`),
		storedBody(`{"content":"a","content":"b"}`),
		storedBody(`{"content":"a","cont\u0065nt":"b"}`),
		storedBody(`{"\ud800":"a","\udc00":"b"}`),
		storedBody(`{"content":[{"type":"text","text":"x"}]}`),
		storedBody(`{"role":5,"content":"x"}`),
		storedBody(`{"tool_calls":{"id":"c"}}`),
		storedBody(`{"tool_calls":[1,{"id":"c"}]}`),
		storedBody(`{"tool_calls":[{"id":5,"function":{"name":"f","arguments":"{}"}}]}`),
		storedBody(`{"tool_calls":[{"id":"c","function":{"name":"f","name":"g"}}]}`),
		storedBody(`{"function_call":{"name":"f","arguments":{}}}`),
	} {
		var w bytes.Buffer
		if _, err := Replay(Entry{Body: []byte(body)}, false); !errors.Is(err, ErrNotCompletion) {
			t.Errorf("%s: replayed (%v)", body, err)
		} else if err := WriteStream(&w, Entry{Body: []byte(body)}, false); err == nil || w.Len() > 0 {
			t.Errorf("%s: WriteStream wrote %d bytes (%v)", body, w.Len(), err)
		}
	}
}

// A stored completion's tool calls carry no index; one that did ("index":0
// on two calls) had its calls merged into one.
func TestReplayStoredToolCallsByPosition(t *testing.T) {
	got, err := replayed(t, storedBody(`{"role":"assistant","content":null,"tool_calls":[`+
		`{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},`+
		`{"index":0,"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}`))
	if err != nil || !strings.Contains(got, `"id":"a"`) || !strings.Contains(got, `"id":"b"`) {
		t.Errorf("%v: %s", err, got)
	}
}

// An empty refusal or reasoning_content was not replayed, so the stream
// said null (or nothing) where the body said "".
func TestReplayEmptyStringFields(t *testing.T) {
	got, err := replayed(t, storedBody(`{"role":"assistant","content":"ok","refusal":"","reasoning_content":""}`))
	if err != nil || !strings.Contains(got, `"refusal":""`) || !strings.Contains(got, `"reasoning_content":""`) {
		t.Errorf("%v: %s", err, got)
	}
}

// "function_call":null made an empty legacy function call in the replay.
func TestReplayFunctionCallNull(t *testing.T) {
	got, err := replayed(t, storedBody(`{"role":"assistant","content":"x","function_call":null,"tool_calls":null}`))
	if err != nil || strings.Contains(got, "function_call") || strings.Contains(got, "tool_calls") {
		t.Errorf("%v: %s", err, got)
	}
}

// Every chunk repeats the id and model, so a long id times a long content
// made events quadratic in the body: 100 KB of each gave over 100 MB.
func TestReplayBounded(t *testing.T) {
	body := `{"id":"` + strings.Repeat("i", 100<<10) + `","choices":[{"index":0,"message":{"content":"` +
		strings.Repeat("word ", 20<<10) + `"},"finish_reason":"stop"}]}`
	if _, err := Replay(Entry{Body: []byte(body)}, true); !errors.Is(err, ErrNotCompletion) {
		t.Errorf("replayed: %v", err)
	}
	// A long answer as models write it is replayed.
	e := longEntry()
	if events, err := Replay(e, true); err != nil || len(bytes.Join(events, nil)) > maxReplay(len(e.Body)) {
		t.Errorf("long entry: %v", err)
	}
}
