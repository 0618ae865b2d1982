package sim

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"
	"google.golang.org/genai"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// isolateAWS clears the environment the AWS SDK reads credentials from,
// so that only what a test sets is found.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_REGION", "us-east-1")
}

// The default credential chain finds a web identity (AWS_ROLE_ARN and
// a token file), assumes the role at the sim's STS and signs Bedrock calls
// with the keys it got. The sim's clock is two minutes behind and the
// keys last one, so to the SDK they have expired at once and it refreshes
// them before every call: each call is signed by a fresh key, and the sim
// takes each. A key past its lifetime on the sim's clock is refused.
func TestDefaultChainWebIdentity(t *testing.T) {
	isolateAWS(t)
	clk := clocktest.New(time.Now().Add(-2 * time.Minute))
	s, ts := start(t, Config{Clock: clk, AWS: AWS{Keys: bedrockKeys, CredentialLifetime: time.Minute}})
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("eyJ.web.identity"), 0o600)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/bedrock-caller")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile)
	t.Setenv("AWS_ENDPOINT_URL_STS", ts.URL)
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatalf("LoadDefaultConfig: %v", err)
	}
	c := bedrockClient(ts.URL, cfg.Credentials)
	for i := range 2 {
		if _, err := c.Converse(ctx, converseInput("m")); err != nil {
			t.Fatalf("Converse %d: %v", i, err)
		}
	}
	st := s.Stats()
	if st.Credentials != 2 || st.Outcomes[OutcomeOK] != 2 {
		t.Errorf("credentials %d, outcomes %v; want a key per call and 2 ok", st.Credentials, st.Outcomes)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || !strings.HasPrefix(creds.AccessKeyID, "ASIA") || creds.SessionToken == "" || !creds.CanExpire {
		t.Fatalf("Retrieve: %+v, %v; want temporary credentials", creds.AccessKeyID, err)
	}
	var ae smithy.APIError
	noSession := bedrockClient(ts.URL, credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, ""))
	if _, err = noSession.Converse(ctx, converseInput("m")); !errors.As(err, &ae) || ae.ErrorCode() != "UnrecognizedClientException" {
		t.Errorf("an issued key without its session token: %v, want UnrecognizedClientException", err)
	}
	clk.Advance(time.Minute)
	old := bedrockClient(ts.URL, credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken))
	clk.Set(time.Now()) // within SigV4's clock skew
	if _, err = old.Converse(ctx, converseInput("m")); !errors.As(err, &ae) || ae.ErrorCode() != "ExpiredTokenException" {
		t.Errorf("a key past its lifetime: %v, want ExpiredTokenException", err)
	}
}

// The chain's container provider reads AWS_CONTAINER_CREDENTIALS_FULL_URI
// with AWS_CONTAINER_AUTHORIZATION_TOKEN; the sim's endpoint issues keys
// the Bedrock paths accept, and refuses another token.
func TestDefaultChainContainer(t *testing.T) {
	isolateAWS(t)
	s, ts := start(t, Config{Clock: clocktest.New(time.Now()), AWS: AWS{Keys: bedrockKeys, ContainerToken: "task-token"}})
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", ts.URL+"/v2/credentials/task-1")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "task-token")
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatalf("LoadDefaultConfig: %v", err)
	}
	if _, err := bedrockClient(ts.URL, cfg.Credentials).Converse(ctx, converseInput("m")); err != nil {
		t.Fatalf("Converse with container credentials: %v", err)
	}
	if n := s.Stats().Credentials; n != 1 {
		t.Errorf("%d credentials issued, want 1", n)
	}
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "other")
	cfg, err = config.LoadDefaultConfig(ctx)
	if err == nil {
		_, err = cfg.Credentials.Retrieve(ctx)
	}
	if err == nil {
		t.Error("another container token got credentials")
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/v2/credentials/task-1", nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no Authorization: status %d, want 401", resp.StatusCode)
	}
}

// STS refuses what AssumeRoleWithWebIdentity lacks, in its XML shape.
func TestSTSRefusals(t *testing.T) {
	_, ts := start(t, Config{})
	for body, want := range map[string]string{
		"Action=GetCallerIdentity&Version=2011-06-15":                                     "InvalidAction",
		"Action=AssumeRoleWithWebIdentity&RoleArn=r&RoleSessionName=s&Version=2011-06-15": "ValidationError",
	} {
		resp, err := http.Post(ts.URL+"/", "application/x-www-form-urlencoded", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 4096)
		n, _ := resp.Body.Read(b)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b[:n]), "<Code>"+want+"</Code>") {
			t.Errorf("%s: %d %s, want 400 %s", body, resp.StatusCode, b[:n], want)
		}
	}
}

// With only ClientEnv's variables and a container token, the AWS default
// chain and the Bedrock client find the sim themselves, and the Gen AI
// client finds it for the Gemini API.
func TestClientEnv(t *testing.T) {
	isolateAWS(t)
	s, ts := start(t, Config{Clock: clocktest.New(time.Now())})
	for _, kv := range ClientEnv(ts.URL + "/") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "tok")
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} })
	if _, err := c.Converse(ctx, converseInput("m")); err != nil {
		t.Errorf("Bedrock from the environment: %v", err)
	}
	t.Setenv("GEMINI_API_KEY", "k")
	t.Setenv("GOOGLE_API_KEY", "")
	g, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil); err != nil {
		t.Errorf("Gemini from the environment: %v", err)
	}
	if st := s.Stats(); st.APIs["bedrock.converse"] != 1 || st.APIs["gemini.generate_content"] != 1 || st.Credentials != 1 {
		t.Errorf("apis %v credentials %d; want a call on each and one key issued", st.APIs, st.Credentials)
	}
}
