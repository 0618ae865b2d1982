package telemetry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fuseboxhq/fusebox/internal/telemetry"
)

const chatBody = `{"model":"fast","messages":[
	{"role":"system","content":"Be brief."},
	{"role":"user","content":[{"type":"text","text":"Weather in Paris?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},
	{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
	{"role":"tool","tool_call_id":"call_1","content":"rainy, 14C"}]}`

// contentSpans runs one request that captures its input and output and
// returns the attempt span's attributes.
func contentSpans(t *testing.T, capture bool, body, answer string) map[string]any {
	t.Helper()
	tel, rc, _ := start(t, telemetry.Config{CaptureContent: capture})
	if tel.CaptureContent() != capture {
		t.Fatalf("CaptureContent() = %v; want %v", !capture, capture)
	}
	_, req := tel.StartRequest(context.Background(), httptestRequest(), "chat", "fast", false, 0)
	req.Input([]byte(body))
	a := req.StartAttempt(telemetry.AttemptInfo{Target: "p/m", Provider: "openai", Model: "m", Number: 1})
	a.Output(answer, "stop")
	a.End(telemetry.AttemptResult{})
	req.End(200, "")
	tel.Shutdown(context.Background())
	spans, _, _ := rc.snapshot()
	for _, s := range spans {
		if s.Name == "chat m" {
			return s.attrs
		}
	}
	t.Fatal("no attempt span")
	return nil
}

func TestCaptureContent(t *testing.T) {
	attrs := contentSpans(t, true, chatBody, "It is rainy.")
	wantIn := `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},` +
		`{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"},{"type":"uri","modality":"image","uri":"data:image/png;base64,"}]},` +
		`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris"}}]},` +
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"rainy, 14C"}]}]`
	if got := attrs["gen_ai.input.messages"]; got != wantIn {
		t.Errorf("gen_ai.input.messages =\n%v\nwant\n%v", got, wantIn)
	}
	wantOut := `[{"role":"assistant","parts":[{"type":"text","content":"It is rainy."}],"finish_reason":"stop"}]`
	if got := attrs["gen_ai.output.messages"]; got != wantOut {
		t.Errorf("gen_ai.output.messages = %v; want %v", got, wantOut)
	}
	if _, has := attrs["fusebox.content.truncated"]; has {
		t.Error("small content marked truncated")
	}
}

func TestContentOffByDefault(t *testing.T) {
	attrs := contentSpans(t, false, chatBody, "It is rainy.")
	for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "fusebox.content.truncated"} {
		if v, has := attrs[k]; has {
			t.Errorf("%s = %v without CaptureContent", k, v)
		}
	}
}

// Content over MaxContentBytes loses its oldest messages, then its long
// texts are cut (on a rune boundary), and stays valid JSON.
func TestContentBounded(t *testing.T) {
	long := strings.Repeat("é", telemetry.MaxContentBytes) // 2 bytes a rune
	body, _ := json.Marshal(map[string]any{"messages": []map[string]string{
		{"role": "user", "content": "first"}, {"role": "user", "content": long}}})
	attrs := contentSpans(t, true, string(body), long)
	for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages"} {
		s, _ := attrs[k].(string)
		var msgs []struct {
			Role  string
			Parts []struct{ Content string }
		}
		if err := json.Unmarshal([]byte(s), &msgs); err != nil {
			t.Fatalf("%s is not JSON: %v", k, err)
		}
		if len(s) > telemetry.MaxContentBytes || len(msgs) != 1 || !utf8.ValidString(msgs[0].Parts[0].Content) ||
			len(msgs[0].Parts[0].Content) < telemetry.MaxContentBytes/2 {
			t.Errorf("%s: %d bytes, %d messages; want one message, cut to fit %d bytes", k, len(s), len(msgs), telemetry.MaxContentBytes)
		}
	}
	if attrs["fusebox.content.truncated"] != true {
		t.Error("cut content not marked fusebox.content.truncated")
	}
}

func TestContentUnreadableBody(t *testing.T) {
	attrs := contentSpans(t, true, `{"messages":"nope"}`, "")
	if v, has := attrs["gen_ai.input.messages"]; has {
		t.Errorf("gen_ai.input.messages = %v for a body without messages", v)
	}
	if got := attrs["gen_ai.output.messages"]; got != `[{"role":"assistant","parts":[{"type":"text"}],"finish_reason":"stop"}]` {
		t.Errorf("gen_ai.output.messages = %v", got)
	}
}
