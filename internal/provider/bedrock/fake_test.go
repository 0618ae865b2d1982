package bedrock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"go.uber.org/goleak"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/router"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testRegion = "us-east-1"
	testKeyID  = "AKIDEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// received is one request the fake saw, after its signature checked out.
type received struct {
	Method, Path string // Path as sent, escaped
	Header       http.Header
	Body         []byte
}

// fakeBedrock is Bedrock's runtime API on 127.0.0.1: it verifies each
// request's SigV4 signature by signing it again with the secret of its
// access key and refuses a bad one as Bedrock does (403,
// InvalidSignatureException), or checks a bearer API key; then it answers
// with answer.
type fakeBedrock struct {
	t       *testing.T
	srv     *httptest.Server
	secrets map[string]string // access key ID → secret
	apiKey  string

	mu     sync.Mutex
	got    []received
	answer func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newFake(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body []byte)) *fakeBedrock {
	t.Helper()
	f := &fakeBedrock{t: t, secrets: map[string]string{testKeyID: testSecret}, apiKey: "bedrock-api-key-1", answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeBedrock) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if msg := f.verify(r, body); msg != "" {
		w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(map[string]string{"message": msg})
		return
	}
	f.mu.Lock()
	f.got = append(f.got, received{Method: r.Method, Path: r.RequestURI, Header: r.Header.Clone(), Body: body})
	answer := f.answer
	f.mu.Unlock()
	answer(w, r, body)
}

// verify returns why the request's authorization is refused, or "".
func (f *fakeBedrock) verify(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	if key, ok := strings.CutPrefix(auth, "Bearer "); ok {
		if key != f.apiKey {
			return "Invalid API Key format: Must start with pre-defined prefix"
		}
		return ""
	}
	keyID, signed, ok := parseAuthorization(auth)
	secret, known := f.secrets[keyID]
	if !ok || !known {
		return "The security token included in the request is invalid."
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "missing X-Amz-Date"
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.RequestURI, bytes.NewReader(body))
	for _, h := range signed {
		if h != "host" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	again.Header.Del("Authorization")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "bedrock", testRegion, at); err != nil {
		return err.Error()
	}
	if again.Header.Get("Authorization") != auth {
		return "The request signature we calculated does not match the signature you provided."
	}
	return ""
}

// parseAuthorization reads a SigV4 Authorization header's access key ID
// and signed header names.
func parseAuthorization(h string) (keyID string, signed []string, ok bool) {
	rest, ok := strings.CutPrefix(h, "AWS4-HMAC-SHA256 ")
	if !ok {
		return "", nil, false
	}
	for part := range strings.SplitSeq(rest, ", ") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "Credential":
			keyID, _, _ = strings.Cut(v, "/")
		case "SignedHeaders":
			signed = strings.Split(v, ";")
		}
	}
	return keyID, signed, keyID != "" && len(signed) > 0
}

func (f *fakeBedrock) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func (f *fakeBedrock) last(t *testing.T) received {
	t.Helper()
	got := f.requests()
	if len(got) == 0 {
		t.Fatal("the fake received no request")
	}
	return got[len(got)-1]
}

func (f *fakeBedrock) setAnswer(a func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.mu.Lock()
	f.answer = a
	f.mu.Unlock()
}

// newUpstream is an Upstream for the fake with static keys and a fake
// clock at the real time (signatures carry it, and the fake checks them).
func newUpstream(t *testing.T, f *fakeBedrock, mod ...func(*Config)) *Upstream {
	t.Helper()
	c := Config{
		Region: testRegion, BaseURL: f.srv.URL,
		AccessKeyID: testKeyID, SecretAccessKey: testSecret,
		Clock: clocktest.New(time.Now().UTC()),
	}
	for _, m := range mod {
		m(&c)
	}
	u, err := New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.CloseIdle)
	return u
}

// jsonAnswer answers status with body as JSON.
func jsonAnswer(status int, body string) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Requestid", "req-1")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// frame is one event-stream message to encode.
type frame struct {
	headers map[string]string
	payload string
}

func eventFrame(kind, payload string) frame {
	return frame{headers: map[string]string{":message-type": "event", ":event-type": kind, ":content-type": "application/json"}, payload: payload}
}

func exceptionFrame(kind, message string) frame {
	return frame{headers: map[string]string{":message-type": "exception", ":exception-type": kind, ":content-type": "application/json"},
		payload: `{"message":` + quote(message) + `}`}
}

// chunkFrame is an InvokeModelWithResponseStream chunk carrying one
// Anthropic event.
func chunkFrame(anthropicEvent string) frame {
	return eventFrame("chunk", `{"bytes":"`+base64.StdEncoding.EncodeToString([]byte(anthropicEvent))+`","p":"abcdefgh"}`)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// encode frames with the SDK's encoder.
func encode(t testing.TB, frames ...frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, f := range frames {
		var msg eventstream.Message
		for k, v := range f.headers {
			msg.Headers.Set(k, eventstream.StringValue(v))
		}
		msg.Payload = []byte(f.payload)
		if err := enc.Encode(&buf, msg); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// streamAnswer answers 200 with an event stream.
func streamAnswer(stream []byte) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("X-Amzn-Requestid", "req-1")
		w.Write(stream)
	}
}

func chatCall(body string, stream bool) *router.Call {
	return &router.Call{Path: "/chat/completions", Model: modelFrom(body), Body: []byte(body), Stream: stream}
}

func modelFrom(body string) string {
	var b struct{ Model string }
	json.Unmarshal([]byte(body), &b)
	return b.Model
}

func send(t *testing.T, u *Upstream, c *router.Call) *http.Response {
	t.Helper()
	resp, err := u.Send(context.Background(), c)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer: %v (read so far: %q)", err, b)
	}
	return string(b)
}
