// Package openai is the adapter for OpenAI-compatible hosts: OpenAI, Azure
// OpenAI's /openai/v1 endpoint, DeepSeek, Together, Groq, vLLM, Ollama,
// OpenRouter and other gateways that speak the same API.
package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/fuseboxhq/fusebox/internal/h1"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/internal/router"
)

// Config is one OpenAI-compatible provider.
type Config struct {
	// BaseURL is the API root, such as https://api.openai.com/v1.
	BaseURL string
	// Header is sent with every request (organisation, project, beta
	// flags).
	Header http.Header
	// Auth says how the key is sent: "bearer" (default) or "api-key"
	// (Azure OpenAI).
	Auth string
	// Connect bounds dialing and the TLS handshake. 0: 10 s.
	Connect time.Duration
	// Transport sends the requests. nil: h1.For the base URL (a
	// same-goroutine HTTP/1.1 transport for plain http, net/http's for
	// https).
	Transport http.RoundTripper
	// Responses says that the host serves the Responses API: the router
	// sends it Responses requests as they are (SpeaksResponses).
	Responses bool
	// Unsupported are request fields the host cannot serve: a chat
	// request that sets one is refused with a *router.Unservable, sending
	// nothing, so the walk passes to the next target.
	Unsupported []string
}

// Upstream sends calls to an OpenAI-compatible host. It is safe for
// concurrent use.
type Upstream struct {
	base        string
	chatURL     string // base + "/chat/completions", the common call's, made once
	header      http.Header
	auth        string
	rt          http.RoundTripper
	responses   bool
	unsupported []string
	// auths holds each key's header value, made once: the keys are the
	// configuration's, so it holds no more than it lists.
	auths sync.Map // key -> []string
}

// Header values every call sends, shared: capacity one, so an Add copies
// them, and nothing writes into them.
var (
	jsonType    = []string{"application/json"}
	eventStream = []string{"text/event-stream"}
)

// authValue returns the header value that sends key.
func (u *Upstream) authValue(key string) []string {
	if v, ok := u.auths.Load(key); ok {
		return v.([]string)
	}
	v := []string{key}
	if u.auth != "api-key" {
		v[0] = "Bearer " + key
	}
	u.auths.Store(key, v)
	return v
}

// SpeaksResponses reports whether the host serves the Responses API.
func (u *Upstream) SpeaksResponses() bool { return u.responses }

var _ router.Upstream = (*Upstream)(nil)
var _ router.Prober = (*Upstream)(nil)

// New returns an Upstream, or an error if BaseURL is not an http(s) URL.
func New(c Config) (*Upstream, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: want an absolute http or https URL", c.BaseURL)
	}
	rt := c.Transport
	if rt == nil {
		rt = h1.For(u, c.Connect)
	}
	base := strings.TrimSuffix(c.BaseURL, "/")
	return &Upstream{base: base, chatURL: base + "/chat/completions", header: c.Header, auth: c.Auth, rt: rt, responses: c.Responses, unsupported: c.Unsupported}, nil
}

// Send posts the call's body to the operation's path.
func (u *Upstream) Send(ctx context.Context, c *router.Call) (*http.Response, error) {
	if c.Path == "/chat/completions" {
		if un := Refusal(c.Body, u.unsupported, "openai"); un != nil {
			return nil, un
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url(c.Path), nil)
	if err != nil {
		return nil, err
	}
	sent := newSentBody(req, c.Body)
	h := req.Header
	SetHeaders(h, c, u.header)
	if c.Key != "" {
		if u.auth == "api-key" {
			h["Api-Key"] = u.authValue(c.Key)
		} else {
			h["Authorization"] = u.authValue(c.Key)
		}
	}
	if c.IdempotencyKey != "" {
		h.Set("Idempotency-Key", c.IdempotencyKey)
	}
	resp, err := u.rt.RoundTrip(req)
	sent.spend()
	return resp, err
}

// url returns the URL of an operation's path.
func (u *Upstream) url(path string) string {
	if path == "/chat/completions" {
		return u.chatURL
	}
	return u.base + path
}

// SetHeaders sets on h, a request's headers, the call's headers but those
// for Anthropic targets only (Anthropic-*), then extra (the provider's
// configured headers), then the JSON Content-Type and the Accept that a
// stream (text/event-stream) or an answer (application/json) wants.
func SetHeaders(h http.Header, c *router.Call, extra http.Header) {
	for k, v := range c.Header {
		if !strings.HasPrefix(k, "Anthropic-") { // for Anthropic targets only
			h[k] = v
		}
	}
	for k, v := range extra {
		h[k] = v
	}
	h["Content-Type"] = jsonType
	if c.Stream {
		h["Accept"] = eventStream
	} else {
		h["Accept"] = jsonType
	}
}

// CloseIdle closes idle connections, for shutdown and tests.
func (u *Upstream) CloseIdle() {
	if t, ok := u.rt.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// Probe lists the models with key: a request that costs no tokens, to
// check whether a refused key works again.
func (u *Upstream) Probe(ctx context.Context, key string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.base+"/models", nil)
	if err != nil {
		return nil, err
	}
	for k, v := range u.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		if u.auth == "api-key" {
			req.Header.Set("Api-Key", key)
		} else {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	return u.rt.RoundTrip(req)
}
