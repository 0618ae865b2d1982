package gateway

import (
	"fmt"

	"github.com/fuseboxhq/fusebox/breaker"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"io"
	"net/http"
	"strings"
	"testing"
)

// anthropicOK answers a Messages request in Anthropic's shape, streamed or
// not.
func anthropicOK(text string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("X-Api-Key") == "" || r.Header.Get("Anthropic-Version") == "" {
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request shape"}}`)
			return
		}
		if r.Header.Get("Accept") == "text/event-stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
				`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`event: ping` + "\n" + `data: {"type":"ping"}`,
				`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}`,
				`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
				`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
				`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
			} {
				io.WriteString(w, ev+"\n\n")
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"`+text+`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":3}}`)
	}
}

const anthropicLadder = `
providers:
  claude: {type: anthropic, base_url: "%s", keys: [ak1]}
  openai: {type: openai, base_url: "%s", keys: [ok1]}
models:
  - name: smart
    targets:
      - {provider: claude, model: claude-opus-4-7}
      - {provider: openai, model: gpt-4.1}
    breaker: {consecutive: 3}
    retry: {attempts: 1}
`

// The official OpenAI client, through the gateway, to an Anthropic target:
// requests are translated to Messages and answers back, streams included.
func TestOpenAIClientToAnthropicTarget(t *testing.T) {
	claude := newUpstream(t, anthropicOK("hello from claude"))
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from claude" {
		t.Fatalf("%q, %v", text(got), err)
	}
	st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
	var b strings.Builder
	for st.Next() {
		if ch := st.Current(); len(ch.Choices) > 0 {
			b.WriteString(ch.Choices[0].Delta.Content)
		}
	}
	if st.Err() != nil || b.String() != "hello from claude" {
		t.Fatalf("stream %q, %v", b.String(), st.Err())
	}
	if oai.calls() != 0 {
		t.Fatal("the OpenAI target was called")
	}
}

// A 529 overload from the Anthropic target fails over to the OpenAI one.
func TestAnthropicOverloadFailsOver(t *testing.T) {
	claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	})
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from openai" {
		t.Fatalf("%q, %v", text(got), err)
	}
}

// The official Anthropic client, pointed at the gateway, served by an
// OpenAI-compatible target and by an Anthropic one, streamed and not.
func TestAnthropicClientThroughGateway(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml func(claude, oai string) string
		want string
	}{
		{"openai-target", func(claude, oai string) string {
			return fmt.Sprintf("providers:\n  openai: {type: openai, base_url: %q, keys: [k]}\nmodels:\n  - {name: smart, targets: [{provider: openai, model: gpt-4.1}]}\n", oai)
		}, "hello from openai"},
		{"anthropic-target", func(claude, oai string) string {
			return fmt.Sprintf(anthropicLadder, claude, oai)
		}, "hello from claude"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claude := newUpstream(t, anthropicOK("hello from claude"))
			oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.Header.Get("Accept") == "text/event-stream" {
					streamOf([]string{"hello ", "from ", "openai"}, nil)(w, r, n)
					return
				}
				chatOK("openai")(w, r, n)
			})
			_, gw := start(t, Options{}, tc.yaml(claude.URL, oai.URL+"/v1"))
			client := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
			params := anthropicsdk.MessageNewParams{
				Model: "smart", MaxTokens: 100,
				Messages: []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("hi"))},
			}
			msg, err := client.Messages.New(t.Context(), params)
			if err != nil || len(msg.Content) == 0 || msg.Content[0].Text != tc.want {
				t.Fatalf("message %+v, %v", msg, err)
			}
			if tc.name == "anthropic-target" {
				// Passed natively: the target got the client's own body
				// (with its model) and the client the target's answer.
				if b := claude.bodies[0]; !strings.Contains(b, `"model":"claude-opus-4-7"`) || !strings.Contains(b, `"max_tokens":100`) || strings.Contains(b, `"choices"`) {
					t.Fatalf("the Anthropic target got %s", b)
				}
				if msg.Model != "claude-opus-4-7" {
					t.Fatalf("native answer model %q", msg.Model)
				}
			} else if msg.Model != "smart" {
				t.Fatalf("translated answer model %q; want the alias", msg.Model)
			}
			st := client.Messages.NewStreaming(t.Context(), params)
			var b strings.Builder
			for st.Next() {
				if ev := st.Current(); ev.Type == "content_block_delta" {
					b.WriteString(ev.Delta.Text)
				}
			}
			if st.Err() != nil || b.String() != tc.want {
				t.Fatalf("stream %q, %v", b.String(), st.Err())
			}
		})
	}
}

// Errors come back in Anthropic's shape.
func TestMessagesErrorsInAnthropicShape(t *testing.T) {
	oai := newUpstream(t, status(400, "invalid_request_error"))
	_, gw := start(t, Options{}, fmt.Sprintf("providers:\n  openai: {type: openai, base_url: %q, keys: [k]}\nmodels:\n  - {name: smart, targets: [{provider: openai, model: gpt-4.1}]}\n", oai.URL+"/v1"))
	for _, tc := range []struct {
		body, typ, msg string
		status         int
	}{
		{`{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "not_found_error", "The model `nope` does not exist", 404},
		{`{"model":"smart","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "invalid_request_error", "upstream says 400", 400},
		{`{"max_tokens":5,"messages":[]}`, "invalid_request_error", "model", 400},
	} {
		resp, err := http.Post(gw.URL+"/v1/messages", "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), `"type":"error"`) || !strings.Contains(string(b), `"type":"`+tc.typ+`"`) || !strings.Contains(string(b), tc.msg) {
			t.Errorf("%s: %d %s", tc.body, resp.StatusCode, b)
		}
	}
}

// Tool use with the official Anthropic client through the gateway to an
// OpenAI-compatible target: the target's tool_calls come back as tool_use
// blocks, and the tool result goes to the target as a tool message.
func TestAnthropicClientToolUse(t *testing.T) {
	oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",`+
				`"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}],`+
				`"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}`)
			return
		}
		chatOK("the tool result")(w, r, n)
	})
	_, gw := start(t, Options{}, fmt.Sprintf("providers:\n  openai: {type: openai, base_url: %q, keys: [k]}\nmodels:\n  - {name: smart, targets: [{provider: openai, model: gpt-4.1}]}\n", oai.URL+"/v1"))
	client := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	tools := []anthropicsdk.ToolUnionParam{{OfTool: &anthropicsdk.ToolParam{
		Name:        "get_weather",
		InputSchema: anthropicsdk.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}},
	}}}
	question := anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("Weather in Paris?"))
	msg, err := client.Messages.New(t.Context(), anthropicsdk.MessageNewParams{
		Model: "smart", MaxTokens: 100, Tools: tools, Messages: []anthropicsdk.MessageParam{question},
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" ||
		msg.Content[0].Name != "get_weather" || !strings.Contains(string(msg.Content[0].Input), "Paris") {
		t.Fatalf("tool use answer %+v", msg)
	}
	if body := oai.bodies[0]; !strings.Contains(body, `"tools"`) || !strings.Contains(body, `"get_weather"`) {
		t.Fatalf("the target did not get the tools: %s", body)
	}
	final, err := client.Messages.New(t.Context(), anthropicsdk.MessageNewParams{
		Model: "smart", MaxTokens: 100, Tools: tools,
		Messages: []anthropicsdk.MessageParam{question, msg.ToParam(),
			anthropicsdk.NewUserMessage(anthropicsdk.NewToolResultBlock(msg.Content[0].ID, "18°C and sunny", false))},
	})
	if err != nil || final.Content[0].Text != "hello from the tool result" {
		t.Fatalf("after the tool result: %+v %v", final, err)
	}
	if body := oai.bodies[1]; !strings.Contains(body, `"role":"tool"`) || !strings.Contains(body, "18°C and sunny") {
		t.Fatalf("the target did not get the tool result: %s", body)
	}
}

// An Anthropic client on a mixed ladder: the Anthropic target (native) is
// overloaded, the OpenAI-compatible one answers, translated.
func TestMessagesFailOverFromNativeToTranslated(t *testing.T) {
	claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	})
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	client := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	msg, err := client.Messages.New(t.Context(), anthropicsdk.MessageNewParams{
		Model: "smart", MaxTokens: 50,
		Messages: []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("hi"))},
	})
	if err != nil || msg.Content[0].Text != "hello from openai" || claude.calls() != 1 {
		t.Fatalf("%+v %v (claude called %d)", msg, err, claude.calls())
	}
}

