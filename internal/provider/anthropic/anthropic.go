package anthropic

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/h1"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// Defaults of Config.
const (
	// DefaultBaseURL is Anthropic's API root.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultVersion is the anthropic-version header sent when
	// Config.Version is empty.
	DefaultVersion = "2023-06-01"
	// FallbackMaxTokens is max_tokens for a request that omits it and a
	// model that neither Config.DefaultMaxTokens nor the built-in table
	// knows.
	FallbackMaxTokens = 4096
)

// builtinMaxTokens is max_tokens, by model name prefix, for requests that
// omit it: enough for a long answer, far below each model's output limit so
// that a forgotten max_tokens does not make a minutes-long call.
var builtinMaxTokens = []struct {
	prefix string
	n      int
}{
	{"claude-3-haiku", 4096},
	{"claude-3-opus", 4096},
	{"claude-3-sonnet", 4096},
	{"claude-3-5-", 8192},
	{"claude-3-7-", 8192},
	{"claude-sonnet-", 8192},
	{"claude-opus-", 8192},
	{"claude-haiku-", 8192},
}

// Config is one Anthropic provider. The zero value of each field means its
// documented default.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL + "/v1/messages".
	// "": DefaultBaseURL.
	BaseURL string
	// Version is the anthropic-version header. "": DefaultVersion.
	Version string
	// Beta lists anthropic-beta flags, sent comma-separated. nil: none.
	Beta []string
	// Header is sent with every request, before the headers this package
	// sets (x-api-key, anthropic-version, anthropic-beta, content-type).
	Header http.Header
	// Connect bounds dialing and the TLS handshake. 0: 10 s.
	Connect time.Duration
	// Transport sends the requests. nil: h1.For the base URL (a
	// same-goroutine HTTP/1.1 transport for plain http, net/http's for
	// https).
	Transport http.RoundTripper
	// DefaultMaxTokens is max_tokens for requests that omit both
	// max_tokens and max_completion_tokens (Anthropic requires it), keyed
	// by model: an exact model name wins, then the longest key that is a
	// prefix of the model. Models it does not cover use a built-in table
	// (8192 for Claude 3.5 and later, 4096 for Claude 3), then
	// FallbackMaxTokens. Values below 1 are ignored.
	DefaultMaxTokens map[string]int
	// Clock gives the "created" time of translated answers. nil: real time.
	Clock clock.Clock
}

// Upstream sends OpenAI-format calls to Anthropic's Messages API and
// answers in OpenAI's format. It is safe for concurrent use.
type Upstream struct {
	endpoint  string
	version   string
	beta      string
	header    http.Header
	rt        http.RoundTripper
	maxTokens map[string]int
	clk       clock.Clock
}

var _ router.Upstream = (*Upstream)(nil)
var _ router.Prober = (*Upstream)(nil)

// New returns an Upstream, or an error naming the bad field.
func New(c Config) (*Upstream, error) {
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic: base URL %q: want an absolute http or https URL", c.BaseURL)
	}
	for _, b := range c.Beta {
		if b == "" || strings.ContainsAny(b, ",\r\n") {
			return nil, fmt.Errorf("anthropic: beta flag %q: want a non-empty name without commas", b)
		}
	}
	version := c.Version
	if version == "" {
		version = DefaultVersion
	}
	rt := c.Transport
	if rt == nil {
		rt = h1.For(u, c.Connect)
	}
	return &Upstream{
		endpoint:  strings.TrimSuffix(base, "/") + "/v1/messages",
		version:   version,
		beta:      strings.Join(c.Beta, ","),
		header:    c.Header,
		rt:        rt,
		maxTokens: c.DefaultMaxTokens,
		clk:       c.Clock,
	}, nil
}

// Send translates the call's OpenAI chat body to a Messages request, sends
// it, and returns the answer in OpenAI's format:
//
//   - a 2xx answer becomes a chat.completion body, or for a stream a
//     text/event-stream of chat.completion.chunk events ending in
//     data: [DONE] (an in-stream error ends it without [DONE]);
//   - any other answer is returned unchanged (status, headers including
//     anthropic-ratelimit-* and retry-after, body) for aierr to classify;
//   - a request that cannot be translated faithfully is refused with a
//     *router.Unservable naming the field, and nothing is sent: the walk
//     passes to the next target, and answers 400 only when none can serve;
//   - the "/embeddings" path (Anthropic has no embeddings API) and any
//     other path are refused the same way, code "unsupported_operation".
//
// The error is non-nil when nothing could be sent or received.
func (u *Upstream) Send(ctx context.Context, c *router.Call) (*http.Response, error) {
	if c.Native != nil {
		return u.sendNative(ctx, c)
	}
	if c.Path != "/chat/completions" {
		return nil, &router.Unservable{Param: "model", Code: CodeUnsupportedOperation,
			Message: "anthropic: Anthropic has no " + c.Path + " endpoint; route this model to an OpenAI-compatible target"}
	}
	tr, err := translateRequest(c.Body, u.defaultMaxTokens)
	if err != nil {
		e := err.(*RequestError)
		return nil, &router.Unservable{Param: e.Field, Code: e.Code, Message: e.Error()}
	}
	stream := tr.stream || c.Stream
	if stream && !tr.stream {
		tr.body = forceStream(tr.body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.endpoint, bytes.NewReader(tr.body))
	if err != nil {
		return nil, err
	}
	u.setHeaders(req.Header, c, stream)
	resp, err := u.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, nil
	}
	created := u.now().Unix()
	if stream {
		return streamResponse(resp, tr.includeUsage, created), nil
	}
	return messageResponse(resp, created)
}

