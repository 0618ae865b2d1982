package vertex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/auth"

	"github.com/fuseboxhq/fusebox/clock"
	"github.com/fuseboxhq/fusebox/internal/h1"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
	"github.com/fuseboxhq/fusebox/internal/provider/gemini"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// Config is one Vertex AI provider: a project and a location. The zero
// value of each optional field means its documented default.
type Config struct {
	// Project is the Google Cloud project ID. Required.
	Project string
	// Location is the region ("us-central1", "europe-west4", …) or
	// "global". Required.
	Location string
	// BaseURL is the API root. "": https://{Location}-aiplatform.googleapis.com,
	// or https://aiplatform.googleapis.com for "global".
	BaseURL string
	// CredentialsFile is a credentials JSON file (a service account key,
	// gcloud user credentials, a workload identity federation
	// configuration, an impersonation configuration). "": see Credentials.
	CredentialsFile string
	// CredentialsJSON is the content of such a file. nil: see Credentials.
	CredentialsJSON []byte
	// Credentials, when set, are used as they are, and CredentialsFile and
	// CredentialsJSON are ignored. nil: from CredentialsJSON or
	// CredentialsFile (at most one may be set), else Application Default
	// Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, then the
	// metadata server of GCE, GKE workload identity or Cloud Run), all with
	// the cloud-platform scope.
	Credentials *auth.Credentials
	// Header is sent with every request, before the headers this package
	// sets (authorization, content-type, accept).
	Header http.Header
	// Connect bounds dialing and the TLS handshake. 0: 10 s.
	Connect time.Duration
	// Transport sends the model requests (not the token requests, which
	// the credentials make). nil: h1.For the base URL.
	Transport http.RoundTripper
	// Clock gives the "created" time of translated answers. nil: real time.
	Clock clock.Clock
}

// Upstream sends calls to Vertex AI: Gemini models through
// generateContent, Claude models through Anthropic's rawPredict. It is safe
// for concurrent use.
type Upstream struct {
	publishers string // {base}/v1/projects/{p}/locations/{l}/publishers/
	creds      *auth.Credentials
	header     http.Header
	rt         http.RoundTripper
	clk        clock.Clock
}

var _ router.Upstream = (*Upstream)(nil)

// New returns an Upstream, or an error naming the bad field. It reads
// credentials but fetches no token: the first request does.
func New(c Config) (*Upstream, error) {
	if err := segment("Project", c.Project); err != nil {
		return nil, err
	}
	if err := segment("Location", c.Location); err != nil {
		return nil, err
	}
	base := c.BaseURL
	switch {
	case base != "":
	case c.Location == "global":
		base = "https://aiplatform.googleapis.com"
	default:
		base = "https://" + c.Location + "-aiplatform.googleapis.com"
	}
	u, err := gemini.ParseBase(base)
	if err != nil {
		return nil, fmt.Errorf("vertex: BaseURL: %w", err)
	}
	creds, err := loadCredentials(&c)
	if err != nil {
		return nil, err
	}
	rt := c.Transport
	if rt == nil {
		rt = h1.For(u, c.Connect)
	}
	return &Upstream{
		publishers: strings.TrimSuffix(base, "/") + "/v1/projects/" + c.Project + "/locations/" + c.Location + "/publishers/",
		creds:      creds, header: withQuotaProject(c.Header, creds), rt: rt, clk: c.Clock,
	}, nil
}

// withQuotaProject adds x-goog-user-project when the credentials name a
// quota project (gcloud user credentials do, and
// GOOGLE_CLOUD_QUOTA_PROJECT sets one): Google bills and limits the call
// to it. A configured header stays.
func withQuotaProject(h http.Header, creds *auth.Credentials) http.Header {
	qp, err := creds.QuotaProjectID(context.Background())
	if err != nil || qp == "" || h.Get("X-Goog-User-Project") != "" {
		return h
	}
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("X-Goog-User-Project", qp)
	return h
}

// segment checks a value that becomes one URL path segment.
func segment(field, v string) error {
	if v == "" {
		return errors.New("vertex: " + field + " is required")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c == 0x7f || strings.IndexByte("/?#%\\", c) >= 0 {
			return fmt.Errorf("vertex: %s %q: want a name without /, ?, #, %%, spaces or controls", field, v)
		}
	}
	return nil
}

// IsClaude reports whether model is one of Anthropic's on Vertex AI.
func IsClaude(model string) bool { return strings.HasPrefix(model, "claude") }

// SpeaksMessages reports that Claude models take Anthropic Messages bodies
// as they are (router.Call.Native).
func (u *Upstream) SpeaksMessages(model string) bool { return IsClaude(model) }

