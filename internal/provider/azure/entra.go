package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fuseboxhq/fusebox/clock"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Defaults of Entra.
const (
	// DefaultAuthorityHost is Microsoft Entra ID's public cloud.
	DefaultAuthorityHost = "https://login.microsoftonline.com"
	// DefaultScope is the scope of Azure OpenAI tokens.
	DefaultScope = "https://cognitiveservices.azure.com/.default"
)

// Entra is a Microsoft Entra ID application that gets tokens for the
// resource with the OAuth 2.0 client credentials flow: with a client
// secret, or with a federated token (workload identity).
type Entra struct {
	// TenantID is the directory (tenant) ID, required.
	TenantID string
	// ClientID is the application (client) ID, required.
	ClientID string
	// ClientSecret is the application's secret. Exactly one of it and
	// FederatedTokenFile is required.
	ClientSecret string
	// FederatedTokenFile holds the token sent as the client assertion
	// (workload identity: AZURE_FEDERATED_TOKEN_FILE). It is read again
	// for each token request, as the platform rotates it.
	FederatedTokenFile string
	// AuthorityHost is the identity platform's root.
	// "": DefaultAuthorityHost.
	AuthorityHost string
	// Scope is the scope tokens are asked for. "": DefaultScope.
	Scope string
}

// TokenError is a token request that failed: Send and Probe return it,
// having sent nothing upstream. Its message names the token endpoint, the
// client and the identity platform's answer, never a secret.
type TokenError struct {
	// Status is the token endpoint's HTTP status, 0 when it did not answer.
	Status int
	msg    string
}

func (e *TokenError) Error() string { return e.msg }