func (u *Upstream) setHeaders(h http.Header, c *router.Call, stream bool) {
	for k, v := range c.Header {
		if !strings.HasPrefix(k, "Openai-") { // for OpenAI-compatible targets only
			h[k] = v
		}
	}
	for k, v := range u.header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	// The client's anthropic-version is the API it was written for; its
	// anthropic-beta flags join the configured ones.
	h.Set("Anthropic-Version", u.version)
	if v := c.Header.Get("Anthropic-Version"); v != "" {
		h.Set("Anthropic-Version", v)
	}
	client, configured := c.Header.Values("Anthropic-Beta"), u.header.Values("Anthropic-Beta")
	switch {
	case len(client) == 0 && len(configured) == 0:
		if u.beta != "" {
			h.Set("Anthropic-Beta", u.beta)
		}
	default:
		h.Del("Anthropic-Beta")
		if beta := joinBeta(append([]string{u.beta}, configured...), client); beta != "" {
			h.Set("Anthropic-Beta", beta)
		}
	}
	if c.Key != "" {
		h.Set("X-Api-Key", c.Key)
	}
	if c.IdempotencyKey != "" {
		h.Set("Idempotency-Key", c.IdempotencyKey)
	}
}

// CountTokensPath is the Call.Path of a native count_tokens request: its
// Native body goes to /v1/messages/count_tokens.
const CountTokensPath = "/messages/count_tokens"

// joinBeta returns the configured anthropic-beta flags and the client's,
// each once, configured first.
func joinBeta(configured, client []string) string {
	var flags []string
	seen := map[string]bool{}
	for _, list := range append(configured, client...) {
		for f := range strings.SplitSeq(list, ",") {
			if f = strings.TrimSpace(f); f != "" && !seen[f] {
				seen[f] = true
				flags = append(flags, f)
			}
		}
	}
	return strings.Join(flags, ",")
}

// forceStream sets "stream": true in a translated body that lacks it; the
// body always starts with {"model":.
func forceStream(body []byte) []byte {
	out := make([]byte, 0, len(body)+15)
	out = append(out, `{"stream":true,`...)
	return append(out, body[1:]...)
}

// defaultMaxTokens is max_tokens for a request that has none.
func (u *Upstream) defaultMaxTokens(model string) int {
	if n := u.maxTokens[model]; n > 0 {
		return n
	}
	best, n := -1, 0
	for k, v := range u.maxTokens {
		if v > 0 && len(k) > best && strings.HasPrefix(model, k) {
			best, n = len(k), v
		}
	}
	if best >= 0 {
		return n
	}
	for _, e := range builtinMaxTokens {
		if strings.HasPrefix(model, e.prefix) {
			return e.n
		}
	}
	return FallbackMaxTokens
}

func (u *Upstream) now() time.Time {
	if u.clk == nil {
		return time.Now()
	}
	return u.clk.Now()
}

// CloseIdle closes idle connections, for shutdown and tests.
func (u *Upstream) CloseIdle() {
	if t, ok := u.rt.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// SpeaksMessages reports that this upstream takes Anthropic Messages bodies
// as they are (router.Call.Native), so a request that arrived in that
// format needs no translation to reach it.
func (u *Upstream) SpeaksMessages(model string) bool { return true }

// sendNative sends a Messages body untouched and returns the answer as
// Anthropic gave it: nothing is lost to a round trip through the chat
// format (cache_control on system, thinking, …).
func (u *Upstream) sendNative(ctx context.Context, c *router.Call) (*http.Response, error) {
	endpoint := u.endpoint // …/messages
	if c.Path == CountTokensPath {
		endpoint += "/count_tokens"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(c.Native))
	if err != nil {
		return nil, err
	}
	u.setHeaders(req.Header, c, c.Stream)
	return u.rt.RoundTrip(req)
}

// Probe lists the models with key: a request that costs no tokens, to
// check whether a refused key works again.
func (u *Upstream) Probe(ctx context.Context, key string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(u.endpoint, "/messages")+"/models", nil)
	if err != nil {
		return nil, err
	}
	u.setHeaders(req.Header, &router.Call{Key: key}, false)
	req.Header.Del("Content-Type")
	return u.rt.RoundTrip(req)
}
