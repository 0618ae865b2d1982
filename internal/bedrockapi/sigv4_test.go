package bedrockapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/auth/bearer"
)

// apiError returns the error code and HTTP status the SDK read from a
// refusal.
func apiError(t *testing.T, err error) (string, int) {
	t.Helper()
	var ae smithy.APIError
	var re *awshttp.ResponseError
	if !errors.As(err, &ae) || !errors.As(err, &re) {
		t.Fatalf("err = %T %v, want an API error", err, err)
	}
	return ae.ErrorCode(), re.HTTPStatusCode()
}

func converseHi(c *bedrockruntime.Client) error {
	_, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: []types.Message{userText("Hi")},
	})
	return err
}

// VerifySigV4 accepts what the official client signs (every SDK test
// passes through it) and refuses, as Bedrock does, a wrong secret, an
// unknown key, a body changed after signing, and a request dated too far
// from the server's time either way.
func TestSDKSigV4Refusals(t *testing.T) {
	b, srv := newBedrock(t)
	if err := converseHi(client(srv, testKeyID, testSecret)); err != nil {
		t.Fatalf("the SDK's own signature: %v", err)
	}
	tamper := func(o *bedrockruntime.Options) {
		o.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			body, _ := io.ReadAll(r.Body)
			body = bytes.Replace(body, []byte(`"Hi"`), []byte(`"Yo"`), 1)
			r.Body = io.NopCloser(bytes.NewReader(body))
			return srv.Client().Transport.RoundTrip(r)
		})}
	}
	cases := []struct {
		name   string
		c      *bedrockruntime.Client
		now    func() time.Time
		code   string
		status int
	}{
		{"wrong secret", client(srv, testKeyID, "not-the-secret"), nil, TypeInvalidSignature, 403},
		{"unknown key", client(srv, "AKIDUNKNOWN", testSecret), nil, TypeUnrecognizedClient, 403},
		{"tampered body", client(srv, testKeyID, testSecret, tamper), nil, TypeInvalidSignature, 403},
		{"stale date", client(srv, testKeyID, testSecret), func() time.Time { return time.Now().Add(time.Hour) }, TypeInvalidSignature, 403},
		{"future date", client(srv, testKeyID, testSecret), func() time.Time { return time.Now().Add(-time.Hour) }, TypeInvalidSignature, 403},
	}
	for _, tc := range cases {
		b.now = tc.now
		code, status := apiError(t, converseHi(tc.c))
		if code != tc.code || status != tc.status {
			t.Errorf("%s: %s %d, want %s %d", tc.name, code, status, tc.code, tc.status)
		}
	}
	for _, e := range b.denied {
		if strings.Contains(e.Message, testSecret) || strings.Contains(e.Message, "not-the-secret") {
			t.Errorf("a refusal shows a secret: %q", e.Message)
		}
	}
	if !strings.HasPrefix(b.denied[3].Message, "Signature expired") || !strings.HasPrefix(b.denied[4].Message, "Signature not yet current") {
		t.Errorf("date refusals = %q, %q", b.denied[3].Message, b.denied[4].Message)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A Bedrock API key, sent by the official client as a bearer token, is
// checked by checkBearer: the right one passes, another is refused with
// the SDK's typed AccessDeniedException.
func TestSDKBearerToken(t *testing.T) {
	_, srv := newBedrockTLS(t)
	withToken := func(tok string) func(*bedrockruntime.Options) {
		return func(o *bedrockruntime.Options) {
			o.BearerAuthTokenProvider = bearer.TokenProviderFunc(func(context.Context) (bearer.Token, error) {
				return bearer.Token{Value: tok}, nil
			})
			o.AuthSchemePreference = []string{"httpBearerAuth"}
		}
	}
	if err := converseHi(client(srv, "", "", withToken(testToken))); err != nil {
		t.Fatalf("right token: %v", err)
	}
	var denied *types.AccessDeniedException
	if err := converseHi(client(srv, "", "", withToken("ABSKwrong"))); !errors.As(err, &denied) {
		t.Errorf("wrong token: %T %v", err, err)
	}
}

// signed returns a request signed by aws/signer/v4 at the time given.
func signed(t *testing.T, body string, at time.Time, creds aws.Credentials, region string) *http.Request {
	t.Helper()
	r := httptest.NewRequest("POST", "http://bedrock-runtime.us-east-1.amazonaws.com/model/"+
		"anthropic.claude-v2%3A1/converse", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256([]byte(body))
	if err := signer.SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), SigningService, region, at); err != nil {
		t.Fatal(err)
	}
	return r
}

