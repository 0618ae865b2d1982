package sim

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// The official Anthropic client against the simulator's Messages API:
// plain, streamed, and a fault in Anthropic's error shape.
func TestMessagesAPI(t *testing.T) {
	s, err := New(Config{Seed: 1, Output: Output{Tokens: 6}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "claude-opus-4-7", MaxTokens: 50,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello there"))}}
	msg, err := c.Messages.New(t.Context(), params)
	if err != nil || len(msg.Content) == 0 || msg.Content[0].Text == "" || msg.Usage.OutputTokens == 0 || msg.Model != "claude-opus-4-7" {
		t.Fatalf("message %+v, %v", msg, err)
	}
	st := c.Messages.NewStreaming(t.Context(), params)
	var b strings.Builder
	for st.Next() {
		if ev := st.Current(); ev.Type == "content_block_delta" {
			b.WriteString(ev.Delta.Text)
		}
	}
	if st.Err() != nil || b.String() == "" {
		t.Fatalf("stream %q, %v", b.String(), st.Err())
	}
	if err := s.SetFaults([]Fault{{Kind: ErrorStorm, Status: 529}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Messages.New(t.Context(), params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.RawJSON(), "overloaded_error") {
		t.Fatalf("529 fault: %v", err)
	}
	if got := s.Stats().Calls; got != 3 {
		t.Fatalf("stats count %d calls; want 3", got)
	}
}

// Messages streams have no [DONE]: a no_done fault leaves them complete.
func TestMessagesNoDone(t *testing.T) {
	s, err := New(Config{Seed: 1, Output: Output{Tokens: 6}, Faults: []Fault{{Kind: NoDone}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	c := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("k"), option.WithMaxRetries(0))
	st := c.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{Model: "claude-opus-4-7", MaxTokens: 50,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello there"))}})
	var stop bool
	for st.Next() {
		stop = stop || st.Current().Type == "message_stop"
	}
	if st.Err() != nil || !stop || s.Stats().Outcomes[OutcomeNoDone] != 1 {
		t.Fatalf("stream: message_stop %v, %v, stats %+v; want a complete stream", stop, st.Err(), s.Stats())
	}
}
