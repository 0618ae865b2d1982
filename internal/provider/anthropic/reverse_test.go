package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	anthopt "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// The reverse goldens take the forward goldens' outputs as their inputs.

func TestFromMessagesRequestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/request/*.anthropic.json")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".anthropic.json")
		t.Run(name, func(t *testing.T) {
			in, _ := os.ReadFile(f)
			out, err := FromMessagesRequest(in)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "testdata/reverse/request_"+name+".openai.json", indent(t, out))
			// And forward again: the Anthropic request comes back the same.
			tr, err := translateRequest(out, func(string) int { return 1 })
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, tr.body, in) {
				t.Errorf("round trip differs:\n%s\nwant\n%s", indent(t, tr.body), in)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatal("not JSON")
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

func TestFromMessagesRequestRefusals(t *testing.T) {
	for body, field := range map[string]string{
		`{"model":"m","max_tokens":1,"top_k":5,"messages":[]}`:                                                            "top_k",
		`{"model":"m","max_tokens":1,"mcp_servers":[],"messages":[]}`:                                                     "mcp_servers",
		`{"model":"m","max_tokens":1,"tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[]}`:         "tools[0].type",
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"search_result","content":[]}]}]}`:     "messages[0].content[0].type",
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file"}}]}]}`: "messages[0].content[0].source.type",
	} {
		_, err := FromMessagesRequest([]byte(body))
		var re *RequestError
		if !errors.As(err, &re) || re.Field != field {
			t.Errorf("%s: got %v, want a refusal of %s", body, err, field)
		}
	}
}

func TestToMessagesResponseGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/response/*.openai.json")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".openai.json")
		t.Run(name, func(t *testing.T) {
			in, _ := os.ReadFile(f)
			out, err := ToMessagesResponse(in, "")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "testdata/reverse/response_"+name+".anthropic.json", indent(t, out))
		})
	}
}

func TestMessagesStreamGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/stream/*.openai.sse")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".openai.sse")
		t.Run(name, func(t *testing.T) {
			in, _ := os.ReadFile(f)
			out, err := io.ReadAll(NewMessagesStream(bytes.NewReader(in), ""))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "testdata/reverse/stream_"+name+".anthropic.sse", out)
			slow, _ := io.ReadAll(iotest.OneByteReader(NewMessagesStream(iotest.OneByteReader(bytes.NewReader(in)), "")))
			if !bytes.Equal(slow, out) {
				t.Errorf("one-byte reads differ:\n%s", slow)
			}
			// The Anthropic stream translates forward again into a stream
			// that ends the same way.
			checkChunks(t, translateStream(t, out, false, func(r io.Reader) io.Reader { return r }))
		})
	}
}

// FuzzMessagesStream: any OpenAI stream gives bounded Anthropic output that
// ends in message_stop or an error event.
func FuzzMessagesStream(f *testing.F) {
	addSeeds(f, "testdata/stream/*.openai.sse")
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := io.ReadAll(io.LimitReader(NewMessagesStream(bytes.NewReader(in), ""), int64(outputBound(len(in))+1)))
		if len(out) > outputBound(len(in)) {
			t.Fatalf("%d bytes out of %d in", len(out), len(in))
		}
		if err == nil && !bytes.HasSuffix(out, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")) &&
			!bytes.Contains(out, []byte("event: error\n")) {
			t.Fatalf("no clean end:\n%s", out)
		}
	})
}

// TestE2EMessagesClient runs the official Anthropic client through both
// directions: its Messages request is translated to OpenAI's format, sent
// through the forward Upstream to a fake Anthropic, and the OpenAI answer
// is translated back to Messages.
func TestE2EMessagesClient(t *testing.T) {
	fake := &fakeAnthropic{t: t}
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	u, err := New(Config{BaseURL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		body, err := FromMessagesRequest(in)
		if err != nil {
			t.Errorf("FromMessagesRequest: %v", err)
			w.WriteHeader(400)
			return
		}
		var head struct{ Stream bool }
		json.Unmarshal(body, &head)
		resp, err := u.Send(r.Context(), &router.Call{Path: "/chat/completions", Key: "sk-ant", Body: body, Stream: head.Stream})
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("Send: %v", err)
			w.WriteHeader(502)
			return
		}
		defer resp.Body.Close()
		if head.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			io.Copy(w, NewMessagesStream(resp.Body, "claude-via-gateway"))
			return
		}
		oa, _ := io.ReadAll(resp.Body)
		out, err := ToMessagesResponse(oa, "claude-via-gateway")
		if err != nil {
			t.Errorf("ToMessagesResponse: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}))
	t.Cleanup(gw.Close)
	client := anth.NewClient(anthopt.WithBaseURL(gw.URL), anthopt.WithAPIKey("fusebox"), anthopt.WithMaxRetries(0))
	ctx := context.Background()
	tool := anth.ToolUnionParam{OfTool: &anth.ToolParam{
		Name: "get_weather", Description: anth.String("Weather for a city"),
		InputSchema: anth.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}},
	}}
	params := anth.MessageNewParams{
		Model: "claude-sonnet-4-5", MaxTokens: 100,
		System:   []anth.TextBlockParam{{Text: "Be brief."}},
		Messages: []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock("Weather in Paris?"))},
		Tools:    []anth.ToolUnionParam{tool},
	}
	m, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if m.StopReason != "tool_use" || len(m.Content) != 1 || m.Content[0].Type != "tool_use" ||
		m.Content[0].Name != "get_weather" || string(m.Content[0].Input) != `{"city":"Paris"}` || m.Model != "claude-via-gateway" {
		t.Fatalf("message %+v", m)
	}
	if fake.last["system"] != "Be brief." {
		t.Errorf("upstream system %v", fake.last["system"])
	}
	params.Messages = append(params.Messages, m.ToParam(),
		anth.NewUserMessage(anth.NewToolResultBlock(m.Content[0].ID, "18C", false)))
	m, err = client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if m.StopReason != "end_turn" || m.Content[0].Text != "It is sunnytoolu_9." || m.Usage.InputTokens != 20 || m.Usage.CacheReadInputTokens != 5 {
		t.Errorf("message %+v", m)
	}

	// Streamed: text, then a tool call with its input in fragments.
	for _, withTools := range []bool{false, true} {
		p := params
		p.Messages = params.Messages[:1]
		if !withTools {
			p.Tools = nil
		}
		s := client.Messages.NewStreaming(ctx, p)
		var acc anth.Message
		for s.Next() {
			if err := acc.Accumulate(s.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if withTools {
			if acc.StopReason != "tool_use" || len(acc.Content) != 1 || string(acc.Content[0].Input) != `{"city": "Paris"}` {
				t.Errorf("streamed tool use %+v", acc)
			}
		} else if acc.StopReason != "end_turn" || len(acc.Content) != 1 || acc.Content[0].Text != "It is sunny." || acc.Usage.OutputTokens != 3 {
			t.Errorf("streamed text %+v", acc)
		}
	}
}

// Regression tests for what FuzzToMessagesResponse found.

// Errors quoted encoding/json, Go types and all ("cannot unmarshal object
// into Go struct field chatAnswer.choices of type []struct { … }").
func TestToMessagesResponseErrorsInJSONWords(t *testing.T) {
	for body, want := range map[string]string{
		`{"id":{"a":1},"choices":[{"message":{"content":"x"}}]}`: `field "id": want a string, got an object`,
		`{"choices":{"message":{}}}`:                             `field "choices": want an array, got an object`,
		`[]`:                                                     `is not a JSON object: want an object, got an array`,
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1e400}}`:              `field "usage.prompt_tokens": the number 1e400 is out of range`,
		`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1.5}}`:                `field "usage.prompt_tokens": want an integer, got 1.5`,
		`{"choices":[{"message":{"tool_calls":[{"id":"c\n","function":{"arguments":"[1]"}}]}}]}`: `choices[0].message.tool_calls[0].function.arguments must be a JSON object`,
		`{"choices":[null]}`: `has no choices`,
	} {
		_, err := ToMessagesResponse([]byte(body), "")
		if err == nil || !strings.Contains(err.Error(), want) || goSyntax.MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n got %v\nwant …%s", body, err, want)
		}
	}
}

// Negative usage counts went through as negative tokens, and cached_tokens
// above prompt_tokens made more input tokens than the prompt had.
func TestToMessagesResponseUsageClamped(t *testing.T) {
	for body, want := range map[string]anthropicUsage{
		`{"prompt_tokens":-10,"completion_tokens":-1,"prompt_tokens_details":{"cached_tokens":-5}}`: {},
		`{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":50}}`:   {CacheReadInputTokens: 10, OutputTokens: 1},
		`{"prompt_tokens":10,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":4}}`:    {InputTokens: 6, CacheReadInputTokens: 4, OutputTokens: 1},
	} {
		out, err := ToMessagesResponse([]byte(`{"choices":[{"message":{"content":"x"}}],"usage":`+body+`}`), "m")
		var m messagesAnswer
		if err != nil || json.Unmarshal(out, &m) != nil || m.Usage != want {
			t.Errorf("%s: %v %+v, want %+v", body, err, m.Usage, want)
		}
	}
}

// A tool call of another type than function (OpenAI's custom tools) became
// a tool_use block with no name and an empty input.
func TestToMessagesResponseRefusesOtherToolCalls(t *testing.T) {
	_, err := ToMessagesResponse([]byte(`{"choices":[{"message":{"tool_calls":[{"id":"c","type":"custom","custom":{"name":"grep","input":"x"}}]}}]}`), "")
	if err == nil || !strings.Contains(err.Error(), `tool_calls[0].type: "custom" is not translated`) {
		t.Errorf("got %v", err)
	}
}
