package sim

import (
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"slices"
	"strconv"
	"sync"
	"time"
)

// AWS configures the Bedrock paths' credentials and the AWS credential
// services (STS and the container endpoint).
type AWS struct {
	// Region is the region SigV4 signatures must be scoped to. "":
	// us-east-1.
	Region string
	// Keys are the long-term access keys accepted: access key id →
	// secret access key. With no Keys and no APIKeys, any well-formed
	// SigV4 Authorization header and any bearer token is accepted (keys
	// the sim issued are still verified).
	Keys map[string]string
	// APIKeys are the Bedrock API keys accepted as Authorization: Bearer.
	APIKeys []string
	// CredentialLifetime is how long the keys STS and the container
	// endpoint issue last, on the Server's clock. 0: 1h.
	CredentialLifetime time.Duration
	// ContainerToken is the Authorization header the container
	// credentials endpoint requires. "": any non-empty one.
	ContainerToken string
}

// Google configures the Gemini and Vertex AI paths' credentials and the
// Google credential services (the OAuth2 token endpoint and the metadata
// server).
type Google struct {
	// APIKeys are the Gemini API keys accepted (x-goog-api-key or ?key=).
	// None: any non-empty key.
	APIKeys []string
	// ServiceAccounts maps a service account's client_email to its RSA
	// public key (PEM: PKIX "PUBLIC KEY", PKCS #1 "RSA PUBLIC KEY" or a
	// "CERTIFICATE"). With any set, a JWT assertion must come from one of
	// them and be signed (RS256) by its key; with none, any issuer is
	// accepted and signatures are not checked.
	ServiceAccounts map[string]string
	// RefreshTokens are the refresh tokens accepted by the refresh_token
	// grant (authorized_user ADC files). None: any non-empty one.
	RefreshTokens []string
	// TokenLifetime is how long issued access tokens last, on the
	// Server's clock. 0: 1h.
	TokenLifetime time.Duration
	// Project is the project id the metadata server reports. "":
	// sim-project.
	Project string
	// Email is the service account the metadata server reports. "":
	// sim@sim-project.iam.gserviceaccount.com.
	Email string
}

// Azure configures the Azure OpenAI paths' credentials.
type Azure struct {
	// Keys are the api-key values accepted. None: any non-empty key.
	// Authorization: Bearer takes an access token the sim's token
	// endpoint issued instead (Entra ID).
	Keys []string
}

func (a *AWS) region() string             { return cmp.Or(a.Region, "us-east-1") }
func (a *AWS) lifetime() time.Duration    { return cmp.Or(a.CredentialLifetime, time.Hour) }
func (g *Google) lifetime() time.Duration { return cmp.Or(g.TokenLifetime, time.Hour) }
func (g *Google) project() string         { return cmp.Or(g.Project, "sim-project") }
func (g *Google) email() string {
	return cmp.Or(g.Email, "sim@"+g.project()+".iam.gserviceaccount.com")
}
func (a *AWS) openSigV4() bool { return len(a.Keys) == 0 && len(a.APIKeys) == 0 }
func keyAccepted(keys []string, k string) bool {
	return k != "" && (len(keys) == 0 || slices.Contains(keys, k))
}