// Token timing. A token is refreshed a while before it expires, in the
// background while the old one still serves; a failed request is not
// repeated for failRest, so a down identity platform is not hammered.
const (
	refreshBefore = 5 * time.Minute
	fetchTimeout  = 30 * time.Second
	failRest      = 5 * time.Second
	// defaultLifetime is taken for a token whose answer gave none.
	defaultLifetime = 10 * time.Minute
	// assertionType is RFC 7523's client assertion type.
	assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// tokens holds the current token and gets the next one: one request at a
// time, whatever the number of callers.
type tokens struct {
	clientID, secret, file, tokenURL, scope string
	client                                  *http.Client
	clk                                     clock.Clock

	mu sync.Mutex // guards the fields below
	// value is the Authorization header value; good until usable, and
	// refreshed from refresh on.
	value           []string
	refresh, usable time.Time
	fetching        chan struct{} // closed when the running request ends; nil: none
	err             error         // the last request's failure, until failedUntil
	failedUntil     time.Time
}

// newTokens checks e and returns its token source.
func newTokens(e *Entra, clk clock.Clock) (*tokens, error) {
	switch {
	case e.TenantID == "" || strings.ContainsAny(e.TenantID, "/?#%\\ "):
		return nil, fmt.Errorf("azure: entra.tenant_id %q: want the directory (tenant) ID", e.TenantID)
	case e.ClientID == "":
		return nil, errors.New("azure: entra.client_id is required")
	case (e.ClientSecret == "") == (e.FederatedTokenFile == ""):
		return nil, errors.New("azure: entra: set exactly one of client_secret and federated_token_file")
	}
	host := e.AuthorityHost
	if host == "" {
		host = DefaultAuthorityHost
	}
	hu, err := url.Parse(host)
	if err != nil || hu.Host == "" || hu.User != nil || hu.RawQuery != "" ||
		(hu.Scheme != "https" && !(hu.Scheme == "http" && loopback(hu.Hostname()))) {
		shown := "(not a URL)"
		if err == nil {
			shown = hu.Redacted()
		}
		return nil, fmt.Errorf("azure: entra.authority_host %q: want an https URL such as %s", shown, DefaultAuthorityHost)
	}
	scope := e.Scope
	if scope == "" {
		scope = DefaultScope
	}
	return &tokens{
		clientID: e.ClientID, secret: e.ClientSecret, file: e.FederatedTokenFile, scope: scope,
		tokenURL: strings.TrimSuffix(host, "/") + "/" + e.TenantID + "/oauth2/v2.0/token",
		client:   &http.Client{Transport: http.DefaultTransport},
		clk:      clk,
	}, nil
}

// header returns the Authorization header value of a usable token,
// starting a refresh when one is due; it waits, within ctx, only when no
// usable token is held.
func (s *tokens) header(ctx context.Context) ([]string, error) {
	now := s.clk.Now()
	s.mu.Lock()
	if s.value != nil && now.Before(s.refresh) {
		v := s.value
		s.mu.Unlock()
		return v, nil
	}
	if s.fetching == nil && !now.Before(s.failedUntil) {
		s.fetching = make(chan struct{})
		go s.fetch(s.fetching)
	}
	v, done, err := s.value, s.fetching, s.err
	if v != nil && now.Before(s.usable) {
		s.mu.Unlock()
		return v, nil // the refresh runs meanwhile
	}
	s.mu.Unlock()
	if done == nil {
		return nil, err // resting after a failure
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	s.mu.Lock()
	v, err = s.value, s.err
	if v != nil && !s.clk.Now().Before(s.usable) {
		v = nil
	}
	s.mu.Unlock()
	if v == nil && err == nil {
		err = &TokenError{msg: "azure: entra: no token from " + s.tokenURL}
	}
	return v, err
}

// fetch requests a token and stores it, or the failure, then closes done.
func (s *tokens) fetch(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	tok, err := s.request(context.WithValue(ctx, oauth2.HTTPClient, s.client))
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(done)
	s.fetching = nil
	if err != nil {
		s.err, s.failedUntil = err, now.Add(failRest)
		return
	}
	life := defaultLifetime
	if !tok.Expiry.IsZero() {
		life = time.Until(tok.Expiry) // oauth2 set it from expires_in a moment ago
	}
	s.value = []string{"Bearer " + tok.AccessToken}
	s.refresh = now.Add(life - min(refreshBefore, life/2))
	s.usable = now.Add(life - min(30*time.Second, life/4))
	s.err, s.failedUntil = nil, time.Time{}
}

// request runs the client credentials flow once.
func (s *tokens) request(ctx context.Context) (*oauth2.Token, error) {
	c := &clientcredentials.Config{
		ClientID: s.clientID, ClientSecret: s.secret, TokenURL: s.tokenURL,
		Scopes: []string{s.scope}, AuthStyle: oauth2.AuthStyleInParams,
	}
	var assertion string
	if s.file != "" {
		b, err := os.ReadFile(s.file)
		if err != nil {
			return nil, &TokenError{msg: "azure: entra.federated_token_file: " + err.Error()}
		}
		assertion = strings.TrimSpace(string(b))
		if assertion == "" {
			return nil, &TokenError{msg: "azure: entra.federated_token_file " + s.file + " is empty"}
		}
		c.EndpointParams = url.Values{"client_assertion_type": {assertionType}, "client_assertion": {assertion}}
	}
	tok, err := c.Token(ctx)
	if err != nil {
		return nil, s.failure(err, assertion)
	}
	if tok.AccessToken == "" {
		return nil, &TokenError{msg: "azure: entra: the token endpoint " + s.tokenURL + " gave no access_token"}
	}
	return tok, nil
}

// failure describes a failed token request without its secrets.
func (s *tokens) failure(err error, assertion string) *TokenError {
	e := &TokenError{}
	var re *oauth2.RetrieveError
	msg := "azure: entra: token for client " + s.clientID + " from " + s.tokenURL + ": "
	switch {
	case errors.As(err, &re) && re.Response != nil:
		e.Status = re.Response.StatusCode
		detail := re.ErrorCode
		if re.ErrorDescription != "" {
			detail += ": " + re.ErrorDescription
		}
		if detail == "" {
			detail = strings.TrimSpace(string(re.Body))
		}
		msg += re.Response.Status + " " + detail
	default:
		msg += err.Error()
	}
	if len(msg) > 600 {
		msg = msg[:600] + "…"
	}
	for _, secret := range []string{s.secret, assertion} {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "[redacted]")
		}
	}
	e.msg = msg
	return e
}
