package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
)

// Scope is the OAuth scope of the tokens Vertex AI is called with.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// acceptedTypes are the credential file types New loads: the ones an
// operator configures for a service (keys, user credentials from gcloud,
// workload identity federation, impersonation).
var acceptedTypes = map[credentials.CredType]bool{
	credentials.ServiceAccount:                true,
	credentials.AuthorizedUser:                true,
	credentials.ExternalAccount:               true,
	credentials.ImpersonatedServiceAccount:    true,
	credentials.ExternalAccountAuthorizedUser: true,
}

// loadCredentials returns the credentials of c: c.Credentials, those of
// c.CredentialsJSON or c.CredentialsFile, else Application Default
// Credentials. The auth library caches their token and refreshes it
// before it expires, off the request path. Errors name the field and hold
// no secret.
func loadCredentials(c *Config) (*auth.Credentials, error) {
	if c.Credentials != nil {
		return c.Credentials, nil
	}
	opts := &credentials.DetectOptions{Scopes: []string{Scope}}
	switch {
	case len(c.CredentialsJSON) > 0 && c.CredentialsFile != "":
		return nil, errors.New("vertex: CredentialsJSON and CredentialsFile: set one")
	case len(c.CredentialsJSON) > 0:
		return fromJSON("CredentialsJSON", c.CredentialsJSON, opts)
	case c.CredentialsFile != "":
		b, err := os.ReadFile(c.CredentialsFile)
		if err != nil {
			return nil, fmt.Errorf("vertex: CredentialsFile: %w", err)
		}
		return fromJSON("CredentialsFile", b, opts)
	}
	creds, err := credentials.DetectDefault(opts)
	if err != nil {
		return nil, fmt.Errorf("vertex: Credentials: no Application Default Credentials: %s", safeText(err))
	}
	return creds, nil
}

// fromJSON loads credentials of an accepted type from a credentials file's
// bytes.
func fromJSON(field string, b []byte, opts *credentials.DetectOptions) (*auth.Credentials, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, errors.New("vertex: " + field + ": not a JSON credentials file")
	}
	t := credentials.CredType(head.Type)
	if !acceptedTypes[t] {
		shown := head.Type
		if len(shown) > 40 {
			shown = shown[:40]
		}
		return nil, errors.New("vertex: " + field + ": credential type " + strconv.Quote(shown) + " is not accepted")
	}
	creds, err := credentials.NewCredentialsFromJSON(t, b, opts)
	if err != nil {
		return nil, fmt.Errorf("vertex: %s: unreadable %s credentials: %s", field, head.Type, safeText(err))
	}
	return creds, nil
}

// safeText is an error's text for a message, clipped; the auth library's
// errors name files, fields and endpoints, not secrets, except the token
// endpoint's answer, which tokenError leaves out.
func safeText(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// tokenError is what Send returns when no token could be had: the token
// endpoint's status and OAuth error code, or the transport's failure; never
// the endpoint's answer body, the assertion or a token. A cancelled or
// expired context stays matchable with errors.Is.
func tokenError(err error) error {
	const prefix = "vertex: getting an access token: "
	if ctxErr := contextError(err); ctxErr != nil {
		return fmt.Errorf(prefix+"%w", ctxErr)
	}
	var ae *auth.Error
	if errors.As(err, &ae) && ae.Response != nil {
		msg := prefix + "the token endpoint answered " + strconv.Itoa(ae.Response.StatusCode)
		var body struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(ae.Body, &body) == nil && body.Error != "" && len(body.Error) < 64 {
			msg += " (" + strconv.Quote(body.Error) + ")"
		}
		return errors.New(msg)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		where := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.RawQuery, u.User = "", nil
			where = u.String()
		}
		return errors.New(prefix + ue.Op + " " + where + ": " + safeText(ue.Err))
	}
	return errors.New(prefix + safeText(err))
}

func contextError(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return nil
}
