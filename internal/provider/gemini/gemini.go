package gemini

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

// DefaultBaseURL is Google AI Studio's Gemini API root.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Config is one Google AI Studio provider. The zero value of each field
// means its documented default.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL +
	// "/v1beta/models/{model}:generateContent". "": DefaultBaseURL.
	BaseURL string
	// Header is sent with every request, before the headers this package
	// sets (x-goog-api-key, content-type, accept).
	Header http.Header
	// Connect bounds dialing and the TLS handshake. 0: 10 s.
	Connect time.Duration
	// Transport sends the requests. nil: h1.For the base URL.
	Transport http.RoundTripper
	// Clock gives the "created" time of translated answers. nil: real time.
	Clock clock.Clock
}

// Upstream sends OpenAI-format calls to the Gemini API's generateContent
// and answers in OpenAI's format. It is safe for concurrent use.
type Upstream struct {
	models string // {base}/v1beta/models
	header http.Header
	rt     http.RoundTripper
	clk    clock.Clock
}

var _ router.Upstream = (*Upstream)(nil)
var _ router.Prober = (*Upstream)(nil)

// New returns an Upstream, or an error naming the bad field.
func New(c Config) (*Upstream, error) {
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := ParseBase(base)
	if err != nil {
		return nil, fmt.Errorf("gemini: BaseURL: %w", err)
	}
	rt := c.Transport
	if rt == nil {
		rt = h1.For(u, c.Connect)
	}
	return &Upstream{models: strings.TrimSuffix(base, "/") + "/v1beta/models", header: c.Header, rt: rt, clk: c.Clock}, nil
}

// ParseBase checks an API root: an absolute http or https URL.
func ParseBase(base string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("%q: want an absolute http or https URL without a query", base)
	}
	return u, nil
}

// Send translates the call's OpenAI chat body to a GenerateContentRequest,
// sends it to {base}/v1beta/models/{model}:generateContent (or
// :streamGenerateContent?alt=sse) with the call's key in x-goog-api-key,
// and returns the answer in OpenAI's format: a 2xx answer translated (see
// ChatAnswer and ChatStream), any other answer unchanged for aierr. A
// request that cannot be translated faithfully, a model name that cannot
// be a path segment, and any path but /chat/completions are refused with
// a *router.Unservable before anything is sent.
func (u *Upstream) Send(ctx context.Context, c *router.Call) (*http.Response, error) {
	switch c.Path {
	case "/chat/completions":
	case "/embeddings":
		return u.embed(ctx, c)
	default:
		return nil, UnsupportedPath("gemini", c.Path)
	}
	tr, err := TranslateChat(c.Body, c.Stream)
	if err != nil {
		return nil, err
	}
	model, err := ModelSegment(tr.Model, c.Model)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.models+"/"+model+Method(tr.Stream), bytes.NewReader(tr.Body))
	if err != nil {
		return nil, err
	}
	SetHeaders(req.Header, u.header, tr.Stream)
	if c.Key != "" {
		req.Header.Set("X-Goog-Api-Key", c.Key)
	}
	resp, err := u.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	return Answer(resp, tr, model, u.now().Unix())
}

// embed sends an embeddings call to batchEmbedContents.
func (u *Upstream) embed(ctx context.Context, c *router.Call) (*http.Response, error) {
	r, err := translateEmbed(c.Body, c.Model)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.models+"/"+r.model+":batchEmbedContents", bytes.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	SetHeaders(req.Header, u.header, false)
	if c.Key != "" {
		req.Header.Set("X-Goog-Api-Key", c.Key)
	}
	resp, err := u.rt.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	return embedAnswer(resp, &r)
}

// Answer translates a 2xx answer to a translated request, stream or not,
// and returns any other answer unchanged.
func Answer(resp *http.Response, tr Translated, model string, created int64) (*http.Response, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, nil
	}
	if tr.Stream {
		return ChatStream(resp, model, tr.IncludeUsage, created), nil
	}
	return ChatAnswer(resp, model, created)
}

// Method is the URL suffix of a generateContent call after the model.
func Method(stream bool) string {
	if stream {
		return ":streamGenerateContent?alt=sse"
	}
	return ":generateContent"
}

// SetHeaders sets a generateContent request's headers: the configured
// ones, then content-type and accept.
func SetHeaders(h, configured http.Header, stream bool) {
	for k, v := range configured {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
}

// ModelSegment is the model to put in the URL: the body's, else the
// call's, without a "models/" prefix. A name that is empty or holds bytes
// that would change the URL ("/", "?", "#", ":", "%", controls, spaces) is
// refused.
func ModelSegment(model, fallback string) (string, error) {
	if model == "" {
		model = fallback
	}
	model = strings.TrimPrefix(model, "models/")
	if model == "" {
		return "", badValue("model", CodeInvalidValue, "is required")
	}
	for i := 0; i < len(model); i++ {
		if c := model[i]; c <= ' ' || c == 0x7f || strings.IndexByte("/?#:%\\", c) >= 0 {
			return "", badValue("model", CodeInvalidValue, "a model name cannot hold "+shown(model[i:i+1]))
		}
	}
	return model, nil
}

// UnsupportedPath refuses an operation other than chat completions.
func UnsupportedPath(provider, p string) *router.Unservable {
	return &router.Unservable{Param: "model", Code: CodeUnsupportedOperation,
		Message: provider + ": " + shown(p) + " is not translated for this target; route this model to an OpenAI-compatible target"}
}

func (u *Upstream) now() time.Time {
	if u.clk == nil {
		return time.Now()
	}
	return u.clk.Now()
}

// Probe lists the models with key: a request that costs no tokens, to
// check whether a refused key works again.
func (u *Upstream) Probe(ctx context.Context, key string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.models, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range u.header {
		req.Header[k] = v
	}
	req.Header.Set("X-Goog-Api-Key", key)
	return u.rt.RoundTrip(req)
}

// CloseIdle closes idle connections, for shutdown and tests.
func (u *Upstream) CloseIdle() {
	if t, ok := u.rt.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}
