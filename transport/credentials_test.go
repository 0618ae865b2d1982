package transport

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// callerCredentials are the secrets a caller's request carries, in every
// header a provider reads one from; one is spelled in lower case, as a
// caller writing the header map directly would.
var callerCredentials = map[string]string{
	"Authorization":       "Bearer sk-caller",
	"Proxy-Authorization": "Basic cHJveHk6c2VjcmV0",
	"X-Api-Key":           "caller-x-api-key",
	"Api-Key":             "caller-azure-key",
	"X-Goog-Api-Key":      "caller-google-key",
	"Cookie":              "session=caller",
}

// callerRequest is a chat request to base carrying every caller
// credential, a Google key in the query, a custom Host and a harmless
// header that must reach every endpoint.
func callerRequest(t *testing.T, base, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		base+"/v1/chat/completions?key=caller-query-key&api-version=2024-10-21", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range callerCredentials {
		req.Header.Set(k, v)
	}
	req.Header["authorization"] = []string{"Bearer sk-caller-lowercase"}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Trace", "t1")
	req.Host = "caller.internal"
	return req
}

// credentialsSeen lists the credentials r carried as "Header=value".
func credentialsSeen(r seen) []string {
	var got []string
	for _, k := range credentialHeaders {
		for _, v := range r.header.Values(k) {
			got = append(got, k+"="+v)
		}
	}
	return got
}

// wantCredentials checks that r carried exactly want (in credentialHeaders
// order), the harmless header, and no Google key in its query.
func wantCredentials(t *testing.T, who string, r seen, want ...string) {
	t.Helper()
	if got := credentialsSeen(r); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s received credentials %q; want %q", who, got, want)
	}
	if r.header.Get("X-Trace") != "t1" {
		t.Errorf("%s lost the caller's X-Trace header", who)
	}
	if strings.Contains(r.query, "key=") {
		t.Errorf("%s received the caller's query key: %q", who, r.query)
	}
	if !strings.Contains(r.query, "api-version=2024-10-21") {
		t.Errorf("%s lost the other query parameters: %q", who, r.query)
	}
}

func hostOf(t *testing.T, u *upstream) string {
	t.Helper()
	p, err := url.Parse(u.URL)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

// Failing over to another host (another port of 127.0.0.1, another origin)
// sends none of the caller's credentials to an endpoint without a key of
// its own, and only its own key to one with a key, on every attempt: the
// retry after a short throttle on the first, and the retry after an outage
// on the last. The caller's own host gets them all, as sent.
func TestCrossOriginFailoverStripsCallerCredentials(t *testing.T) {
	clk := fakeClock()
	home := newUpstream(t, "home", status(503, "server_error"))
	nokey := newUpstream(t, "nokey", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			status(429, "rate_limit_exceeded", "Retry-After", "1")(w, r, n)
			return
		}
		status(503, "server_error")(w, r, n)
	})
	withkey := newUpstream(t, "withkey", func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			status(503, "server_error")(w, r, n)
			return
		}
		chatOK("withkey")(w, r, n)
	})
	var ev events
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{
			{Name: "home", BaseURL: home.URL + "/v1"},
			{Name: "nokey", BaseURL: nokey.URL + "/v1"},
			// no Auth: its key goes in the style the caller uses, read
			// before the caller's credentials are removed
			{Name: "withkey", BaseURL: withkey.URL + "/v1", APIKey: "sk-own"},
		},
		Breaker:   breaker.Config{ConsecutiveFailures: 10},
		Clock:     clk,
		OnAttempt: ev.add,
	})
	done := make(chan error)
	go func() {
		resp, err := rt.RoundTrip(callerRequest(t, home.URL, `{"model":"gpt-4.1","messages":[]}`))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), "hello from withkey") {
				err = &url.Error{Op: "answer", URL: string(b)}
			}
		}
		done <- err
	}()
	for range 2 { // the throttle's 1 s, then the outage's backoff
		clk.WaitForTimers(1)
		clk.AdvanceToNext()
	}
	if err := <-done; err != nil {
		t.Fatalf("%v (events %v)", err, &ev)
	}
	if home.calls() != 1 || nokey.calls() != 2 || withkey.calls() != 2 {
		t.Fatalf("calls home %d, nokey %d, withkey %d; want 1, 2, 2 (events %v)",
			home.calls(), nokey.calls(), withkey.calls(), &ev)
	}

	h := home.req(0)
	if got := h.header.Values("Authorization"); len(got) != 2 {
		t.Errorf("home received Authorization %q; want the caller's two, unchanged", got)
	}
	for k, v := range callerCredentials {
		if !strings.Contains(strings.Join(h.header.Values(k), ","), v) {
			t.Errorf("home did not receive the caller's %s", k)
		}
	}
	if !strings.Contains(h.query, "key=caller-query-key") || h.host != "caller.internal" {
		t.Errorf("home received query %q, Host %q; want the caller's", h.query, h.host)
	}
	for i := range 2 {
		r := nokey.req(i)
		wantCredentials(t, "nokey attempt "+string(rune('1'+i)), r)
		if r.host != hostOf(t, nokey) {
			t.Errorf("nokey received Host %q", r.host)
		}
	}
	for i := range 2 {
		r := withkey.req(i)
		wantCredentials(t, "withkey attempt "+string(rune('1'+i)), r, "X-Api-Key=sk-own")
		if r.host != hostOf(t, withkey) {
			t.Errorf("withkey received Host %q", r.host)
		}
	}
}