// Send sends the call to Vertex AI with a bearer token from the
// credentials:
//
//   - a Gemini model's OpenAI chat body is translated by package gemini
//     and sent to publishers/google/models/{m}:generateContent (or
//     :streamGenerateContent?alt=sse); its answer is translated back;
//   - a Claude model's chat body is translated by package anthropic,
//     without its model and with anthropic_version vertex-2023-10-16, and
//     sent to publishers/anthropic/models/{m}:rawPredict (or
//     :streamRawPredict); its answer is translated back;
//   - a Claude model's Native Messages body goes the same way as the
//     client wrote it, less its model, and its answer is returned as
//     Anthropic's;
//   - a non-2xx answer is returned unchanged; a request that cannot be
//     translated, a model that is not one path segment and any path but
//     /chat/completions are refused with a *router.Unservable, and nothing
//     is sent;
//   - when no token can be had the error says why, without a secret, and
//     nothing is sent.
func (u *Upstream) Send(ctx context.Context, c *router.Call) (*http.Response, error) {
	if c.Native != nil {
		return u.sendNative(ctx, c)
	}
	if c.Path != "/chat/completions" {
		return nil, gemini.UnsupportedPath("vertex", c.Path)
	}
	if IsClaude(c.Model) {
		return u.sendClaude(ctx, c)
	}
	tr, err := gemini.TranslateChat(c.Body, c.Stream)
	if err != nil {
		return nil, err
	}
	model, err := gemini.ModelSegment(tr.Model, c.Model)
	if err != nil {
		return nil, err
	}
	if IsClaude(model) {
		return u.sendClaude(ctx, c)
	}
	resp, err := u.post(ctx, "google/models/"+model+gemini.Method(tr.Stream), tr.Body, tr.Stream)
	if err != nil {
		return nil, err
	}
	return gemini.Answer(resp, gemini.Translated{Stream: tr.Stream, IncludeUsage: tr.IncludeUsage}, model, u.now().Unix())
}

// sendClaude translates a chat body to Messages and sends it to
// rawPredict.
func (u *Upstream) sendClaude(ctx context.Context, c *router.Call) (*http.Response, error) {
	tr, err := anthropic.TranslateChat(c.Body, c.Stream, nil)
	if err != nil {
		return nil, err
	}
	model, err := gemini.ModelSegment(tr.Model, c.Model)
	if err != nil {
		return nil, err
	}
	body, err := messagesBody(tr.Body, nil)
	if err != nil {
		return nil, &router.Unservable{Param: "", Code: gemini.CodeInvalidValue, Message: "vertex: " + err.Error()}
	}
	resp, err := u.post(ctx, "anthropic/models/"+model+rawPredict(tr.Stream), body, tr.Stream)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	created := u.now().Unix()
	if tr.Stream {
		return anthropic.ChatStream(resp, tr.IncludeUsage, created), nil
	}
	return anthropic.ChatAnswer(resp, created)
}

// sendNative sends a client's Messages body to a Claude model, and
// returns Anthropic's answer as it came.
func (u *Upstream) sendNative(ctx context.Context, c *router.Call) (*http.Response, error) {
	model, err := gemini.ModelSegment(c.Model, "")
	if err != nil {
		return nil, err
	}
	if !IsClaude(model) {
		return nil, &router.Unservable{Param: "model", Code: gemini.CodeUnsupportedOperation,
			Message: "vertex: only Claude models take Messages bodies"}
	}
	if c.Path == anthropic.CountTokensPath {
		// Vertex counts Claude tokens at one endpoint, named by the body's model.
		return u.post(ctx, "anthropic/models/count-tokens:rawPredict", c.Native, false)
	}
	body, err := messagesBody(c.Native, c.Header.Values("Anthropic-Beta"))
	if err != nil {
		return nil, &router.Unservable{Param: "", Code: gemini.CodeInvalidValue, Message: "vertex: " + err.Error()}
	}
	return u.post(ctx, "anthropic/models/"+model+rawPredict(c.Stream), body, c.Stream)
}

func rawPredict(stream bool) string {
	if stream {
		return ":streamRawPredict"
	}
	return ":rawPredict"
}

// post sends body to {publishers}{rest} with a bearer token.
func (u *Upstream) post(ctx context.Context, rest string, body []byte, stream bool) (*http.Response, error) {
	tok, err := u.creds.Token(ctx)
	if err != nil {
		return nil, tokenError(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.publishers+rest, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	gemini.SetHeaders(req.Header, u.header, stream)
	req.Header.Set("Authorization", "Bearer "+tok.Value)
	return u.rt.RoundTrip(req)
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
