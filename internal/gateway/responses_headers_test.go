package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// clientHeaders are what a client sends beside its request: beta flags
// for both providers and its own credentials, which no upstream may see.
var clientHeaders = []option.RequestOption{
	option.WithHeader("OpenAI-Beta", "responses=experimental"),
	option.WithHeader("Anthropic-Beta", "context-1m-2025-08-07"),
	option.WithHeader("Cookie", "session=client"),
	option.WithHeader("X-Api-Key", "client-anthropic-key"),
	option.WithAPIKey("client-secret"),
}

// checkNoClientCredentials fails if h carries any of the client's
// credentials.
func checkNoClientCredentials(t *testing.T, who string, h http.Header) {
	t.Helper()
	for name, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, "client-secret") || strings.Contains(v, "client-anthropic-key") || strings.Contains(v, "session=client") {
				t.Errorf("%s was sent the client's %s: %q", who, name, v)
			}
		}
	}
}

// Through /v1/responses, translated to Claude: anthropic-beta reaches it,
// OpenAI-Beta never does; failed over to OpenAI, the reverse; and neither
// sees the client's credentials.
func TestResponsesHeadersToTranslatedTargets(t *testing.T) {
	claude := newUpstream(t, anthropicOK("claude"))
	oai := newUpstream(t, chatOK("openai"))
	_, gw := start(t, Options{}, fmt.Sprintf(anthropicLadder, claude.URL, oai.URL+"/v1"))
	c := newClient(gw.URL)
	p := responses.ResponseNewParams{Model: "smart", Input: textInput("hi")}
	if _, err := c.Responses.New(t.Context(), p, clientHeaders...); err != nil {
		t.Fatal(err)
	}
	h := claude.header(0)
	if h.Get("Anthropic-Beta") != "context-1m-2025-08-07" || h.Get("Openai-Beta") != "" || h.Get("X-Api-Key") != "ak1" || h.Get("Authorization") != "" {
		t.Errorf("Claude's headers %v; want the client's anthropic-beta, no OpenAI-Beta, the provider's key", h)
	}
	checkNoClientCredentials(t, "Claude", h)

	claude.set(status(529, "overloaded_error"))
	if _, err := c.Responses.New(t.Context(), p, clientHeaders...); err != nil {
		t.Fatal(err)
	}
	h = oai.header(0)
	if h.Get("Openai-Beta") != "responses=experimental" || h.Get("Anthropic-Beta") != "" || h.Get("Authorization") != "Bearer ok1" || h.Get("X-Api-Key") != "" {
		t.Errorf("OpenAI's headers %v; want the client's OpenAI-Beta, no anthropic-beta, the provider's key", h)
	}
	checkNoClientCredentials(t, "OpenAI", h)
}

// Through /v1/responses to a native target, streamed and not: OpenAI-Beta
// reaches it, anthropic-beta and the client's credentials do not.
func TestResponsesHeadersToANativeTarget(t *testing.T) {
	oai, chat := simUpstream(t), newUpstream(t, chatOK("chat"))
	_, gw := gateway(t, nil, nativeMatrix, oai, chat)
	c := newClient(gw.URL)
	p := responses.ResponseNewParams{Model: "smart", Input: textInput("hi")}
	if _, err := c.Responses.New(t.Context(), p, clientHeaders...); err != nil {
		t.Fatal(err)
	}
	if s := readStream(t, c, p, clientHeaders...); s.err != nil || s.count("response.completed") != 1 {
		t.Fatalf("stream: %s %v", s.joined(), s.err)
	}
	for i := range 2 {
		h := oai.header(i)
		if oai.paths()[i] != "/v1/responses" || h.Get("Openai-Beta") != "responses=experimental" || h.Get("Anthropic-Beta") != "" || h.Get("Authorization") != "Bearer k" {
			t.Errorf("call %d to %s: headers %v; want OpenAI-Beta, no anthropic-beta, the provider's key", i, oai.paths()[i], h)
		}
		checkNoClientCredentials(t, "the native target", h)
	}
}
