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

// Unservable is what an Upstream's Send returns, with no response, for a
// request its target cannot serve faithfully: a field it has no
// equivalent for (n > 1, a response_format, log probabilities to an
// Anthropic target). Nothing was sent. The walk skips the target, counting
// nothing against it, and goes on; when no target could serve the
// request, NoTargetError.Unservable is the first such refusal, for an
// answer that names Param.
type Unservable struct {
	// Param is the JSON path of the field, e.g. "n" or
	// "messages[2].content[0].type"; Code a machine-readable reason.
	Param, Code, Message string
}

func (e *Unservable) Error() string { return e.Message }

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
	// Header are the client's headers to pass on (Request.Header); the
	// Upstream sends those its provider understands, under its own.
	Header http.Header
	// Native, when set, is the client's own Anthropic Messages body (with
	// the target's model), for an Upstream that speaks Messages: it sends
	// it as it is and answers in Anthropic's format.
	Native []byte
}

// messagesSpeaker is an Upstream that takes Anthropic Messages bodies as
// they are for model (a cloud that hosts Claude beside other models
// speaks Messages for Claude only).
type messagesSpeaker interface{ SpeaksMessages(model string) bool }

// responsesSpeaker is an Upstream that serves OpenAI's Responses API: it
// is sent a Responses request as the client wrote it, at "/responses".
type responsesSpeaker interface{ SpeaksResponses() bool }
