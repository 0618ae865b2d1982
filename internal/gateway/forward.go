package gateway

import (
	"net/http"
	"net/textproto"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// forwarded are the client headers passed to the upstream by default: beta
// features and the Messages API version the client was written for. The
// upstream adapters decide which of them a provider gets (anthropic-* only
// to Anthropic targets, OpenAI-Beta only to OpenAI-compatible ones).
var forwarded = []string{"Openai-Beta", "Anthropic-Beta", "Anthropic-Version"}

// forwardHeaders returns the client's headers to pass upstream: those of
// forwarded and of allow (canonical names, see canonicalHeaders), never
// config.NeverForwarded ones; nil when the client sent none of them.
func forwardHeaders(h http.Header, allow []string) http.Header {
	var out http.Header
	add := func(name string) {
		if v, ok := h[name]; ok && !config.NeverForwarded(name) {
			if out == nil {
				out = make(http.Header, 2)
			}
			out[name] = v
		}
	}
	for _, name := range forwarded {
		add(name)
	}
	for _, name := range allow {
		add(name)
	}
	return out
}

// canonicalHeaders returns names in their canonical form, once per
// configuration rather than per request.
func canonicalHeaders(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = textproto.CanonicalMIMEHeaderKey(n)
	}
	return out
}
