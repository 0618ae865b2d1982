package bedrock

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/h1"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// Config is one Bedrock provider: a region and the credentials to sign
// with. The zero value of each optional field means its documented default.
type Config struct {
	// Region is the AWS region, such as "us-east-1". Required.
	Region string
	// BaseURL is the runtime API root. "":
	// https://bedrock-runtime.{Region}.amazonaws.com.
	BaseURL string
	// Profile is the shared config profile for the SDK's default chain.
	// "": AWS_PROFILE, then "default".
	Profile string
	// AccessKeyID, SecretAccessKey and SessionToken are static keys; the
	// first two go together. Empty: Credentials, or the default chain.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Credentials signs the calls. nil: the static keys when set, else
	// the SDK's default chain (config.LoadDefaultConfig with Region and
	// Profile: environment, shared config and credentials files, web
	// identity, container and instance roles). Either way the credentials
	// are cached (aws.CredentialsCache) and renewed RefreshBefore they
	// expire.
	Credentials aws.CredentialsProvider
	// Header is sent with every request. An Anthropic-Beta value here
	// joins the client's flags in a Claude body's "anthropic_beta".
	Header http.Header
	// Connect bounds dialing and the TLS handshake. 0: 10 s.
	Connect time.Duration
	// Transport sends the requests. nil: h1.For the base URL.
	Transport http.RoundTripper
	// Clock gives the signing time and the "created" time of translated
	// answers. nil: real time.
	Clock clock.Clock
}

// Upstream sends calls to Bedrock's runtime API: InvokeModel with the
// Messages body for Claude, Converse for every other model. It answers in
// OpenAI's format (Anthropic's for router.Call.Native). It is safe for
// concurrent use.
type Upstream struct {
	region string
	header http.Header // Config.Header less Anthropic-Beta
	beta   []string    // Config.Header's Anthropic-Beta flags
	creds  aws.CredentialsProvider
	signer *v4.Signer
	rt     http.RoundTripper
	clk    clock.Clock
	paths  pathCache
}

var _ router.Upstream = (*Upstream)(nil)