// Messages answers are priced like chat ones, native or translated,
// streamed or not, so a client's budget sees them: a native answer's
// Anthropic usage (5 in, 3 out) at the Claude target's price, a translated
// one's OpenAI usage (3 in, 3 out) at the OpenAI target's.
func TestMessagesAnswersArePriced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		native bool
		cost   string // per answer, USD
	}{
		{"native", true, "0.00009"},       // 5 × $3/M + 3 × $25/M
		{"translated", false, "0.000030"}, // 3 × $2/M + 3 × $8/M
	} {
		t.Run(tc.name, func(t *testing.T) {
			claude := newUpstream(t, anthropicOK("hello from claude"))
			oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.Header.Get("Accept") == "text/event-stream" {
					usageStream(w, r, n, `"include_usage":true`)
					return
				}
				chatOK("openai")(w, r, n)
			})
			if !tc.native {
				claude.set(status(529, "overloaded_error"))
			}
			_, gw := start(t, Options{}, fmt.Sprintf(`
clients:
  - {name: web, key: kw}
providers:
  claude: {type: anthropic, base_url: %q, keys: [ak1]}
  openai: {type: openai, base_url: %q, keys: [ok1]}
models:
  - name: smart
    targets:
      - {provider: claude, model: claude-opus-4-7, price: {input: 3, output: 25}}
      - {provider: openai, model: gpt-4.1, price: {input: 2, output: 8}}
    retry: {attempts: 1}
`, claude.URL, oai.URL+"/v1"))
			client := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("kw"), aoption.WithMaxRetries(0))
			params := anthropicsdk.MessageNewParams{
				Model: "smart", MaxTokens: 100,
				Messages: []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("hi"))},
			}
			var resp *http.Response
			if _, err := client.Messages.New(t.Context(), params, aoption.WithResponseInto(&resp)); err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("X-Fusebox-Cost"); got != strings.TrimRight(tc.cost, "0") {
				t.Fatalf("cost header %q, want %s", got, tc.cost)
			}
			st := client.Messages.NewStreaming(t.Context(), params)
			for st.Next() {
			}
			if st.Err() != nil {
				t.Fatal(st.Err())
			}
			// The streamed answer of the translated case has 5 + 7 tokens:
			// 5 × $2/M + 7 × $8/M = $0.000066.
			want := map[bool]string{true: "0.00018", false: "9.6e-05"}[tc.native]
			eventually(t, "both answers in the client's cost", func() bool {
				return strings.Contains(scrape(t, gw.URL), `fusebox_client_cost_usd_total{client="web"} `+want)
			})
		})
	}
}