// cloudProblems lists what is wrong with the clouds' settings; it
// returns the service accounts' parsed keys when nothing is.
func (c *Config) cloudProblems(add func(field, msg string)) map[string]*rsa.PublicKey {
	if c.AWS.CredentialLifetime < 0 {
		add("aws.credential_lifetime", "is "+c.AWS.CredentialLifetime.String()+", want 0 or more")
	}
	for id, secret := range c.AWS.Keys {
		switch {
		case id == "":
			add("aws.keys", "has an empty access key id")
		case secret == "":
			add("aws.keys."+id, "is empty, want the secret access key")
		}
	}
	for i, k := range c.AWS.APIKeys {
		if k == "" {
			add("aws.api_keys["+strconv.Itoa(i)+"]", "is empty, want an API key")
		}
	}
	if c.Google.TokenLifetime < 0 {
		add("google.token_lifetime", "is "+c.Google.TokenLifetime.String()+", want 0 or more")
	}
	for i, k := range c.Google.APIKeys {
		if k == "" {
			add("google.api_keys["+strconv.Itoa(i)+"]", "is empty, want an API key")
		}
	}
	for i, k := range c.Google.RefreshTokens {
		if k == "" {
			add("google.refresh_tokens["+strconv.Itoa(i)+"]", "is empty, want a refresh token")
		}
	}
	for i, k := range c.Azure.Keys {
		if k == "" {
			add("azure.keys["+strconv.Itoa(i)+"]", "is empty, want an api-key")
		}
	}
	var keys map[string]*rsa.PublicKey
	for email, p := range c.Google.ServiceAccounts {
		pub, msg := parsePublicKey(p)
		if msg != "" {
			add("google.service_accounts."+email, msg)
			continue
		}
		if keys == nil {
			keys = map[string]*rsa.PublicKey{}
		}
		keys[email] = pub
	}
	return keys
}

// parsePublicKey reads an RSA public key from PEM, or says what is wrong.
func parsePublicKey(p string) (*rsa.PublicKey, string) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, "want an RSA public key in PEM"
	}
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = cert.PublicKey
		}
	default:
		return nil, "is a PEM " + strconv.Quote(block.Type) + ", want PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE"
	}
	if err != nil {
		return nil, "cannot be read: " + err.Error()
	}
	pub, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, "is not an RSA key"
	}
	return pub, ""
}

// maxIssued bounds the credentials the sim remembers; past it, expired
// ones are forgotten first, then any.
const maxIssued = 1 << 16

// awsKey is an access key the sim issued.
type awsKey struct {
	secret, session string
	expires         time.Time
}

// issued are the credentials the sim's credential services handed out.
type issued struct {
	mu     sync.Mutex
	tokens map[string]time.Time // OAuth2 access token → expiry
	keys   map[string]awsKey    // access key id → key
}

// token issues an OAuth2 access token valid until exp.
func (is *issued) token(exp time.Time, now time.Time) string {
	t := "ya29.sim-" + randomHex(24)
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.tokens == nil {
		is.tokens = map[string]time.Time{}
	}
	if len(is.tokens) >= maxIssued {
		for k, e := range is.tokens {
			if !e.After(now) || len(is.tokens) >= maxIssued {
				delete(is.tokens, k)
			}
		}
	}
	is.tokens[t] = exp
	return t
}

// tokenValid reports whether t is a token the sim issued that has not
// expired at now.
func (is *issued) tokenValid(t string, now time.Time) bool {
	is.mu.Lock()
	exp, ok := is.tokens[t]
	is.mu.Unlock()
	return ok && now.Before(exp)
}

// key issues an AWS access key valid until exp.
func (is *issued) key(exp time.Time, now time.Time) (id string, k awsKey) {
	id = "ASIASIM" + randomHex(7)
	k = awsKey{secret: randomHex(20), session: "sim-session-" + randomHex(32), expires: exp}
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.keys == nil {
		is.keys = map[string]awsKey{}
	}
	if len(is.keys) >= maxIssued {
		for kid, e := range is.keys {
			if !e.expires.After(now) || len(is.keys) >= maxIssued {
				delete(is.keys, kid)
			}
		}
	}
	is.keys[id] = k
	return id, k
}

// lookupKey returns the key the sim issued under id.
func (is *issued) lookupKey(id string) (awsKey, bool) {
	is.mu.Lock()
	k, ok := is.keys[id]
	is.mu.Unlock()
	return k, ok
}

// randomHex returns n random bytes in hex, from crypto/rand: credentials
// are not drawn from the seeded source, so they cannot be guessed from
// the seed and do not shift the answers' draws.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