// A streamed request through the official client fails over to other
// hosts the same way: the keyless one gets no credential of the caller's,
// the keyed one only its own.
func TestCrossOriginStreamStripsCallerCredentials(t *testing.T) {
	clk := fakeClock()
	home := newUpstream(t, "home", status(503, "server_error"))
	nokey := newUpstream(t, "nokey", status(500, "server_error"))
	withkey := newUpstream(t, "withkey", func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, []string{"Hel", "lo"}, nil)
	})
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{
			{Name: "home", BaseURL: home.URL + "/v1"},
			{Name: "nokey", BaseURL: nokey.URL + "/v1"},
			{Name: "withkey", BaseURL: withkey.URL + "/v1", APIKey: "sk-own", Auth: "bearer"},
		},
		FirstByte: time.Hour, Idle: time.Hour, // the guarded path
		Clock: clk,
	})
	client := openai.NewClient(
		option.WithBaseURL(home.URL+"/v1"),
		option.WithAPIKey("sk-caller"),
		option.WithHeader("X-Api-Key", "caller-x-api-key"),
		option.WithHeader("Cookie", "session=caller"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithMaxRetries(0),
	)
	s := client.Chat.Completions.NewStreaming(t.Context(), chatParams("gpt-4.1"))
	var b strings.Builder
	for s.Next() {
		if c := s.Current(); len(c.Choices) > 0 {
			b.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if err := s.Err(); err != nil || b.String() != "Hello" {
		t.Fatalf("stream %q, %v", b.String(), err)
	}
	s.Close()
	if got := credentialsSeen(home.req(0)); len(got) != 3 {
		t.Errorf("home received %q; want the caller's three credentials", got)
	}
	if got := credentialsSeen(nokey.req(0)); len(got) != 0 {
		t.Errorf("nokey received %q; want none", got)
	}
	if got := credentialsSeen(withkey.req(0)); strings.Join(got, " ") != "Authorization=Bearer sk-own" {
		t.Errorf("withkey received %q; want only its own key", got)
	}
}

// Endpoints on the caller's own origin (one server, two API roots) get the
// caller's credentials as before; the origin is compared with the default
// port made explicit.
func TestSameOriginFailoverKeepsCallerCredentials(t *testing.T) {
	srv := newUpstream(t, "srv", func(w http.ResponseWriter, r *http.Request, n int) {
		if strings.HasPrefix(r.URL.Path, "/a/") {
			status(503, "server_error")(w, r, n)
			return
		}
		chatOK("b")(w, r, n)
	})
	rt := mustNew(t, Config{Endpoints: []Endpoint{
		{Name: "a", BaseURL: srv.URL + "/a/v1"},
		{Name: "b", BaseURL: srv.URL + "/b/v1", Header: http.Header{"x-trace": {"from-b"}}},
	}})
	req := callerRequest(t, srv.URL+"/a", `{"model":"gpt-4.1","messages":[]}`)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if srv.calls() != 2 {
		t.Fatalf("%d calls; want 2", srv.calls())
	}
	a, b := credentialsSeen(srv.req(0)), credentialsSeen(srv.req(1))
	if len(a) != 7 || strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("same-origin endpoint b received %q; want what a received, %q", b, a)
	}
	// Endpoint.Header replaces the caller's header however either is spelled.
	if got := srv.req(1).header.Values("X-Trace"); strings.Join(got, ",") != "from-b" {
		t.Errorf("b received X-Trace %q; want only the endpoint's", got)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://api.openai.com/v1", "https://api.openai.com/other", true},
		{"https://API.openai.com", "https://api.openai.com:443", true},
		{"http://127.0.0.1:80/x", "HTTP://127.0.0.1", true},
		{"https://api.openai.com", "http://api.openai.com", false},
		{"https://api.openai.com", "https://api.openai.com:8443", false},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081", false},
		{"https://api.openai.com", "https://api.openai.com.evil.test", false},
		{"https://api.openai.com", "https://api.openai.com.", false}, // stricter is safe
		{"http://[::1]:80", "http://[::1]", true},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sameOrigin(a, b); got != tc.want {
			t.Errorf("sameOrigin(%s, %s) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestWithoutParam(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"key=s", ""},
		{"a=1&key=s&b=2", "a=1&b=2"},
		{"k%65y=s&a=1", "a=1"},
		{"key&a=1", "a=1"},
		{"monkey=1&keys=2&key=3", "monkey=1&keys=2"},
		{"a=key", "a=key"},
	} {
		if got := withoutParam(tc.in, "key"); got != tc.want {
			t.Errorf("withoutParam(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// An endpoint on another origin cannot use the caller's http.Client
// against the caller: a redirect it answers is not followed (the client
// would resend the caller's X-Api-Key, which net/http does not strip, to
// wherever it points), and its cookies are not stored under the caller's
// host.
func TestCrossOriginAnswerCannotSteerTheClient(t *testing.T) {
	attacker := newUpstream(t, "attacker", chatOK("attacker"))
	home := newUpstream(t, "home", status(503, "server_error"))

	t.Run("redirect", func(t *testing.T) {
		hostile := newUpstream(t, "hostile", func(w http.ResponseWriter, r *http.Request, n int) {
			http.Redirect(w, r, attacker.URL+"/steal", http.StatusTemporaryRedirect)
		})
		rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: home.URL + "/v1"}, {BaseURL: hostile.URL + "/v1"}},
			Retry: retryOnce})
		req := callerRequest(t, home.URL, `{"model":"gpt-4.1","messages":[]}`)
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if attacker.calls() != 0 {
			t.Fatalf("the client followed the redirect: attacker received %q", credentialsSeen(attacker.req(0)))
		}
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "" {
			t.Fatalf("answer %d, Location %q; want the 307 without its Location", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("cookie", func(t *testing.T) {
		hostile := newUpstream(t, "hostile", func(w http.ResponseWriter, r *http.Request, n int) {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "planted", Path: "/"})
			chatOK("hostile")(w, r, n)
		})
		rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: home.URL + "/v1"}, {BaseURL: hostile.URL + "/v1"}}})
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Transport: rt, Jar: jar}
		resp, err := client.Post(home.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"gpt-4.1","messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		u, _ := url.Parse(home.URL)
		if c := jar.Cookies(u); len(c) != 0 {
			t.Fatalf("cookies of another origin stored under the caller's host: %v", c)
		}
	})
}

// Requests a caller's code can build by hand do not crash the transport.
func TestOddRequests(t *testing.T) {
	up := newUpstream(t, "up", chatOK("up"))
	rt := mustNew(t, Config{Endpoints: []Endpoint{{BaseURL: up.URL + "/v1", APIKey: "sk-own"}}})

	u, _ := url.Parse(up.URL + "/v1/chat/completions")
	req := &http.Request{Method: http.MethodPost, URL: u, Body: io.NopCloser(strings.NewReader(`{"model":"m"}`)),
		ContentLength: int64(len(`{"model":"m"}`))} // a nil Header
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("nil Header: %v", err)
	}
	resp.Body.Close()
	if got := up.req(0).header.Get("Authorization"); got != "Bearer sk-own" {
		t.Errorf("nil Header: Authorization %q", got)
	}

	req, _ = http.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{}`))
	if _, err := rt.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "no Host") {
		t.Errorf("no host: err = %v", err)
	}

	// a caller's key spelled in lower case is found, kept, and sent once
	req, _ = http.NewRequest(http.MethodPost, up.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
	req.Header["idempotency-key"] = []string{"lower-1"}
	resp, err = rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := up.req(1).header.Values("Idempotency-Key"); strings.Join(got, ",") != "lower-1" {
		t.Errorf("Idempotency-Key %q; want the caller's lower-1 alone", got)
	}
}
