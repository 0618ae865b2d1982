package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/router"
)

// identity is a fake Entra ID token endpoint. Its answers are set by the
// test; it keeps the forms it was sent.
type identity struct {
	mu     sync.Mutex
	forms  []url.Values
	paths  []string
	status int           // 0: 200
	answer string        // "": a token "tok-N" for an hour
	hold   chan struct{} // set: a request waits for it to close
	// arrived, with hold, hears of each request that waits.
	arrived chan struct{}
}

func (id *identity) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	id.mu.Lock()
	id.forms, id.paths = append(id.forms, r.PostForm), append(id.paths, r.URL.Path)
	n, status, answer, hold := len(id.forms), id.status, id.answer, id.hold
	id.mu.Unlock()
	if hold != nil {
		id.arrived <- struct{}{}
		<-hold
	}
	if answer == "" {
		answer = fmt.Sprintf(`{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"tok-%d"}`, n)
	}
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
	}
	io.WriteString(w, answer)
}

func (id *identity) set(status int, answer string) {
	id.mu.Lock()
	id.status, id.answer = status, answer
	id.mu.Unlock()
}

func (id *identity) requests() int {
	id.mu.Lock()
	defer id.mu.Unlock()
	return len(id.forms)
}

func (id *identity) form(i int) url.Values {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.forms[i]
}

type entraFixture struct {
	id  *identity
	rec *recorder
	clk *clocktest.Clock
	up  *Upstream
}

func newEntra(t *testing.T, e Entra) *entraFixture {
	f := &entraFixture{id: &identity{}, clk: clocktest.New(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))}
	idSrv := httptest.NewServer(f.id)
	t.Cleanup(idSrv.Close)
	var srv *httptest.Server
	f.rec, srv = newRecorder(t)
	e.AuthorityHost = idSrv.URL
	f.up = newUpstream(t, Config{Endpoint: srv.URL, Entra: &e, Clock: f.clk})
	return f
}

