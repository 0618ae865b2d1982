package azure

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/internal/router"
)

func newUpstream(t *testing.T, c Config) *Upstream {
	t.Helper()
	up, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.CloseIdle)
	return up
}

func TestSendShapesTheRequest(t *testing.T) {
	rec, srv := newRecorder(t)
	up := newUpstream(t, Config{Endpoint: srv.URL, Header: http.Header{
		"X-Ms-Useragent": {"fusebox"},
		"Authorization":  {"Bearer not-this"}, // the key's header replaces any credential
	}})
	// What the client wrote goes byte for byte: escaped and duplicate
	// keys, and a large body.
	big := `{"model":"d","messages":[{"role":"user","content":"` + strings.Repeat("x", 8<<20) + `"}]}`
	for _, body := range []string{`{"model":"d","\u006dodel":"e","n":1,"n":1}`, big} {
		resp, err := up.Send(t.Context(), &router.Call{Path: "/chat/completions", Model: "d", Key: "k1", Body: []byte(body),
			Stream: true, IdempotencyKey: "idem-0", Header: http.Header{"Anthropic-Beta": {"x"}, "X-Client": {"c"}}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		r, got := rec.last(t)
		h := r.Header
		switch {
		case got != body:
			t.Errorf("the body changed: %d bytes sent, %d received", len(body), len(got))
		case h.Get("Api-Key") != "k1" || h.Get("Authorization") != "":
			t.Errorf("credentials: Api-Key %q Authorization %q", h.Get("Api-Key"), h.Get("Authorization"))
		case h.Get("Accept") != "text/event-stream" || h.Get("Content-Type") != "application/json":
			t.Errorf("Accept %q Content-Type %q", h.Get("Accept"), h.Get("Content-Type"))
		case h.Get("Idempotency-Key") != "idem-0" || h.Get("X-Ms-Useragent") != "fusebox" || h.Get("X-Client") != "c":
			t.Errorf("headers lost: %v", h)
		case h.Get("Anthropic-Beta") != "":
			t.Errorf("an Anthropic header went to Azure: %v", h)
		}
	}
	// A plain call asks for JSON.
	resp, err := up.Send(t.Context(), &router.Call{Path: "/embeddings", Model: "e", Key: "k2", Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r, _ := rec.last(t); r.Header.Get("Accept") != "application/json" || r.Header.Get("Api-Key") != "k2" {
		t.Errorf("Accept %q Api-Key %q", r.Header.Get("Accept"), r.Header.Get("Api-Key"))
	}
}

// A request the resource cannot serve is refused with the field that
// stops it, and nothing is sent.
func TestSendRefusesWithoutSending(t *testing.T) {
	rec, srv := newRecorder(t)
	up := newUpstream(t, Config{Endpoint: srv.URL, Unsupported: []string{"n", "logprobs"}})
	for _, tc := range []struct {
		path, model, body, param string
	}{
		{"/chat/completions", "d", `{"n":2}`, "n"},
		{"/chat/completions", "d", `{"\u006e":3}`, "n"},  // read as the upstream will
		{"/chat/completions", "d", `{"n":1,"n":2}`, "n"}, // the last duplicate is the one read
		{"/chat/completions", "d", `{"logprobs":true}`, "logprobs"},
		{"/responses", "d", `{}`, "model"},   // Responses not configured
		{"/completions", "d", `{}`, "model"}, // no such operation here
		{"/chat/completions", "", `{}`, "model"},
	} {
		resp, err := up.Send(t.Context(), &router.Call{Path: tc.path, Model: tc.model, Key: "k", Body: []byte(tc.body)})
		var un *router.Unservable
		if !errors.As(err, &un) || resp != nil || un.Param != tc.param {
			t.Errorf("%s %s: %v, %v; want a refusal naming %s", tc.path, tc.body, resp, err, tc.param)
		}
	}
	for _, body := range []string{`{"n":1,"logprobs":false}`, `{"n":null}`, `not json`} {
		resp, err := up.Send(t.Context(), &router.Call{Path: "/chat/completions", Model: "d", Key: "k", Body: []byte(body)})
		if err != nil {
			t.Errorf("%s: %v; want it sent", body, err)
			continue
		}
		resp.Body.Close()
	}
	if n := rec.count(); n != 3 {
		t.Errorf("%d requests reached the resource; want the 3 servable ones", n)
	}
}

// Azure's refusals reach aierr whole: a throttle's retry-after-ms and
// retry-after, a content filter's innererror.
func TestSendErrorPassThrough(t *testing.T) {
	const filtered = `{"error":{"message":"The response was filtered","type":null,"param":"prompt","code":"content_filter","status":400,` +
		`"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}}`
	const throttled = `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded the rate limit."}}`
	for _, tc := range []struct {
		status int
		header http.Header
		body   string
	}{
		{429, http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}, "X-Ratelimit-Remaining-Requests": {"0"}, "Apim-Request-Id": {"r-1"}}, throttled},
		{400, http.Header{"X-Ms-Region": {"Sweden Central"}}, filtered},
		{503, nil, "upstream connect error"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tc.header {
				w.Header()[k] = v
			}
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		up := newUpstream(t, Config{Endpoint: srv.URL})
		resp, err := up.Send(t.Context(), &router.Call{Path: "/chat/completions", Model: "d", Key: "k", Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !bytes.Equal(got, []byte(tc.body)) {
			t.Errorf("%d %s; want %d %s", resp.StatusCode, got, tc.status, tc.body)
		}
		for k, v := range tc.header {
			if resp.Header.Get(k) != v[0] {
				t.Errorf("%d: header %s = %q; want %q", tc.status, k, resp.Header.Get(k), v[0])
			}
		}
		srv.Close()
	}
}

func TestNewValidates(t *testing.T) {
	const secret = "s3cr3t-value"
	good := &Entra{TenantID: "t", ClientID: "c", ClientSecret: secret}
	for _, tc := range []struct {
		c     Config
		field string
	}{
		{Config{}, "endpoint is required"},
		{Config{Endpoint: "contoso.openai.azure.com"}, "endpoint"},
		{Config{Endpoint: "http://contoso.openai.azure.com"}, "endpoint"},
		{Config{Endpoint: "https://contoso.openai.azure.com?api-version=1"}, "endpoint"},
		{Config{Endpoint: "https://user:" + secret + "@contoso.openai.azure.com"}, "endpoint"},
		{Config{Endpoint: "https://c.openai.azure.com", Entra: &Entra{TenantID: "t", ClientID: "c", ClientSecret: "x",
			AuthorityHost: "https://u:" + secret + "@login.example.com"}}, "entra.authority_host"},
		{Config{Endpoint: "https://contoso.openai.azure.com", APIVersion: "2024-10-21&x=1"}, "api_version"},
		{Config{Endpoint: "https://contoso.openai.azure.com", Responses: true}, "responses"},
		{Config{Endpoint: "https://c.openai.azure.com", Entra: &Entra{ClientID: "c", ClientSecret: secret}}, "entra.tenant_id"},
		{Config{Endpoint: "https://c.openai.azure.com", Entra: &Entra{TenantID: "a/b", ClientID: "c", ClientSecret: secret}}, "entra.tenant_id"},
		{Config{Endpoint: "https://c.openai.azure.com", Entra: &Entra{TenantID: "t", ClientSecret: secret}}, "entra.client_id"},
		{Config{Endpoint: "https://c.openai.azure.com", Entra: &Entra{TenantID: "t", ClientID: "c"}}, "client_secret"},
		{Config{Endpoint: "https://c.openai.azure.com", Entra: &Entra{TenantID: "t", ClientID: "c", ClientSecret: secret, FederatedTokenFile: "/f"}}, "client_secret"},
		{Config{Endpoint: "https://c.openai.azure.com", Entra: &Entra{TenantID: "t", ClientID: "c", ClientSecret: secret, AuthorityHost: "http://login.example.com"}}, "entra.authority_host"},
	} {
		_, err := New(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: %v; want an error naming %s", tc.c, err, tc.field)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
	for _, c := range []Config{
		{Endpoint: "https://contoso.openai.azure.com/"},
		{Endpoint: "https://contoso.cognitiveservices.azure.com", APIVersion: V1, Responses: true},
		{Endpoint: "https://contoso.openai.azure.com", APIVersion: "2025-04-01-preview", Responses: true, Entra: good},
		{Endpoint: "http://127.0.0.1:8080"},
	} {
		if _, err := New(c); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// BenchmarkSend is the adapter's cost per call, the fake resource's
// included.
func BenchmarkSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	up, err := New(Config{Endpoint: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer up.CloseIdle()
	body := []byte(`{"model":"d","messages":[{"role":"user","content":"hi"}]}`)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := up.Send(context.Background(), &router.Call{Path: "/chat/completions", Model: "gpt-4o-prod", Key: "k1", Body: body})
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
