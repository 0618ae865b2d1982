package bedrockapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigningService is the service name Bedrock's runtime requests are
// signed for.
const SigningService = "bedrock"

// MaxClockSkew is how far a request's X-Amz-Date may be from the server's
// time, either way, before its signature is refused.
const MaxClockSkew = 5 * time.Minute

const amzDateFormat = "20060102T150405Z"

// signer re-signs requests; it is safe for concurrent use and caches the
// derived signing keys.
var signer = v4.NewSigner()

// authHeader is a SigV4 Authorization header, parsed.
type authHeader struct {
	keyID, date, region, service, terminal string
	signedHeaders                          []string
	signature                              string
}

// VerifySigV4 checks a request's credentials as Bedrock would. A SigV4
// Authorization header is checked by re-signing a copy of the request
// with aws/signer/v4 (service "bedrock", region) at the request's
// X-Amz-Date, with the secret lookup returns for the header's access key
// id, the headers the header says it signed, body's SHA-256 and the
// X-Amz-Security-Token the request carries, and comparing the signatures
// in constant time. An "Authorization: Bearer …" header (a Bedrock API
// key) is checked by checkBearer instead (nil refuses every token).
//
// It returns nil, or an *Error as Bedrock sends it: 403
// MissingAuthenticationTokenException without an Authorization header; 400
// IncompleteSignatureException for a header that is not SigV4 or lacks a
// part (Credential, SignedHeaders, Signature, X-Amz-Date); 403
// UnrecognizedClientException for an unknown access key id; 403
// InvalidSignatureException for a signature that does not match, a
// credential scoped to another date, region or service, or a request
// dated more than MaxClockSkew before now ("Signature expired") or after
// it ("Signature not yet current"); 403 AccessDeniedException for a bearer
// token checkBearer refuses. No error says anything of the secret or the
// signature expected.
func VerifySigV4(r *http.Request, body []byte, region string, now time.Time,
	lookup func(accessKeyID string) (secret string, ok bool), checkBearer func(token string) bool) error {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return &Error{Status: http.StatusForbidden, Type: TypeMissingAuthenticationToken, Message: "Missing Authentication Token"}
	}
	if scheme, token, _ := strings.Cut(auth, " "); strings.EqualFold(scheme, "Bearer") {
		if token = strings.TrimSpace(token); token != "" && checkBearer != nil && checkBearer(token) {
			return nil
		}
		return &Error{Status: http.StatusForbidden, Type: TypeAccessDenied, Message: "Authentication failed: Please make sure your API Key is valid."}
	}
	a, err := parseAuth(auth)
	if err != nil {
		return err
	}
	at, err := requestTime(r, a)
	if err != nil {
		return err
	}
	if err := checkScope(a, region); err != nil {
		return err
	}
	ok := false
	var secret string
	if lookup != nil {
		secret, ok = lookup(a.keyID)
	}
	if !ok {
		return &Error{Status: http.StatusForbidden, Type: TypeUnrecognizedClient, Message: "The security token included in the request is invalid."}
	}
	if err := checkSkew(at, now); err != nil {
		return err
	}
	want, err := resign(r, body, a, region, at, aws.Credentials{
		AccessKeyID: a.keyID, SecretAccessKey: secret, SessionToken: r.Header.Get("X-Amz-Security-Token"),
	})
	if err != nil || !hmac.Equal([]byte(want), []byte(a.signature)) {
		return badSignature("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
	}
	return nil
}

func incomplete(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeIncompleteSignature, Message: msg}
}

func badSignature(msg string) *Error {
	return &Error{Status: http.StatusForbidden, Type: TypeInvalidSignature, Message: msg}
}

// parseAuth reads "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…,
// Signature=…".
func parseAuth(h string) (authHeader, error) {
	alg, rest, _ := strings.Cut(h, " ")
	if alg != "AWS4-HMAC-SHA256" {
		return authHeader{}, incomplete("Authorization header is not a SigV4 (AWS4-HMAC-SHA256) header.")
	}
	var a authHeader
	var cred, signed string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			a.signature = v
		}
	}
	for _, need := range [...]struct{ name, v string }{{"Credential", cred}, {"SignedHeaders", signed}, {"Signature", a.signature}} {
		if need.v == "" {
			return authHeader{}, incomplete("Authorization header requires '" + need.name + "' parameter.")
		}
	}
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[0] == "" {
		return authHeader{}, incomplete("Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term.")
	}
	a.keyID, a.date, a.region, a.service, a.terminal = parts[0], parts[1], parts[2], parts[3], parts[4]
	a.signedHeaders = strings.Split(signed, ";")
	return a, nil
}

// requestTime reads the request's X-Amz-Date, which the credential's date
// must match.
func requestTime(r *http.Request, a authHeader) (time.Time, error) {
	d := r.Header.Get("X-Amz-Date")
	if d == "" {
		return time.Time{}, incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	at, err := time.Parse(amzDateFormat, d)
	if err != nil {
		return time.Time{}, incomplete("X-Amz-Date must be in the ISO8601 basic format yyyyMMdd'T'HHmmss'Z'.")
	}
	if a.date != at.Format("20060102") {
		return time.Time{}, badSignature("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.")
	}
	return at, nil
}

func checkScope(a authHeader, region string) error {
	switch {
	case a.region != region:
		return badSignature("Credential should be scoped to a valid region.")
	case a.service != SigningService:
		return badSignature("Credential should be scoped to correct service: '" + SigningService + "'.")
	case a.terminal != "aws4_request":
		return badSignature("Credential should be scoped with a valid terminator: 'aws4_request'.")
	}
	return nil
}

func checkSkew(at, now time.Time) error {
	f := func(t time.Time) string { return t.UTC().Format(amzDateFormat) }
	switch {
	case now.Sub(at) > MaxClockSkew:
		return badSignature("Signature expired: " + f(at) + " is now earlier than " + f(now.Add(-MaxClockSkew)) + " (" + f(now) + " - 5 min.)")
	case at.Sub(now) > MaxClockSkew:
		return badSignature("Signature not yet current: " + f(at) + " is still later than " + f(now.Add(MaxClockSkew)) + " (" + f(now) + " + 5 min.)")
	}
	return nil
}

// resign signs a copy of r that holds only the headers a names, and
// returns its signature.
func resign(r *http.Request, body []byte, a authHeader, region string, at time.Time, creds aws.Credentials) (string, error) {
	cp := &http.Request{
		Method: r.Method,
		URL:    &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery},
		Host:   r.Host,
		Header: make(http.Header, len(a.signedHeaders)+2),
	}
	for _, name := range a.signedHeaders {
		switch name {
		case "host":
			continue
		case "content-length":
			// The signer signs the length of the body it is given.
			cp.ContentLength = int64(len(body))
			continue
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		if v, ok := r.Header[key]; ok {
			cp.Header[key] = slices.Clone(v)
		}
	}
	sum := sha256.Sum256(body)
	if err := signer.SignHTTP(context.Background(), creds, cp, hex.EncodeToString(sum[:]), SigningService, region, at); err != nil {
		return "", err
	}
	_, sig, ok := strings.Cut(cp.Header.Get("Authorization"), "Signature=")
	if !ok {
		return "", errSigned
	}
	return sig, nil
}

// errSigned is a re-signed request without a signature; it does not happen.
var errSigned = badSignature("the request could not be re-signed")
