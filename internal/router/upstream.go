package router

import (
	"context"
	"net/http"
)

// Upstream sends one attempt to a provider. Implementations live in package
// provider; they speak the provider's HTTP API and do not retry.
type Upstream interface {
	Send(ctx context.Context, c *Call) (*http.Response, error)
}

// Call is one attempt as an Upstream sees it.
type Call struct {
	// Path is the operation, relative to the provider's API root:
	// "/chat/completions" or "/embeddings".
	Path string
	// Model is the provider's model name, already written into Body.
	Model string
	// Key is the API key to send.
	Key string
	// Body is the request body in OpenAI's format.
	Body []byte
	// Stream is true for a streamed chat completion.
	Stream bool
	// IdempotencyKey, if set, is sent as the Idempotency-Key header.
	IdempotencyKey string
	// Native, when set, is the client's own Anthropic Messages body (with
	// the target's model), for an Upstream that speaks Messages: it sends
	// it as it is and answers in Anthropic's format.
	Native []byte
}

// messagesSpeaker is an Upstream that takes Anthropic Messages bodies as
// they are.
type messagesSpeaker interface{ SpeaksMessages() bool }
