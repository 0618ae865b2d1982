package gemini

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// FuzzTranslateChat: any body is either refused as Unservable or becomes a
// JSON object with contents.
func FuzzTranslateChat(f *testing.F) {
	f.Add([]byte(chatBody))
	f.Add([]byte(benchChat))
	f.Add([]byte(`{"model":"m","\u006dessages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}],"n":3}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, err := TranslateChat(body, false)
		if err != nil {
			var u *router.Unservable
			if !errors.As(err, &u) || u.Code == "" || u.Message == "" {
				t.Fatalf("error %v is not a complete Unservable", err)
			}
			return
		}
		var req struct {
			Contents []json.RawMessage `json:"contents"`
		}
		if err := json.Unmarshal(tr.Body, &req); err != nil || len(req.Contents) == 0 {
			t.Fatalf("translated %s: %v", tr.Body, err)
		}
	})
}

// FuzzChatStream: whatever the upstream sends, the translation is valid
// SSE whose every event is JSON, and it either ends in [DONE] with no read
// error or ends with an error (a read error or an error event) and no
// [DONE].
func FuzzChatStream(f *testing.F) {
	f.Add(benchStream)
	f.Add(sseOf(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}}}]},"finishReason":"STOP"}]}`))
	f.Add(sseOf(`{"promptFeedback":{"blockReason":"SAFETY"}}`))
	f.Add(sseOf(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`))
	f.Add("data: {\"candidates\":[{\"index\":1,\"finishReason\":\"STOP\"}]}\r\rdata: x")
	f.Fuzz(func(t *testing.T, up string) {
		resp := ChatStream(&http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(up))}, "m", true, 1)
		b, err := io.ReadAll(resp.Body)
		out := string(b)
		done := strings.HasSuffix(out, "data: [DONE]\n\n")
		errEvent := strings.Contains(out, `data: {"error":`)
		switch {
		case err == nil && !done && !errEvent:
			t.Fatalf("a clean end without [DONE] or an error event: %q", out)
		case err != nil && done:
			t.Fatalf("[DONE] and a read error %v", err)
		}
		for _, ev := range strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n") {
			data, ok := strings.CutPrefix(ev, "data: ")
			if ev == "" || data == "[DONE]" {
				continue
			}
			if !ok || !json.Valid([]byte(data)) {
				t.Fatalf("event %q is not a data line of JSON", ev)
			}
		}
	})
}

// FuzzChatAnswer: any 2xx body becomes a chat.completion or a 502.
func FuzzChatAnswer(f *testing.F) {
	f.Add(answerBody)
	f.Add(`{"promptFeedback":{"blockReason":"OTHER"}}`)
	f.Add(`{"candidates":[{"index":7},{"index":0}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		resp, err := ChatAnswer(answer(200, body), "m", 1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if (resp.StatusCode != 200 && resp.StatusCode != 502) || !json.Valid(b) {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	})
}
