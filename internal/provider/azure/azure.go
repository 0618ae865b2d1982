package azure

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/h1"
	"github.com/fuseboxhq/fusebox/internal/provider/openai"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// DefaultAPIVersion is the api-version sent when Config.APIVersion is
// empty: the current generally available version of the deployments API.
const DefaultAPIVersion = "2024-10-21"

// V1 is the Config.APIVersion that selects the v1 API: paths under
// {endpoint}/openai/v1, the deployment in the body's model, no
// api-version.
const V1 = "v1"

// responsesSince is the first api-version of the deployments API with the
// Responses API (2025-03-01-preview).
const responsesSince = "2025-03-01"

// Config is one Azure OpenAI resource. The zero value of each optional
// field means its documented default.
type Config struct {
	// Endpoint is the resource's root, required:
	// https://{resource}.openai.azure.com or
	// https://{resource}.cognitiveservices.azure.com (a path is kept, a
	// trailing slash dropped). Plain http is accepted for loopback hosts
	// only, so that a key never crosses a network in the clear.
	Endpoint string
	// APIVersion is the api-version query of the deployments API.
	// "": DefaultAPIVersion. V1 ("v1"): the v1 API instead.
	APIVersion string
	// Entra, when set, authenticates with Microsoft Entra ID tokens
	// (Authorization: Bearer) instead of the calls' keys. nil: a call's
	// key is sent as the api-key header.
	Entra *Entra
	// Header is sent with every request (before the headers this package
	// sets: Content-Type, Accept, api-key or Authorization).
	Header http.Header
	// Connect bounds dialing and the TLS handshake. 0: 10 s.
	Connect time.Duration
	// Transport sends the requests to Endpoint. nil: h1.For the endpoint
	// (a same-goroutine HTTP/1.1 transport for plain http, net/http's for
	// https). Entra's token requests do not use it.
	Transport http.RoundTripper
	// Responses says that the resource serves the Responses API: the
	// router sends it Responses requests as they are (SpeaksResponses).
	// It needs APIVersion V1 or 2025-03-01-preview or later.
	Responses bool
	// Unsupported are request fields the deployments cannot serve: a chat
	// request that sets one to other than its neutral value is refused
	// with a *router.Unservable, sending nothing, so the walk passes to
	// the next target.
	Unsupported []string
	// Clock times Entra tokens' refreshes. nil: real time.
	Clock clock.Clock
}

// Upstream sends calls to an Azure OpenAI resource. It is safe for
// concurrent use.
type Upstream struct {
	// root is the endpoint with "/openai" (deployments API) or
	// "/openai/v1" (v1 API); query is "?api-version=…" or "".
	root, query string
	v1          bool
	header      http.Header
	rt          http.RoundTripper
	responses   bool
	unsupported []string
	tokens      *tokens // nil: api-key
	// keys holds each key's header value, made once: the keys are the
	// configuration's, so it holds no more than it lists.
	keys sync.Map // key -> []string
}

var (
	_ router.Upstream = (*Upstream)(nil)
	_ router.Prober   = (*Upstream)(nil)
)

// jsonType is the Accept of a Probe, shared: capacity one, so an
// Add copies it, and nothing writes into it.
var jsonType = []string{"application/json"}

// New returns an Upstream for c, or an error naming the field that is
// wrong. No error holds a secret.
func New(c Config) (*Upstream, error) {
	base, err := checkEndpoint(c.Endpoint)
	if err != nil {
		return nil, err
	}
	v := c.APIVersion
	if v == "" {
		v = DefaultAPIVersion
	}
	if strings.ContainsAny(v, "&#?/ \t\r\n") {
		return nil, fmt.Errorf("azure: api_version %q: want a version such as %s, or %s", v, DefaultAPIVersion, V1)
	}
	if c.Responses && v != V1 && v < responsesSince {
		return nil, fmt.Errorf("azure: responses: api_version %s has no Responses API; use %s or 2025-03-01-preview or later", v, V1)
	}
	u := &Upstream{header: c.Header, responses: c.Responses, unsupported: c.Unsupported, v1: v == V1}
	ep := strings.TrimSuffix(c.Endpoint, "/")
	if u.v1 {
		u.root = ep + "/openai/v1"
	} else {
		u.root, u.query = ep+"/openai", "?api-version="+url.QueryEscape(v)
	}
	if c.Entra != nil {
		if u.tokens, err = newTokens(c.Entra, clock.Or(c.Clock)); err != nil {
			return nil, err
		}
	}
	u.rt = c.Transport
	if u.rt == nil {
		u.rt = h1.For(base, c.Connect)
	}
	return u, nil
}