// An Idempotency-Key works on /v1/messages too: the same key and body get
// the answer as it was sent, byte for byte, streamed or not, native or
// translated, without a second upstream call; another body under the key
// is refused in Anthropic's error shape.
func TestMessagesIdempotency(t *testing.T) {
	for _, native := range []bool{true, false} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("native=%v,stream=%v", native, stream), func(t *testing.T) {
				claude := newUpstream(t, anthropicOK("hello from claude"))
				oai := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
					if r.Header.Get("Accept") == "text/event-stream" {
						usageStream(w, r, n, `"include_usage":true`)
						return
					}
					chatOK("openai")(w, r, n)
				})
				if !native {
					claude.set(status(529, "overloaded_error"))
				}
				_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
				post := func(body string) (*http.Response, string) {
					req, _ := http.NewRequest(http.MethodPost, gw.URL+"/v1/messages", strings.NewReader(body))
					req.Header.Set("Idempotency-Key", "key-1")
					req.Header.Set("Anthropic-Version", "2023-06-01")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					return resp, string(b)
				}
				body := fmt.Sprintf(`{"model":"smart","max_tokens":50,"stream":%v,"messages":[{"role":"user","content":"hi"}]}`, stream)
				first, b1 := post(body)
				second, b2 := post(body)
				if first.StatusCode != 200 || second.StatusCode != 200 || b1 != b2 || len(b1) == 0 {
					t.Fatalf("first %d %q\nsecond %d %q", first.StatusCode, b1, second.StatusCode, b2)
				}
				if second.Header.Get("X-Fusebox-Idempotent-Replay") != "true" || first.Header.Get("X-Fusebox-Idempotent-Replay") != "" {
					t.Fatalf("replay headers: first %v, second %v", first.Header, second.Header)
				}
				if ct := second.Header.Get("Content-Type"); ct != first.Header.Get("Content-Type") {
					t.Fatalf("content type %q, then %q", first.Header.Get("Content-Type"), ct)
				}
				calls := oai.calls()
				if native {
					calls = claude.calls()
				}
				if calls != 1 {
					t.Fatalf("%d upstream calls, want 1", calls)
				}
				other, b3 := post(strings.Replace(body, `"hi"`, `"bye"`, 1))
				if other.StatusCode != 422 || !strings.Contains(b3, `"type":"error"`) || !strings.Contains(b3, "Idempotency-Key") {
					t.Fatalf("another body under the key: %d %s", other.StatusCode, b3)
				}
			})
		}
	}
}

