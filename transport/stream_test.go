package transport

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/fuseboxhq/fusebox/aierr"
	"github.com/fuseboxhq/fusebox/breaker"
)

// A primary that sends headers but no byte of the stream within FirstByte
// is abandoned and the stream comes from the secondary; the caller never
// sees the silent one.
func TestFirstByteTimeoutFailsOverInvisibly(t *testing.T) {
	clk := fakeClock()
	hang := make(chan struct{})
	defer close(hang)
	entered := make(chan struct{}, 1)
	primary := newUpstream(t, "primary", func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		entered <- struct{}{}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	secondary := newUpstream(t, "secondary", func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, []string{"Hel", "lo"}, nil)
	})
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{{Name: "primary", BaseURL: primary.URL + "/v1"}, {Name: "secondary", BaseURL: secondary.URL + "/v1"}},
		FirstByte: 2 * time.Second,
		Clock:     clk,
	})
	client := openaiClient(primary.URL, rt)
	got := make(chan string)
	go func() {
		s := client.Chat.Completions.NewStreaming(t.Context(), chatParams("gpt-4.1"))
		var b strings.Builder
		for s.Next() {
			if c := s.Current(); len(c.Choices) > 0 {
				b.WriteString(c.Choices[0].Delta.Content)
			}
		}
		if err := s.Err(); err != nil {
			b.WriteString(" ERR " + err.Error())
		}
		got <- b.String()
	}()
	<-entered
	clk.Advance(2 * time.Second)
	if s := <-got; s != "Hello" {
		t.Fatalf("stream = %q; want Hello from the secondary", s)
	}
	for _, s := range rt.Breakers() {
		if s.Name == "primary/gpt-4.1" && s.Totals.Failed != 1 {
			t.Fatalf("first-byte timeout not counted: %+v", s.Totals)
		}
	}
}

// A stream that stalls after its first chunk ends with an error the caller
// sees (never a clean, truncated answer), and counts against the breaker.
func TestStalledStreamEndsWithError(t *testing.T) {
	clk := fakeClock()
	stall := make(chan struct{})
	defer close(stall)
	up := newUpstream(t, "up", func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, []string{"Hel", "lo"}, stall)
	})
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: up.URL + "/v1"}}, Idle: 5 * time.Second, Clock: clk})
	client := openaiClient(up.URL, rt)
	s := client.Chat.Completions.NewStreaming(t.Context(), chatParams("gpt-4.1"))
	if !s.Next() || s.Current().Choices[0].Delta.Content != "Hel" {
		t.Fatalf("first chunk: %v", s.Err())
	}
	done := make(chan bool)
	go func() { done <- s.Next() }()
	clk.WaitForTimers(1) // the idle budget is running while Next waits
	clk.Advance(5 * time.Second)
	if <-done {
		t.Fatal("stream went on after the stall")
	}
	err := s.Err()
	if !errors.Is(err, aierr.ErrStreamStalled) {
		t.Fatalf("stream error %v; want one wrapping aierr.ErrStreamStalled", err)
	}
	if st := rt.Breakers()[0]; st.Totals.Failed != 1 {
		t.Fatalf("stall not counted: %+v", st.Totals)
	}
}

// A healthy stream reports success when it ends.
func TestStreamSuccessReportedAtEnd(t *testing.T) {
	up := newUpstream(t, "up", func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, []string{"a", "b", "c"}, nil)
	})
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: up.URL + "/v1"}}, FirstByte: time.Hour, Idle: time.Hour})
	client := openaiClient(up.URL, rt)
	s := client.Chat.Completions.NewStreaming(t.Context(), chatParams("gpt-4.1"))
	var b strings.Builder
	for s.Next() {
		b.WriteString(s.Current().Choices[0].Delta.Content)
	}
	if s.Err() != nil || b.String() != "abc" {
		t.Fatalf("%q, %v", b.String(), s.Err())
	}
	s.Close()
	if st := rt.Breakers()[0]; st.Totals.Succeeded != 1 {
		t.Fatalf("%+v", st.Totals)
	}
}

