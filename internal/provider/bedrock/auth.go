package bedrock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// SigningName is the service name in Bedrock's SigV4 credential scope.
const SigningName = "bedrock"

// credentialsFor returns the cached credentials provider of c: its
// Credentials, its static keys, or the SDK's default chain. Errors name
// the field and never carry a key.
func credentialsFor(ctx context.Context, c Config) (aws.CredentialsProvider, error) {
	static := c.AccessKeyID != "" || c.SecretAccessKey != "" || c.SessionToken != ""
	switch {
	case static && (c.AccessKeyID == "" || c.SecretAccessKey == ""):
		return nil, errors.New("bedrock: AccessKeyID and SecretAccessKey: set both, or neither")
	case static && c.Credentials != nil:
		return nil, errors.New("bedrock: Credentials and AccessKeyID: set one, not both")
	case static && c.Profile != "":
		return nil, errors.New("bedrock: Profile and AccessKeyID: set one, not both")
	case c.Credentials != nil:
		return cached(c.Credentials), nil
	case static:
		return cached(credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)), nil
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(c.Region), config.WithCredentialsCacheOptions(expiryWindow)}
	if c.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("bedrock: Profile %q: loading the AWS configuration: %w", c.Profile, err)
	}
	if cfg.Credentials == nil {
		return nil, errors.New("bedrock: Credentials: the AWS configuration names no credentials")
	}
	return cached(cfg.Credentials), nil
}

// cached wraps p in a credentials cache unless it is one: credentials are
// fetched once per lifetime, not per call, and renewed RefreshBefore they
// expire.
func cached(p aws.CredentialsProvider) aws.CredentialsProvider {
	if _, ok := p.(*aws.CredentialsCache); ok {
		return p
	}
	return aws.NewCredentialsCache(p, expiryWindow)
}

// RefreshBefore is how long before they expire cached credentials are
// renewed, so that no request is signed with credentials that expire
// while it travels.
const RefreshBefore = time.Minute

func expiryWindow(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = RefreshBefore }

// authorize signs req with SigV4 (service "bedrock", the region, the
// payload's SHA-256, the injected clock's time), or sets key as a Bedrock
// API key when it is not empty.
func (u *Upstream) authorize(ctx context.Context, req *http.Request, body []byte, key string) error {
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
	creds, err := u.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("bedrock: credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	if err := u.signer.SignHTTP(ctx, creds, req, string(hexSum[:]), SigningName, u.region, u.clk.Now()); err != nil {
		return fmt.Errorf("bedrock: signing: %w", err)
	}
	return nil
}