// send sends a chat call and returns the Authorization the resource saw.
func (f *entraFixture) send(t *testing.T) string {
	t.Helper()
	resp, err := f.up.Send(t.Context(), &router.Call{Path: "/chat/completions", Model: "d", Key: "api-key-unused", Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r, _ := f.rec.last(t)
	if r.Header.Get("Api-Key") != "" {
		t.Errorf("with Entra the key went too: %q", r.Header.Get("Api-Key"))
	}
	return r.Header.Get("Authorization")
}

// settle waits for a background refresh to end.
func (f *entraFixture) settle() {
	f.up.tokens.mu.Lock()
	done := f.up.tokens.fetching
	f.up.tokens.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Many calls at once share one token request; the token is the client
// credentials flow's, for the tenant and the Azure OpenAI scope.
func TestEntraOneTokenForManyCalls(t *testing.T) {
	f := newEntra(t, Entra{TenantID: "tenant-1", ClientID: "app-1", ClientSecret: "s3cr3t"})
	var wg sync.WaitGroup
	auths := make([]string, 32)
	for i := range auths {
		wg.Go(func() {
			resp, err := f.up.Send(context.Background(), &router.Call{Path: "/chat/completions", Model: "d", Body: []byte(`{}`)})
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			auths[i] = resp.Request.Header.Get("Authorization")
		})
	}
	wg.Wait()
	if n := f.id.requests(); n != 1 {
		t.Fatalf("%d token requests for %d calls; want 1", n, len(auths))
	}
	for _, a := range auths {
		if a != "Bearer tok-1" {
			t.Fatalf("Authorization %q; want Bearer tok-1", a)
		}
	}
	form := f.id.form(0)
	want := url.Values{"grant_type": {"client_credentials"}, "client_id": {"app-1"}, "client_secret": {"s3cr3t"},
		"scope": {DefaultScope}}
	for k, v := range want {
		if form.Get(k) != v[0] {
			t.Errorf("token request %s = %q; want %q", k, form.Get(k), v[0])
		}
	}
	if p := f.id.paths[0]; p != "/tenant-1/oauth2/v2.0/token" {
		t.Errorf("token endpoint path %s", p)
	}
	if f.send(t) != "Bearer tok-1" || f.id.requests() != 1 {
		t.Error("a later call did not reuse the token")
	}
}

// A token is refreshed before it expires, while it still serves; one that
// expired unrefreshed is replaced before a call goes.
func TestEntraRefreshesBeforeExpiry(t *testing.T) {
	f := newEntra(t, Entra{TenantID: "t", ClientID: "c", ClientSecret: "s"})
	if a := f.send(t); a != "Bearer tok-1" {
		t.Fatalf("first call: %q", a)
	}
	f.clk.Advance(50 * time.Minute) // within the token's life, before its refresh
	if a := f.send(t); a != "Bearer tok-1" || f.id.requests() != 1 {
		t.Fatalf("at 50 min: %q after %d token requests; want the first token, not refreshed", a, f.id.requests())
	}
	f.clk.Advance(5 * time.Minute) // 55 min: less than five minutes left
	if a := f.send(t); a != "Bearer tok-1" {
		t.Fatalf("at 55 min: %q; want the held token while the refresh runs", a)
	}
	f.settle()
	if a := f.send(t); a != "Bearer tok-2" || f.id.requests() != 2 {
		t.Fatalf("after the refresh: %q after %d token requests; want tok-2 after 2", a, f.id.requests())
	}
	f.clk.Advance(2 * time.Hour) // long expired: the call waits for a new one
	if a := f.send(t); a != "Bearer tok-3" {
		t.Fatalf("after expiry: %q; want tok-3", a)
	}
}

// A token endpoint that refuses gives an error that says who refused what,
// holds no secret, and sends nothing upstream; it is asked again after a
// rest, not by every call.
func TestEntraFailingTokenEndpoint(t *testing.T) {
	const secret = "very-s3cr3t"
	f := newEntra(t, Entra{TenantID: "t", ClientID: "app-1", ClientSecret: secret})
	f.id.set(http.StatusUnauthorized, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided: `+secret+`"}`)
	for range 3 {
		resp, err := f.up.Send(t.Context(), &router.Call{Path: "/chat/completions", Model: "d", Body: []byte(`{}`)})
		var te *TokenError
		if resp != nil || !errors.As(err, &te) || te.Status != 401 {
			t.Fatalf("%v, %v; want a TokenError with status 401", resp, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "invalid_client") || !strings.Contains(msg, "AADSTS7000215") || !strings.Contains(msg, "app-1") || !strings.Contains(msg, "/t/oauth2/v2.0/token") {
			t.Errorf("unclear: %s", msg)
		}
		if strings.Contains(msg, secret) {
			t.Fatalf("the error shows the secret: %s", msg)
		}
	}
	if n := f.id.requests(); n != 1 {
		t.Errorf("%d token requests within the rest; want 1", n)
	}
	if n := f.rec.count(); n != 0 {
		t.Fatalf("%d requests went upstream without a token", n)
	}
	if _, err := f.up.Probe(t.Context(), "k"); err == nil {
		t.Error("a probe went without a token")
	}
	f.id.set(0, "")
	f.clk.Advance(failRest)
	if a := f.send(t); a != "Bearer tok-2" {
		t.Fatalf("after the rest: %q", a)
	}
	// Garbage and a token-less answer are failures too.
	for _, answer := range []string{`{"token_type":"Bearer"}`, `<html>`} {
		f.id.set(0, answer)
		f.clk.Advance(3 * time.Hour)
		if _, err := f.up.Send(t.Context(), &router.Call{Path: "/chat/completions", Model: "d", Body: []byte(`{}`)}); err == nil {
			t.Errorf("a token answer of %s was used", answer)
		}
		f.clk.Advance(failRest)
	}
}

// A call whose context ends while the token is being fetched returns;
// the fetch serves the next call.
func TestEntraSlowTokenEndpoint(t *testing.T) {
	f := newEntra(t, Entra{TenantID: "t", ClientID: "c", ClientSecret: "s"})
	hold := make(chan struct{})
	f.id.mu.Lock()
	f.id.hold, f.id.arrived = hold, make(chan struct{}, 1)
	f.id.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-f.id.arrived // the token request is being held
		cancel()
	}()
	_, err := f.up.Send(ctx, &router.Call{Path: "/chat/completions", Model: "d", Body: []byte(`{}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v; want the call's cancellation", err)
	}
	close(hold)
	f.settle()
	if a := f.send(t); a != "Bearer tok-1" || f.id.requests() != 1 {
		t.Fatalf("%q after %d token requests", a, f.id.requests())
	}
}

// Workload identity: the federated token is the client assertion, read
// again for each token request as the platform rotates it.
func TestEntraWorkloadIdentity(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("jwt-1\n"), 0o600)
	f := newEntra(t, Entra{TenantID: "t", ClientID: "c", FederatedTokenFile: file, Scope: "api://x/.default"})
	if a := f.send(t); a != "Bearer tok-1" {
		t.Fatalf("%q", a)
	}
	os.WriteFile(file, []byte("jwt-2"), 0o600)
	f.clk.Advance(2 * time.Hour)
	if a := f.send(t); a != "Bearer tok-2" {
		t.Fatalf("%q", a)
	}
	for i, want := range []string{"jwt-1", "jwt-2"} {
		form := f.id.form(i)
		if form.Get("client_assertion") != want || form.Get("client_assertion_type") != assertionType ||
			form.Has("client_secret") || form.Get("scope") != "api://x/.default" {
			t.Errorf("token request %d: %v", i, form)
		}
	}
	os.Remove(file)
	f.clk.Advance(2 * time.Hour)
	_, err := f.up.Send(t.Context(), &router.Call{Path: "/chat/completions", Model: "d", Body: []byte(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "federated_token_file") {
		t.Fatalf("a missing token file: %v", err)
	}
}