// checkEndpoint parses an endpoint: an absolute https URL, or http to a
// loopback host, with no query, fragment or user.
func checkEndpoint(s string) (*url.URL, error) {
	if s == "" {
		return nil, fmt.Errorf("azure: endpoint is required: https://{resource}.openai.azure.com")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("azure: endpoint: not a URL; want https://{resource}.openai.azure.com")
	}
	shown := u.Redacted() // a password in the URL stays out of the error
	switch {
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, fmt.Errorf("azure: endpoint %q: want an absolute https URL such as https://{resource}.openai.azure.com", shown)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return nil, fmt.Errorf("azure: endpoint %q: plain http is for loopback hosts only; use https", shown)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return nil, fmt.Errorf("azure: endpoint %q: want the resource's root, with no query, fragment or user", shown)
	}
	return u, nil
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SpeaksResponses reports whether the resource serves the Responses API.
func (u *Upstream) SpeaksResponses() bool { return u.responses }

// target returns the URL of the call's operation, or a refusal for an
// operation or deployment it has no URL for.
func (u *Upstream) target(c *router.Call) (string, *router.Unservable) {
	switch c.Path {
	case "/chat/completions", "/embeddings":
	case "/responses":
		if u.responses {
			return u.root + "/responses" + u.query, nil
		}
		fallthrough
	default:
		return "", &router.Unservable{Param: "model", Code: "unsupported_operation",
			Message: "azure: this provider does not serve " + c.Path + " (see its responses setting in the Fusebox configuration)"}
	}
	if u.v1 {
		return u.root + c.Path, nil
	}
	if c.Model == "" || c.Model == "." || c.Model == ".." {
		return "", &router.Unservable{Param: "model", Code: "unsupported_operation",
			Message: "azure: no deployment name: the target's model names the deployment"}
	}
	return u.root + "/deployments/" + url.PathEscape(c.Model) + c.Path + u.query, nil
}

// errSpent is what a request's GetBody returns once it was answered.
var errSpent = errors.New("azure: the request was answered; its body is gone")

// Send posts the call's body, as it is, to the deployment's operation and
// returns the answer as it came: a 2xx in OpenAI's format, anything else
// unchanged (status, headers, body) for aierr to classify. A chat request
// that sets an Unsupported field, an operation the resource does not
// serve, and a call with no deployment are refused with a
// *router.Unservable, sending nothing. With Entra, a token that cannot be
// had is an error and nothing is sent.
func (u *Upstream) Send(ctx context.Context, c *router.Call) (*http.Response, error) {
	target, un := u.target(c)
	if un == nil && c.Path == "/chat/completions" {
		un = openai.Refusal(c.Body, u.unsupported, "azure")
	}
	if un != nil {
		return nil, un
	}
	auth, err := u.auth(ctx, c.Key)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		return nil, err
	}
	sent := openai.NewSentBody(req, c.Body, errSpent)
	h := req.Header
	openai.SetHeaders(h, c, u.header)
	u.setAuth(h, auth)
	if c.IdempotencyKey != "" {
		h.Set("Idempotency-Key", c.IdempotencyKey)
	}
	resp, err := u.rt.RoundTrip(req)
	sent.Spend()
	return resp, err
}

// auth returns the credential's header value: the bearer token with
// Entra, else key's api-key value (nil for no key).
func (u *Upstream) auth(ctx context.Context, key string) ([]string, error) {
	if u.tokens != nil {
		return u.tokens.header(ctx)
	}
	if key == "" {
		return nil, nil
	}
	if v, ok := u.keys.Load(key); ok {
		return v.([]string), nil
	}
	v := []string{key}
	u.keys.Store(key, v)
	return v, nil
}

// setAuth sets the credential header, replacing any the configuration's
// headers carried.
func (u *Upstream) setAuth(h http.Header, v []string) {
	switch {
	case v == nil:
	case u.tokens != nil:
		delete(h, "Api-Key")
		h["Authorization"] = v
	default:
		delete(h, "Authorization")
		h["Api-Key"] = v
	}
}

// CloseIdle closes idle connections, for shutdown and tests.
func (u *Upstream) CloseIdle() {
	if t, ok := u.rt.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// Probe lists the models the resource can use
// (GET {endpoint}/openai/models?api-version=…, or /openai/v1/models): a
// request that costs no tokens, to check whether a refused key works
// again. With Entra it checks the token instead of key.
func (u *Upstream) Probe(ctx context.Context, key string) (*http.Response, error) {
	auth, err := u.auth(ctx, key)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.root+"/models"+u.query, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range u.header {
		req.Header[k] = v
	}
	req.Header["Accept"] = jsonType
	u.setAuth(req.Header, auth)
	return u.rt.RoundTrip(req)
}