// The official Anthropic client through the transport: a 529 overload on
// the first endpoint fails over to a second one with another key, sent in
// Anthropic's x-api-key header.
func TestAnthropicClientFailsOverOn529(t *testing.T) {
	overloaded := newUpstream(t, "overloaded", func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(529)
		io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	})
	healthy := newUpstream(t, "healthy", func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7",`+
			`"content":[{"type":"text","text":"hello from healthy"}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":5,"output_tokens":3}}`)
	})
	rt := mustNew(t, Config{Endpoints: []Endpoint{
		{Name: "overloaded", BaseURL: overloaded.URL + "/v1"},
		{Name: "healthy", BaseURL: healthy.URL + "/v1", APIKey: "sk-ant-second", Auth: "x-api-key"},
	}})
	client := anthropic.NewClient(
		aoption.WithBaseURL(overloaded.URL),
		aoption.WithAPIKey("sk-ant-first"),
		aoption.WithHTTPClient(&http.Client{Transport: rt}),
		aoption.WithMaxRetries(0),
	)
	msg, err := client.Messages.New(t.Context(), anthropic.MessageNewParams{
		Model:     "claude-opus-4-7",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) == 0 || msg.Content[0].Text != "hello from healthy" {
		t.Fatalf("answer %+v", msg.Content)
	}
	r := healthy.req(0)
	if r.path != "/v1/messages" || r.header.Get("X-Api-Key") != "sk-ant-second" || r.header.Get("Authorization") != "" {
		t.Fatalf("second endpoint saw path %q, x-api-key %q, authorization %q", r.path, r.header.Get("X-Api-Key"), r.header.Get("Authorization"))
	}
	if st := rt.Breakers()[0]; st.Name != "healthy/claude-opus-4-7" && st.Totals.Failed != 1 {
		t.Fatalf("529 not counted as an outage: %+v", st)
	}
	for _, st := range rt.Breakers() {
		if st.Name == "overloaded/claude-opus-4-7" && st.Totals.Failed != 1 {
			t.Fatalf("529 not counted as an outage: %+v", st.Totals)
		}
	}
}

// Failing over from OpenAI to an Azure OpenAI style endpoint rewrites the
// URL, the model (deployment) and the credentials into api-key.
func TestFailoverRewritesURLModelAndKey(t *testing.T) {
	primary := newUpstream(t, "openai", status(500, "server_error"))
	azure := newUpstream(t, "azure", chatOK("azure"))
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{
			{Name: "openai", BaseURL: primary.URL + "/v1"},
			{Name: "azure", BaseURL: azure.URL + "/openai/v1", Model: "my-gpt41-deployment", APIKey: "azure-key", Auth: "api-key",
				Header: http.Header{"X-Ms-Client": {"fusebox"}}},
		},
		Breaker: breaker.Config{ConsecutiveFailures: 5},
	})
	client := openaiClient(primary.URL, rt)
	c, err := client.Chat.Completions.New(t.Context(), chatParams("gpt-4.1"))
	if err != nil || content(c) != "hello from azure" {
		t.Fatalf("%q, %v", content(c), err)
	}
	r := azure.req(0)
	switch {
	case r.path != "/openai/v1/chat/completions":
		t.Errorf("path %q", r.path)
	case !strings.Contains(r.body, `"model":"my-gpt41-deployment"`):
		t.Errorf("body %s", r.body)
	case r.header.Get("Api-Key") != "azure-key" || r.header.Get("Authorization") != "":
		t.Errorf("credentials: api-key %q, authorization %q", r.header.Get("Api-Key"), r.header.Get("Authorization"))
	case r.header.Get("X-Ms-Client") != "fusebox":
		t.Errorf("extra header missing")
	}
	if got := primary.req(0).header.Get("Authorization"); got != "Bearer sk-caller" {
		t.Errorf("primary saw Authorization %q; want the caller's own", got)
	}
	var names []string
	for _, s := range rt.Breakers() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "azure/my-gpt41-deployment,openai/gpt-4.1" {
		t.Errorf("breakers %v: want one per (endpoint, model)", names)
	}
	_ = breaker.StateClosed
}
