package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// isolateAWS points the SDK's default chain at nothing but what a test
// sets: no shared files, no instance metadata, no keys from the machine.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE":                        filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE":            filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":              "true",
		"AWS_ACCESS_KEY_ID":                      "",
		"AWS_SECRET_ACCESS_KEY":                  "",
		"AWS_SESSION_TOKEN":                      "",
		"AWS_PROFILE":                            "",
		"AWS_WEB_IDENTITY_TOKEN_FILE":            "",
		"AWS_ROLE_ARN":                           "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI":     "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN":      "",
		"AWS_ENDPOINT_URL":                       "",
		"AWS_ENDPOINT_URL_STS":                   "",
	} {
		t.Setenv(k, v)
	}
}

// chainUpstream is an Upstream for f whose credentials come from the
// SDK's default chain.
func chainUpstream(t *testing.T, f *fakeBedrock) *Upstream {
	t.Helper()
	u, err := New(context.Background(), Config{Region: testRegion, BaseURL: f.srv.URL, Clock: clocktest.New(time.Now().UTC())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	return u
}

func novaCall() string {
	return `{"model":"amazon.nova-pro-v1:0","messages":[{"role":"user","content":"Hi"}]}`
}

func mustOK(t *testing.T, u *Upstream) {
	t.Helper()
	resp := send(t, u, chatCall(novaCall(), false))
	if body := readBody(t, resp); resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
}

func keyIDOf(r received) string {
	id, _, _ := parseAuthorization(r.Header.Get("Authorization"))
	return id
}

func TestDefaultChainFromEnvironment(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
	f := newFake(t, jsonAnswer(200, converseOK))
	mustOK(t, chainUpstream(t, f))
}

func TestDefaultChainFromSharedProfile(t *testing.T) {
	isolateAWS(t)
	creds := filepath.Join(t.TempDir(), "credentials")
	os.WriteFile(creds, []byte("[team]\naws_access_key_id = "+testKeyID+"\naws_secret_access_key = "+testSecret+"\n"), 0o600)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	f := newFake(t, jsonAnswer(200, converseOK))
	u, err := New(context.Background(), Config{Region: testRegion, BaseURL: f.srv.URL, Profile: "team"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.CloseIdle()
	mustOK(t, u)
	if _, err := New(context.Background(), Config{Region: testRegion, Profile: "nobody"}); err == nil || !strings.Contains(err.Error(), "Profile") {
		t.Errorf("an unknown profile: %v; want an error naming Profile", err)
	}
}

func TestDefaultChainFromContainerCredentials(t *testing.T) {
	isolateAWS(t)
	var calls atomic.Int32
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") != "container-token" {
			w.WriteHeader(401)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{
			"AccessKeyId": "ASIACONTAINER", "SecretAccessKey": "container-secret", "Token": "container-session",
			"Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		})
	}))
	defer endpoint.Close()
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint.URL+"/v2/credentials/abc")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-token")
	f := newFake(t, jsonAnswer(200, converseOK))
	f.secrets["ASIACONTAINER"] = "container-secret"
	u := chainUpstream(t, f)
	for range 5 {
		mustOK(t, u)
	}
	r := f.last(t)
	if keyIDOf(r) != "ASIACONTAINER" || r.Header.Get("X-Amz-Security-Token") != "container-session" {
		t.Errorf("signed with %q, token %q", keyIDOf(r), r.Header.Get("X-Amz-Security-Token"))
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the container endpoint was asked %d times for 5 calls; want once", n)
	}
}

// fakeSTS answers AssumeRoleWithWebIdentity with new credentials per call:
// the first already expired (as if its lifetime ended mid-run), the later
// ones valid for an hour.
type fakeSTS struct {
	srv   *httptest.Server
	calls atomic.Int32
}

func newSTS(t *testing.T, f *fakeBedrock) *fakeSTS {
	s := &fakeSTS{}
	for i := 1; i <= 8; i++ {
		f.secrets[fmt.Sprintf("ASIASTS%d", i)] = fmt.Sprintf("sts-secret-%d", i)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("Action") != "AssumeRoleWithWebIdentity" || r.Form.Get("WebIdentityToken") != "the-jwt" ||
			r.Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/gateway" {
			w.WriteHeader(400)
			return
		}
		n := s.calls.Add(1)
		expires := time.Now().Add(time.Hour)
		if n == 1 {
			expires = time.Now().Add(-time.Minute)
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIASTS%d</AccessKeyId><SecretAccessKey>sts-secret-%d</SecretAccessKey>
<SessionToken>session-%d</SessionToken><Expiration>%s</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/gateway/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`,
			n, n, n, expires.UTC().Format(time.RFC3339))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func TestWebIdentityCredentialsAreCachedAndRefreshedWhenExpired(t *testing.T) {
	isolateAWS(t)
	f := newFake(t, jsonAnswer(200, converseOK))
	sts := newSTS(t, f)
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("the-jwt"), 0o600)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/gateway")
	t.Setenv("AWS_ROLE_SESSION_NAME", "s")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.srv.URL)
	u := chainUpstream(t, f)

	mustOK(t, u) // fetches credentials 1, which have expired by the next call
	if n := sts.calls.Load(); n != 1 {
		t.Fatalf("STS calls after one request: %d; want 1", n)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 {
		wg.Go(func() {
			resp, err := u.Send(context.Background(), chatCall(novaCall(), false))
			if err != nil {
				errs <- err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Errorf("status %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := sts.calls.Load(); n != 2 {
		t.Errorf("STS calls for 41 requests over two credential lifetimes: %d; want 2", n)
	}
	got := f.requests()
	if keyIDOf(got[0]) != "ASIASTS1" || got[0].Header.Get("X-Amz-Security-Token") != "session-1" {
		t.Errorf("first request signed with %q", keyIDOf(got[0]))
	}
	for _, r := range got[1:] {
		if keyIDOf(r) != "ASIASTS2" {
			t.Fatalf("a request after the refresh was signed with %q; want ASIASTS2", keyIDOf(r))
		}
	}
}

func TestCredentialErrorsCarryNoSecret(t *testing.T) {
	isolateAWS(t)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
	}))
	defer endpoint.Close()
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint.URL+"/creds")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "very-secret-container-token")
	f := newFake(t, jsonAnswer(200, converseOK))
	u := chainUpstream(t, f)
	_, err := u.Send(context.Background(), chatCall(novaCall(), false))
	if err == nil || !strings.Contains(err.Error(), "bedrock: credentials") {
		t.Fatalf("err = %v; want a credentials error", err)
	}
	if strings.Contains(err.Error(), "very-secret-container-token") {
		t.Errorf("the error carries the token: %v", err)
	}
	if len(f.requests()) != 0 {
		t.Error("a request went out unsigned")
	}
}

// countingProvider hands out credentials that expire at a set time.
type countingProvider struct {
	calls   atomic.Int32
	expires time.Time
}

func (p *countingProvider) Retrieve(context.Context) (aws.Credentials, error) {
	p.calls.Add(1)
	return aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret, CanExpire: true, Expires: p.expires}, nil
}

func TestCredentialsAreRenewedBeforeTheyExpire(t *testing.T) {
	f := newFake(t, jsonAnswer(200, converseOK))
	for _, tc := range []struct {
		expiresIn time.Duration
		fetches   int32
	}{
		{time.Hour, 1},                 // cached for all calls
		{RefreshBefore / 2, 3},         // inside the window: renewed on every call
		{RefreshBefore + time.Hour, 1}, // well outside it
	} {
		p := &countingProvider{expires: time.Now().Add(tc.expiresIn)}
		u := newUpstream(t, f, func(c *Config) { c.AccessKeyID, c.SecretAccessKey, c.Credentials = "", "", p })
		for range 3 {
			mustOK(t, u)
		}
		if n := p.calls.Load(); n != tc.fetches {
			t.Errorf("credentials expiring in %v: %d fetches for 3 calls; want %d", tc.expiresIn, n, tc.fetches)
		}
	}
}