// New returns an Upstream, or an error naming the bad field. It resolves
// no credentials: the first signed call does, and they are cached.
func New(ctx context.Context, c Config) (*Upstream, error) {
	if !validRegion(c.Region) {
		return nil, fmt.Errorf("bedrock: Region %q: want a region name such as us-east-1", c.Region)
	}
	base := c.BaseURL
	if base == "" {
		base = "https://bedrock-runtime." + c.Region + ".amazonaws.com"
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil {
		shown := strconv.Quote(c.BaseURL)
		if strings.Contains(c.BaseURL, "@") {
			shown = "(with user information, not shown)"
		}
		return nil, fmt.Errorf("bedrock: BaseURL %s: want an absolute http or https URL without query or user", shown)
	}
	creds, err := credentialsFor(ctx, c)
	if err != nil {
		return nil, err
	}
	rt := c.Transport
	if rt == nil {
		rt = h1.For(u, c.Connect)
	}
	header := c.Header.Clone()
	beta := splitBeta(nil, header.Values("Anthropic-Beta"))
	header.Del("Anthropic-Beta")
	return &Upstream{
		region: c.Region, header: header, beta: beta,
		creds: creds, signer: v4.NewSigner(), rt: rt, clk: clock.Or(c.Clock),
		paths: pathCache{base: strings.TrimSuffix(base, "/")},
	}, nil
}

// validRegion accepts lower-case letters, digits and dashes: a region
// goes into a host name.
func validRegion(r string) bool {
	if r == "" || len(r) > 32 || r[0] == '-' || r[len(r)-1] == '-' {
		return false
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Send sends one call and answers in OpenAI's format, or Anthropic's for
// a Native call:
//
//   - a Claude model (SpeaksMessages) goes to InvokeModel with the
//     Messages body; any other to Converse, translated from the chat body;
//   - a 2xx answer is translated (doc.go has the mappings); a stream's
//     in-stream exception becomes an error event, and a stream cut or
//     corrupt is a read error wrapping io.ErrUnexpectedEOF;
//   - any other answer is returned unchanged (status, headers such as
//     x-amzn-ErrorType, body) for aierr;
//   - a request that cannot be translated faithfully, and any path but
//     /chat/completions, is refused with a *router.Unservable, and nothing
//     is sent.
//
// The call is signed with SigV4, or carries Call.Key as a Bedrock API key
// (Authorization: Bearer) when it is set.
func (u *Upstream) Send(ctx context.Context, c *router.Call) (*http.Response, error) {
	p := u.paths.get(c.Model)
	if c.Native != nil {
		return u.sendNative(ctx, c, p)
	}
	if c.Path != "/chat/completions" {
		return nil, unsupportedOperation(c.Path)
	}
	if p.claude {
		return u.sendClaude(ctx, c, p)
	}
	return u.sendConverse(ctx, c, p)
}

// sendClaude sends a chat call to a Claude model as a Messages body.
func (u *Upstream) sendClaude(ctx context.Context, c *router.Call, p *paths) (*http.Response, error) {
	tr, err := anthropic.TranslateChat(c.Body, c.Stream, claudeMaxTokens)
	if err != nil {
		return nil, err
	}
	body, err := invokeBody(tr.Body, u.betas(c.Header))
	if err != nil {
		return nil, err
	}
	resp, err := u.post(ctx, c, p.target(tr.Stream), body, tr.Stream)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	created := u.clk.Now().Unix()
	if tr.Stream {
		return anthropic.ChatStream(messagesEvents(resp), tr.IncludeUsage, created), nil
	}
	return anthropic.ChatAnswer(resp, created)
}

// claudeMaxTokens is max_tokens for a Claude request that has none: the
// built-in default of the Claude model the Bedrock id names
// ("us.anthropic.claude-sonnet-4-5-…-v1:0" is "claude-sonnet-4-5-…").
func claudeMaxTokens(model string) int {
	if i := strings.Index(model, "claude"); i >= 0 {
		model = model[i:]
	}
	return anthropic.DefaultMaxTokens(model)
}

// sendNative sends a client's own Messages body to a Claude model and
// answers as Anthropic would.
func (u *Upstream) sendNative(ctx context.Context, c *router.Call, p *paths) (*http.Response, error) {
	if !p.claude {
		return nil, &router.Unservable{Param: "model", Code: CodeUnsupportedOperation,
			Message: "bedrock: " + clip(c.Model) + " does not take Anthropic Messages bodies"}
	}
	if c.Path == anthropic.CountTokensPath {
		return nil, unsupportedOperation(c.Path)
	}
	body, err := invokeBody(c.Native, u.betas(c.Header))
	if err != nil {
		return nil, err
	}
	resp, err := u.post(ctx, c, p.target(c.Stream), body, c.Stream)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 || !c.Stream {
		return resp, err
	}
	return messagesEvents(resp), nil
}

// sendConverse sends a chat call to Converse or ConverseStream.
func (u *Upstream) sendConverse(ctx context.Context, c *router.Call, p *paths) (*http.Response, error) {
	tr, err := translateConverse(c.Body, c.Model)
	if err != nil {
		return nil, err
	}
	stream := tr.stream || c.Stream
	target := p.converse
	if stream {
		target = p.converseStream
	}
	resp, err := u.post(ctx, c, target, tr.body, stream)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	created := u.clk.Now().Unix()
	if stream {
		return converseStreamResponse(resp, c.Model, tr.includeUsage, created), nil
	}
	return converseAnswer(resp, c.Model, created)
}

// post sends body to the URL target, signed or with the call's API key.
func (u *Upstream) post(ctx context.Context, c *router.Call, target string, body []byte, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	for k, v := range u.header {
		h[k] = v
	}
	h.Set("Content-Type", "application/json")
	if !stream { // a stream's Accept is not the HTTP header: the SDK sends none
		h.Set("Accept", "application/json")
	}
	if err := u.authorize(ctx, req, body, c.Key); err != nil {
		return nil, err
	}
	return u.rt.RoundTrip(req)
}

// betas returns the anthropic-beta flags for a Claude body: the
// configured ones, then the client's, each once.
func (u *Upstream) betas(client http.Header) []string {
	vals := client.Values("Anthropic-Beta")
	if len(vals) == 0 {
		return u.beta
	}
	return splitBeta(append([]string(nil), u.beta...), vals)
}

// splitBeta appends the comma-separated flags of lists to flags, skipping
// empty and repeated ones.
func splitBeta(flags []string, lists []string) []string {
	for _, list := range lists {
		for f := range strings.SplitSeq(list, ",") {
			if f = strings.TrimSpace(f); f != "" && !contains(flags, f) {
				flags = append(flags, f)
			}
		}
	}
	return flags
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// SpeaksMessages reports whether model is a Claude model, which Bedrock
// serves with Anthropic's Messages body (router.Call.Native).
func (u *Upstream) SpeaksMessages(model string) bool { return u.paths.get(model).claude }

// CloseIdle closes idle connections, for shutdown and tests.
func (u *Upstream) CloseIdle() {
	if t, ok := u.rt.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}