// On /v1/messages too, a 2xx that is not a JSON object sends the walk on.
func TestMessagesNonJSONSuccessFailsOver(t *testing.T) {
	claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>bad gateway</html>")
	})
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	client := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	msg, err := client.Messages.New(t.Context(), anthropicsdk.MessageNewParams{
		Model: "smart", MaxTokens: 100,
		Messages: []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("hi"))},
	})
	if err != nil || len(msg.Content) == 0 || msg.Content[0].Text != "hello from openai" || claude.calls() != 1 {
		t.Fatalf("message %+v, %v (claude called %d)", msg, err, claude.calls())
	}
}

// A ladder Anthropic → OpenAI serves what Anthropic cannot (n: 2, a JSON
// response_format, log probabilities) from OpenAI, sending Anthropic
// nothing and counting nothing against it; an alias with only Anthropic
// answers 400 naming the field.
func TestFieldsAnAnthropicTargetCannotServeGoToTheNext(t *testing.T) {
	claude := newUpstream(t, anthropicOK("hello from claude"))
	oai := newUpstream(t, chatOK("openai"))
	cfg := fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1") + `
  - name: claude-only
    targets: [{provider: claude, model: claude-opus-4-7}]
`
	srv, gw := start(t, Options{}, cfg)
	for _, extra := range []string{`"n":2`, `"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}`, `"logprobs":true`} {
		body := `{"model":"smart","messages":[{"role":"user","content":"hi"}],` + extra + `}`
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Fusebox-Target") != "openai/gpt-4.1" ||
			!strings.Contains(resp.Header.Get("X-Fusebox-Tried"), "claude/claude-opus-4-7: cannot serve") || resp.Header.Get("X-Fusebox-Attempts") != "1" {
			t.Errorf("%s: %d from %q (tried %q, attempts %s): %s", extra, resp.StatusCode, resp.Header.Get("X-Fusebox-Target"),
				resp.Header.Get("X-Fusebox-Tried"), resp.Header.Get("X-Fusebox-Attempts"), b)
		}
	}
	if claude.calls() != 0 {
		t.Errorf("Anthropic was sent %d requests it cannot serve", claude.calls())
	}
	resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"claude-only","n":2,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"param":"n"`) || !strings.Contains(string(b), `"type":"invalid_request_error"`) {
		t.Errorf("no target can serve n: 2: %d %s; want a 400 naming n", resp.StatusCode, b)
	}
	for _, tg := range srv.state().router.Targets() {
		if s := tg.Breaker().Snapshot(); s.State != breaker.StateClosed || s.ConsecutiveFailures != 0 {
			t.Errorf("%s: %v with %d failures after requests it could not serve", tg.Name, s.State, s.ConsecutiveFailures)
		}
	}
}

// A client's beta flags and API version reach the provider that reads
// them (anthropic-* to Anthropic, OpenAI-Beta to OpenAI), joined with the
// configured flags; its own credentials never do.
func TestClientBetaHeadersReachTheUpstream(t *testing.T) {
	claude := newUpstream(t, anthropicOK("hello from claude"))
	oai := newUpstream(t, chatOK("openai"))
	cfg := "server: {forward_headers: [OpenAI-Organization]}\n" + strings.Replace(fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"),
		"claude: {type: anthropic,", "claude: {type: anthropic, headers: {anthropic-beta: prompt-caching-2024-07-31},", 1) + `
  - name: gpt
    targets: [{provider: openai, model: gpt-4.1}]
