package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// nativeLadder: a target that serves the Responses API (the simulator,
// with responses: true) before a chat-only one.
const nativeLadder = `
providers:
  oai: {type: openai, base_url: "%s/v1", keys: [k], responses: true}
  chat: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: smart
    targets: [{provider: oai, model: sim-large}, {provider: chat, model: m}]
    breaker: {consecutive: 3}
    retry: {attempts: 1}
  - name: chat-only
    targets: [{provider: chat, model: m}]
`

func simServer(t *testing.T) (*sim.Server, *httptest.Server) {
	t.Helper()
	s, err := sim.New(sim.Config{Name: "oai", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return s, hs
}

// A Responses request goes as it is to a target that serves the API,
// streamed or not, and its answer comes back as that target gave it; one
// that fails before its first content is replaced by the next target,
// through the chat translation.
func TestResponsesGoNativeToATargetThatServesThem(t *testing.T) {
	s, hs := simServer(t)
	chat := newUpstream(t, toolOrText)
	_, gw := start(t, Options{}, fmt.Sprintf(nativeLadder, hs.URL, chat.URL+"/v1"))
	c := newClient(gw.URL)
	for _, stream := range []bool{false, true} {
		var resp *http.Response
		params := responses.ResponseNewParams{Model: "smart", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
		var r *responses.Response
		if stream {
			r = respond(t, c, true, params)
		} else {
			var err error
			if r, err = c.Responses.New(t.Context(), params, option.WithResponseInto(&resp)); err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("X-Fusebox-Target"); got != "oai/sim-large" {
				t.Errorf("served by %q", got)
			}
		}
		if r.OutputText() == "" || r.Model == "" {
			t.Errorf("stream %v: %s", stream, r.RawJSON())
		}
	}
	if n := s.Stats().APIs["responses"]; n != 2 || chat.calls() != 0 {
		t.Errorf("the native target served %d Responses requests, the chat one %d; want 2 and 0 (stats %+v)", n, chat.calls(), s.Stats())
	}
	if err := s.SetFaults([]sim.Fault{{Kind: sim.ErrorStorm, Status: 503, Fraction: 1, To: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	r := respond(t, c, true, responses.ResponseNewParams{Model: "smart", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	if !strings.Contains(r.OutputText(), "-3C") || chat.calls() != 1 {
		t.Errorf("after the native target's 503: %q, chat calls %d; want the chat target's answer", r.OutputText(), chat.calls())
	}
}

// A request only the Responses API can express (a built-in tool:
// web_search, file_search) skips the chat targets and goes to the one that
// serves it, naming the skip; a model with none answers 400 naming the
// tool.
func TestBuiltInToolsNeedANativeTarget(t *testing.T) {
	for name, tool := range map[string]responses.ToolUnionParam{
		"web_search":  {OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}},
		"file_search": {OfFileSearch: &responses.FileSearchToolParam{VectorStoreIDs: []string{"vs_1"}}},
	} {
		t.Run(name, func(t *testing.T) {
			oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"resp_0b","object":"response","created_at":1,"status":"completed","model":"gpt-x","output":[`+
					`{"id":"ws_1","type":"`+name+`_call","status":"completed"},`+
					`{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"found it","annotations":[]}]}],`+
					`"usage":{"input_tokens":4,"output_tokens":2,"total_tokens":6}}`)
			})
			chat := newUpstream(t, chatOK("chat"))
			_, gw := gateway(t, nil, builtInLadder, chat, oai)
			c := newClient(gw.URL)
			tools := []responses.ToolUnionParam{tool}
			_, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "chat-only", Tools: tools, Input: textInput("news?")})
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "tools[0].type" || !strings.Contains(apiErr.Message, name) {
				t.Errorf("no target serves %s: %v", name, err)
			}
			var resp *http.Response
			r, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart", Tools: tools, Input: textInput("news?")}, option.WithResponseInto(&resp))
			if err != nil || r.OutputText() != "found it" {
				t.Fatalf("served natively: %v %v", r, err)
			}
			if got := resp.Header.Get("X-Fusebox-Tried"); !strings.Contains(got, "chat/m: cannot serve tools[0].type") || resp.Header.Get("X-Fusebox-Target") != "oai/gpt-x" {
				t.Errorf("served by %q, tried %q; want the chat target skipped, naming the tool field", resp.Header.Get("X-Fusebox-Target"), got)
			}
			if chat.calls() != 0 || oai.calls() != 1 || !strings.Contains(oai.body(0), `"type":"`+name+`"`) {
				t.Errorf("the chat target got %d calls, the native one %d (%s)", chat.calls(), oai.calls(), oai.body(0))
			}
		})
	}
}

// builtInLadder: a chat-only target before a native one.
const builtInLadder = `
providers:
  chat: {type: openai, base_url: "%s", keys: [k]}
  oai: {type: openai, base_url: "%s", keys: [k], responses: true}
models:
  - name: smart
    targets: [{provider: chat, model: m}, {provider: oai, model: gpt-x}]
    retry: {attempts: 1}
  - name: chat-only
    targets: [{provider: chat, model: m}]
`

// When one target cannot serve a request and the other fails, the 503
// names both: the skip with its reason and the failure.
func TestUnservableSkipIsNamedInThe503(t *testing.T) {
	claude := newUpstream(t, anthropicOK("claude"))
	oai := newUpstream(t, status(http.StatusServiceUnavailable, "server_error"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	body := `{"model":"smart","input":"weather?","text":{"format":{"type":"json_schema","name":"w","schema":{"type":"object"}}}}`
	resp, err := http.Post(gw.URL+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tried := resp.Header.Get("X-Fusebox-Tried")
	if resp.StatusCode != 503 || !strings.Contains(string(b), "claude/claude-opus-4-7 (cannot serve response_format)") || !strings.Contains(string(b), "openai/gpt-4.1 (503") ||
		!strings.Contains(string(b), `"code":"no_target_available"`) || !strings.Contains(tried, "cannot serve response_format") || !strings.Contains(tried, "openai/gpt-4.1") {
		t.Errorf("%d, tried %q: %s; want a 503 naming the skip and the failure", resp.StatusCode, tried, b)
	}
	if claude.calls() != 0 {
		t.Errorf("Claude was sent %d requests", claude.calls())
	}
}

// Structured output through the translation: text.format json_schema
// reaches a chat-only target as response_format, and its JSON comes back
// as the response's text.
func TestResponsesStructuredOutputThroughChat(t *testing.T) {
	_, hs := simServer(t)
	_, gw := start(t, Options{}, fmt.Sprintf(`
providers:
  sim: {type: openai, base_url: "%s/v1", keys: [k]}
models:
  - name: smart
    targets: [{provider: sim, model: sim-large}]
`, hs.URL))
	c := newClient(gw.URL)
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}, "temp": map[string]any{"type": "integer"}},
		"required": []string{"city", "temp"}, "additionalProperties": false}
	r, err := c.Responses.New(t.Context(), responses.ResponseNewParams{Model: "smart",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather?")},
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "weather", Schema: schema, Strict: openai.Bool(true)}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		City *string `json:"city"`
		Temp *int    `json:"temp"`
	}
	if err := json.Unmarshal([]byte(r.OutputText()), &out); err != nil || out.City == nil || out.Temp == nil {
		t.Errorf("structured output %q: %v", r.OutputText(), err)
	}
}

// A streamed request only a native target can serve (truncation: auto,
// which chat cannot express; the simulator serves it, as it refuses
// hosted tools) reaches its client whole, response.completed included,
// and the chat target is never sent it.
func TestNativeOnlyRequestStreamsWhole(t *testing.T) {
	_, hs := simServer(t)
	chat := newUpstream(t, chatOK("chat"))
	_, gw := start(t, Options{}, fmt.Sprintf(nativeLadder, hs.URL, chat.URL+"/v1"))
	body := `{"model":"smart","input":"hi","stream":true,"truncation":"auto"}`
	resp, err := http.Post(gw.URL+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b := new(strings.Builder)
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.WriteString(string(buf[:n]))
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	if resp.Header.Get("X-Fusebox-Target") != "oai/sim-large" || !strings.Contains(b.String(), "event: response.completed") {
		t.Errorf("%d from %q: %s", resp.StatusCode, resp.Header.Get("X-Fusebox-Target"), b.String())
	}
	if chat.calls() != 0 {
		t.Error("the chat target was sent what it cannot serve")
	}
}

// What a provider keeps under the gateway's own key, which every client
// shares (stored items, conversations, prompts, background responses), is
// not reachable through the gateway: a request that names one is a 400 in
// OpenAI's shape, and no target is sent it, a native one included; nor is
// a body that says one of those members twice, which the upstream might
// read the other way.
func TestProvidersStoredObjectsAreNotReachable(t *testing.T) {
	oai := newUpstream(t, chatOK("oai"))
	chat := newUpstream(t, chatOK("chat"))
	_, gw := gateway(t, nil, builtInLadder, chat, oai)
	for name, tc := range map[string]struct{ body, param string }{
		"item_reference": {`{"model":"smart","input":[{"type":"item_reference","id":"msg_of_another"}]}`, "input[0].type"},
		"conversation":   {`{"model":"smart","input":"q","conversation":"conv_of_another"}`, "conversation"},
		"prompt":         {`{"model":"smart","input":"q","prompt":{"id":"pmpt_of_another"}}`, "prompt"},
		"background":     {`{"model":"smart","input":"q","background":true}`, "background"},
		"twice":          {`{"model":"smart","input":"q","conversation":"conv_of_another","conversation":null}`, "conversation"},
		"escaped twice":  {`{"model":"smart","input":"q","prompt":null,"pr\u006fmpt":{"id":"pmpt_of_another"}}`, "prompt"},
		"an item's type": {`{"model":"smart","input":[{"type":"item_reference","type":"message","role":"user","content":"x","id":"msg_of_another"}]}`, "input[0].type"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := http.Post(gw.URL+"/v1/responses", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct {
				Error struct{ Type, Param, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || e.Error.Param != tc.param || e.Error.Message == "" {
				t.Errorf("%d %+v (%v); want a 400 naming %s", resp.StatusCode, e, err, tc.param)
			}
		})
	}
	if oai.calls() != 0 || chat.calls() != 0 {
		t.Errorf("targets called %d (native) and %d (chat) times; want none", oai.calls(), chat.calls())
	}
}