// The rules of VerifySigV4 at fixed times: the five-minute bound both
// ways, session tokens, the credential's scope, and each malformed or
// missing part of the header.
func TestVerifySigV4(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	lookup := func(id string) (string, bool) { return testSecret, id == testKeyID }
	body := `{"messages":[]}`
	verify := func(r *http.Request, now time.Time) error {
		return VerifySigV4(r, []byte(body), testRegion, now, lookup, nil)
	}
	want := func(name string, err error, typ string, status int) {
		t.Helper()
		var e *Error
		switch {
		case typ == "" && err != nil:
			t.Errorf("%s: %v, want nil", name, err)
		case typ != "" && (!errors.As(err, &e) || e.Type != typ || e.Status != status):
			t.Errorf("%s: %v, want %s %d", name, err, typ, status)
		}
	}
	r := signed(t, body, at, creds, testRegion)
	want("fresh", verify(r, at), "", 0)
	want("4m59s later", verify(r, at.Add(4*time.Minute+59*time.Second)), "", 0)
	want("4m59s earlier", verify(r, at.Add(-4*time.Minute-59*time.Second)), "", 0)
	want("5m01s later", verify(r, at.Add(5*time.Minute+time.Second)), TypeInvalidSignature, 403)
	want("5m01s earlier", verify(r, at.Add(-5*time.Minute-time.Second)), TypeInvalidSignature, 403)
	if r.Header.Get("X-Amz-Date") != "20260304T050607Z" {
		t.Errorf("VerifySigV4 changed the request's X-Amz-Date: %q", r.Header.Get("X-Amz-Date"))
	}

	r = httptest.NewRequest("POST", "http://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse", strings.NewReader(body))
	r.ContentLength = -1 // sent chunked: no content-length to sign
	sum := sha256.Sum256([]byte(body))
	if err := signer.SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), SigningService, testRegion, at); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Header.Get("Authorization"), "content-length") {
		t.Fatal("the signer signed a length it did not have")
	}
	want("unsigned length", verify(r, at), "", 0)

	withToken := creds
	withToken.SessionToken = "session-token"
	r = signed(t, body, at, withToken, testRegion)
	want("session token", verify(r, at), "", 0)
	r.Header.Set("X-Amz-Security-Token", "another-token")
	want("changed session token", verify(r, at), TypeInvalidSignature, 403)

	r = signed(t, body, at, creds, testRegion)
	r.Header.Set("Content-Type", "text/plain")
	want("changed signed header", verify(r, at), TypeInvalidSignature, 403)
	r = signed(t, body, at, creds, testRegion)
	r.URL.RawPath, r.URL.Path = "/model/another/converse", "/model/another/converse"
	want("changed path", verify(r, at), TypeInvalidSignature, 403)
	r = signed(t, body, at, creds, testRegion)
	want("tampered body", VerifySigV4(r, []byte(`{"messages":[1]}`), testRegion, at, lookup, nil), TypeInvalidSignature, 403)
	want("other region", verify(signed(t, body, at, creds, "eu-west-1"), at), TypeInvalidSignature, 403)

	base := signed(t, body, at, creds, testRegion)
	auth := base.Header.Get("Authorization")
	header := func(auth, date string) *http.Request {
		r := base.Clone(context.Background())
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Amz-Date", date)
		if auth == "" {
			r.Header.Del("Authorization")
		}
		return r
	}
	date := base.Header.Get("X-Amz-Date")
	want("no header", verify(header("", date), at), TypeMissingAuthenticationToken, 403)
	want("other algorithm", verify(header(strings.Replace(auth, "AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256", 1), date), at), TypeIncompleteSignature, 400)
	want("no signature", verify(header(auth[:strings.Index(auth, ", Signature=")], date), at), TypeIncompleteSignature, 400)
	want("no credential", verify(header(strings.Replace(auth, "Credential=", "Cred=", 1), date), at), TypeIncompleteSignature, 400)
	want("short credential", verify(header(strings.Replace(auth, "/us-east-1/bedrock/", "/", 1), date), at), TypeIncompleteSignature, 400)
	want("other service", verify(header(strings.Replace(auth, "/bedrock/", "/s3/", 1), date), at), TypeInvalidSignature, 403)
	want("no date", verify(header(auth, ""), at), TypeIncompleteSignature, 400)
	want("bad date", verify(header(auth, "yesterday"), at), TypeIncompleteSignature, 400)
	want("date off scope", verify(header(auth, "20260305T050607Z"), at.Add(24*time.Hour)), TypeInvalidSignature, 403)
	want("unknown key", verify(header(strings.Replace(auth, testKeyID, "AKIDOTHER", 1), date), at), TypeUnrecognizedClient, 403)
	want("nil lookup", VerifySigV4(base, []byte(body), testRegion, at, nil, nil), TypeUnrecognizedClient, 403)
	want("bearer without checker", verify(header("Bearer "+testToken, date), at), TypeAccessDenied, 403)
	want("empty bearer", VerifySigV4(header("Bearer ", date), nil, testRegion, at, lookup, func(string) bool { return true }), TypeAccessDenied, 403)
	want("bearer", VerifySigV4(header("Bearer "+testToken, date), nil, testRegion, at, lookup, func(s string) bool { return s == testToken }), "", 0)
}