`
	_, gw := start(t, Options{}, cfg)
	client := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("client-secret"), aoption.WithMaxRetries(0),
		aoption.WithHeader("anthropic-beta", "context-1m-2025-08-07"), aoption.WithHeader("anthropic-version", "2023-06-01"))
	if _, err := client.Messages.New(t.Context(), anthropicsdk.MessageNewParams{Model: "smart", MaxTokens: 50,
		Messages: []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("hi"))}}); err != nil {
		t.Fatal(err)
	}
	h := claude.header(0)
	if got := h.Get("Anthropic-Beta"); got != "prompt-caching-2024-07-31,context-1m-2025-08-07" {
		t.Errorf("anthropic-beta upstream %q; want the configured flag and the client's", got)
	}
	if got := h.Get("Anthropic-Version"); got != "2023-06-01" {
		t.Errorf("anthropic-version upstream %q; want the client's", got)
	}
	if got := h.Get("X-Api-Key"); got != "ak1" {
		t.Errorf("x-api-key upstream %q; want the provider's key, never the client's", got)
	}
	req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("OpenAI-Beta", "assistants=v2")
	req.Header.Set("OpenAI-Organization", "org-client")
	req.Header.Set("X-Unlisted", "x")
	req.Header.Set("Anthropic-Beta", "not-for-openai")
	req.Header.Set("Authorization", "Bearer client-secret")
	req.Header.Set("Cookie", "session=client")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h = oai.header(0)
	if h.Get("Openai-Beta") != "assistants=v2" || h.Get("Openai-Organization") != "org-client" || h.Get("X-Unlisted") != "" ||
		h.Get("Anthropic-Beta") != "" || h.Get("Authorization") != "Bearer ok1" || h.Get("Cookie") != "" {
		t.Errorf("OpenAI upstream headers %v; want OpenAI-Beta passed, the provider's key, no cookie or anthropic flag", h)
	}
}

// Both SDKs list and retrieve models in their own shape.
func TestModelsInBothShapes(t *testing.T) {
	_, gw := gateway(t, nil, twoTargets, newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s")))
	oc := newClient(gw.URL)
	m, err := oc.Models.Get(t.Context(), "smart")
	if err != nil || m.ID != "smart" || m.Object != "model" {
		t.Fatalf("openai models.get: %+v %v", m, err)
	}
	if _, err := oc.Models.Get(t.Context(), "nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("openai models.get of an unknown model: %v", err)
	}
	ac := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	page, err := ac.Models.List(t.Context(), anthropicsdk.ModelListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != "smart" || page.Data[0].DisplayName != "smart" || page.Data[0].Type != "model" {
		t.Fatalf("anthropic models.list: %+v %v", page, err)
	}
	if page.HasMore || page.FirstID != "smart" {
		t.Errorf("anthropic page %+v", page)
	}
	info, err := ac.Models.Get(t.Context(), "smart", anthropicsdk.ModelGetParams{})
	if err != nil || info.ID != "smart" || info.Type != "model" {
		t.Fatalf("anthropic models.get: %+v %v", info, err)
	}
	if _, err := ac.Models.Get(t.Context(), "nope", anthropicsdk.ModelGetParams{}); err == nil || !strings.Contains(err.Error(), "not_found_error") {
		t.Fatalf("anthropic models.get of an unknown model: %v", err)
	}
}

// count_tokens reaches the model's Anthropic target with its own model
// name; a model with none is answered with an estimate, marked as one.
func TestCountTokensBothWays(t *testing.T) {
	claude := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Path != "/v1/messages/count_tokens" || r.Header.Get("X-Api-Key") != "ak1" {
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad count request"}}`)
			return
		}
		if strings.Contains(r.Header.Get("Anthropic-Beta"), "token-counting-2099") && r.Header.Get("Anthropic-Version") != "2099-01-01" {
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad count request"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":42}`)
	})
	oai := newUpstream(t, chatOK("openai"))
	cfg := fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1") + `
  - name: gpt
    targets: [{provider: openai, model: gpt-4.1}]
