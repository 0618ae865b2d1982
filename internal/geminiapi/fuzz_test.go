package geminiapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzToChat: any body is translated or refused, never a panic; a
// translation is valid JSON with the messages, of a size proportional to
// the body; a refusal is a 400 *Error of bounded size.
func FuzzToChat(f *testing.F) {
	for _, s := range []string{
		`{"contents":[{"parts":[{"text":"hi"}]}]}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":"\u0000\"x"}}}]},{"parts":[{"functionResponse":{"name":"f","response":{"r":[1]}}}]}]}`,
		`{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"aGk_-w"}},{"text":"a"}]}],"systemInstruction":{"parts":[{"text":"s"},{"text":"t"}]}}`,
		`{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"a":{"type":"ARRAY","items":{"type":"STRING"},"example":[1]}},"anyOf":[{"type":"NULL"}]}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}}`,
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"maxOutputTokens":"5","responseMimeType":"application/json","responseSchema":{"type":"OBJECT"},"thinkingConfig":{"thinkingBudget":9000}}}`,
		`{"con\u0074ents":[{"parts":[{"te\u0078t":"\ud800"}]}],"contents":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, stream := range []bool{false, true} {
			out, err := ToChat("m", body, stream)
			checkTranslation(t, body, out, err)
		}
		out, err := CountTokensToChat("m", body)
		checkTranslation(t, body, out, err)
	})
}

func checkTranslation(t *testing.T, body, out []byte, err error) {
	t.Helper()
	if err != nil {
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != 400 || ge.Status != "INVALID_ARGUMENT" || len(ge.Message) > 8<<10 {
			t.Fatalf("refusal %#v", err)
		}
		return
	}
	var chat struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
	}
	if e := json.Unmarshal(out, &chat); e != nil || chat.Model != "m" || len(chat.Messages) == 0 && !bytes.Contains(out, []byte(`"messages":[]`)) {
		t.Fatalf("translation %s of %s: %v", out, body, e)
	}
	if len(out) > 4*len(body)+1024 {
		t.Fatalf("translation of %d bytes from a body of %d", len(out), len(body))
	}
}

// FuzzNewStream: any chat stream is translated without a panic, in both
// forms, to output proportional to its input; an answer that ends
// without an error is well-formed: one JSON array, or events whose data
// are JSON objects.
func FuzzNewStream(f *testing.F) {
	f.Add([]byte(chunkEvent(`{"content":"Hi"}`, "") + chunkEvent(`{}`, "stop") + usageEvent + "data: [DONE]\n\n"))
	f.Add([]byte(chunkEvent(`{"tool_calls":[{"index":0,"id":"t","function":{"name":"f","arguments":"{}"}}]}`, "tool_calls")))
	f.Add([]byte(`data: {"error":{"message":"x","code":429}}` + "\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"index\":3,\"delta\":{\"reasoning\":\"r\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n"))
	f.Add([]byte("event: error\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, sse := range []bool{false, true} {
			var out bytes.Buffer
			_, err := io.Copy(&out, NewStream(bytes.NewReader(in), "m", sse))
			if out.Len() > 8*len(in)+4096 {
				t.Fatalf("%d bytes out of %d in", out.Len(), len(in))
			}
			if err != nil {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("error %v", err)
				}
				continue
			}
			if !sse {
				var v []map[string]json.RawMessage
				if e := json.Unmarshal(out.Bytes(), &v); e != nil || len(v) == 0 {
					t.Fatalf("not a JSON array of responses: %v\n%s", e, out.Bytes())
				}
				continue
			}
			sc := bufio.NewScanner(&out)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && !json.Valid([]byte(data)) {
					t.Fatalf("event data %s", data)
				}
			}
		}
	})
}
