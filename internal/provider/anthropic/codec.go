package anthropic

import (
	"net/http"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// The codec: the translation between OpenAI's chat format and Anthropic's
// Messages format, for the clouds that host Claude behind their own
// transport and auth (Bedrock's InvokeModel, Vertex AI's rawPredict). They
// send the same Messages body, less its model, and answer with the same
// message or the same events.

// Translated is an OpenAI chat body as a Messages request.
type Translated struct {
	// Body is the Messages body; it names the model, and says
	// "stream": true when Stream is set.
	Body []byte
	// Model is the body's model.
	Model string
	// Stream is true for a streamed answer: the chat body asked for one,
	// or the call did.
	Stream bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
}

// TranslateChat turns an OpenAI chat completion body into a Messages
// request; stream forces a streamed one. A request that cannot be
// translated faithfully is refused with a *router.Unservable naming the
// field. maxTokens gives max_tokens for a request that has none; nil:
// DefaultMaxTokens.
func TranslateChat(body []byte, stream bool, maxTokens func(model string) int) (Translated, error) {
	if maxTokens == nil {
		maxTokens = DefaultMaxTokens
	}
	tr, err := translateRequest(body, maxTokens)
	if err != nil {
		e := err.(*RequestError)
		return Translated{}, &router.Unservable{Param: e.Field, Code: e.Code, Message: e.Error()}
	}
	if stream && !tr.stream {
		tr.body, tr.stream = forceStream(tr.body), true
	}
	return Translated{Body: tr.body, Model: tr.model, Stream: tr.stream, IncludeUsage: tr.includeUsage}, nil
}

// DefaultMaxTokens is the built-in max_tokens for a Claude model whose
// request has none.
func DefaultMaxTokens(model string) int {
	return (&Upstream{}).defaultMaxTokens(model)
}

// ChatAnswer replaces a successful Messages answer's body with its OpenAI
// chat.completion translation, created its "created" time (Unix seconds).
// An answer that cannot be read as a message becomes a 502 in OpenAI's
// error shape; the error is a read error.
func ChatAnswer(resp *http.Response, created int64) (*http.Response, error) {
	return messageResponse(resp, created)
}

// ChatStream replaces a successful Messages event stream's body (SSE, as
// Anthropic sends it) with the OpenAI chat.completion.chunk stream that
// says the same; see Upstream.Send for how errors and cut streams end.
func ChatStream(resp *http.Response, includeUsage bool, created int64) *http.Response {
	return streamResponse(resp, includeUsage, created)
}