`
	_, gw := start(t, Options{}, cfg)
	ac := anthropicsdk.NewClient(aoption.WithBaseURL(gw.URL), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	msgs := []anthropicsdk.MessageParam{anthropicsdk.NewUserMessage(anthropicsdk.NewTextBlock("How many tokens is this sentence, roughly?"))}
	var resp *http.Response
	n, err := ac.Messages.CountTokens(t.Context(), anthropicsdk.MessageCountTokensParams{Model: "smart", Messages: msgs}, aoption.WithResponseInto(&resp))
	if err != nil || n.InputTokens != 42 || resp.Header.Get("X-Fusebox-Token-Count") != "" {
		t.Fatalf("counted by Anthropic: %+v %v", n, err)
	}
	if b := claude.bodies[0]; !strings.Contains(b, `"model":"claude-opus-4-7"`) {
		t.Errorf("Anthropic was asked to count for %s; want its own model name", b)
	}
	n, err = ac.Messages.CountTokens(t.Context(), anthropicsdk.MessageCountTokensParams{Model: "gpt", Messages: msgs}, aoption.WithResponseInto(&resp))
	if err != nil || n.InputTokens < 5 || n.InputTokens > 40 || resp.Header.Get("X-Fusebox-Token-Count") != "estimate" {
		t.Fatalf("estimated: %+v %v (%v)", n, err, resp.Header)
	}
	if oai.calls() != 0 {
		t.Error("the OpenAI target was sent a count")
	}
	// The client's anthropic-version and anthropic-beta reach the target,
	// as they do on /v1/messages.
	n, err = ac.Messages.CountTokens(t.Context(), anthropicsdk.MessageCountTokensParams{Model: "smart", Messages: msgs},
		aoption.WithHeader("anthropic-version", "2099-01-01"), aoption.WithHeader("anthropic-beta", "token-counting-2099"))
	if err != nil || n.InputTokens != 42 {
		t.Fatalf("counted with the client's Anthropic headers: %+v %v", n, err)
	}
	if h := claude.header(claude.calls() - 1); h.Get("Anthropic-Version") != "2099-01-01" || !strings.Contains(h.Get("Anthropic-Beta"), "token-counting-2099") {
		t.Errorf("count_tokens sent anthropic-version %q, anthropic-beta %q; want the client's", h.Get("Anthropic-Version"), h.Get("Anthropic-Beta"))
	}
	if _, err := ac.Messages.CountTokens(t.Context(), anthropicsdk.MessageCountTokensParams{Model: "nope", Messages: msgs}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("an unknown model: %v", err)
	}
}

// An OpenAI-compatible host said to lack a field is passed over for
// requests that set it, as an Anthropic target is.
func TestUnsupportedFieldsOfAnOpenAICompatibleHost(t *testing.T) {
	small := newUpstream(t, chatOK("small"))
	full := newUpstream(t, chatOK("full"))
	_, gw := start(t, Options{}, fmt.Sprintf(`
providers:
  small: {type: openai, base_url: "%s", keys: [k], unsupported: [n, response_format]}
  full: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: smart
    targets: [{provider: small, model: m}, {provider: full, model: m}]
`, small.URL+"/v1", full.URL+"/v1"))
	for body, want := range map[string]string{
		`{"model":"smart","messages":[{"role":"user","content":"hi"}],"n":1}`:                                    "small/m",
		`{"model":"smart","messages":[{"role":"user","content":"hi"}],"n":2}`:                                    "full/m",
		`{"model":"smart","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"text"}}`:        "small/m",
		`{"model":"smart","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`: "full/m",
	} {
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Fusebox-Target"); got != want {
			t.Errorf("%s: served by %q, want %q", body, got, want)
		}
		tried := resp.Header.Get("X-Fusebox-Tried")
		switch {
		case want == "full/m" && !strings.HasPrefix(tried, "small/m: cannot serve "):
			t.Errorf("%s: tried %q; want the small host skipped, naming the field", body, tried)
		case want == "full/m" && !strings.Contains(tried, map[bool]string{true: "cannot serve n", false: "cannot serve response_format"}[strings.Contains(body, `"n":2`)]):
			t.Errorf("%s: tried %q; want the field named", body, tried)
		case want == "small/m" && tried != "none":
			t.Errorf("%s: tried %q; want nothing skipped", body, tried)
		}
	}
	if small.calls() != 2 || full.calls() != 2 {
		t.Errorf("small %d, full %d calls; want 2 each", small.calls(), full.calls())
	}
}
