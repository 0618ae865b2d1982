package transport

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fuseboxhq/fusebox/aierr"
)

// An endpoint that rewrites the model sends another body, so it gets
// another idempotency key: a server that keeps answers by key (the Fusebox
// gateway, or one provider behind two endpoints) would otherwise replay the
// first body's answer or refuse the mismatch. A caller's key is derived
// from, the same way every time; an endpoint sending the body unchanged
// keeps the key.
func TestRewrittenBodyGetsItsOwnKey(t *testing.T) {
	short := newUpstream(t, "short", status(400, "context_length_exceeded"))
	same := newUpstream(t, "same", status(503, "server_error"))
	long := newUpstream(t, "long", chatOK("long"))
	rt := mustNew(t, Config{
		Endpoints: []Endpoint{
			{BaseURL: short.URL + "/v1"},
			{BaseURL: same.URL + "/v1", Model: "gpt-4.1"}, // the request's own model: the body is unchanged
			{BaseURL: long.URL + "/v1", Model: "gpt-4.1-long"},
		},
		FailoverOn: []aierr.SubKind{aierr.ContextLength},
	})
	send := func(callerKey string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, short.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4.1","messages":[]}`))
		if callerKey != "" {
			req.Header.Set("Idempotency-Key", callerKey)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	key := func(u *upstream, i int) string { return u.req(i).header.Get("Idempotency-Key") }

	send("")
	if k1, k2, k3 := key(short, 0), key(same, 0), key(long, 0); k1 == "" || k1 != k2 || k3 == "" || k3 == k1 {
		t.Errorf("our keys: short %q, same %q, long %q; want one key for the caller's body, another for the rewritten one", k1, k2, k3)
	}

	send("caller-key-1")
	send("caller-key-1")
	if k1, k2 := key(short, 1), key(same, 1); k1 != "caller-key-1" || k2 != "caller-key-1" {
		t.Errorf("caller's key sent as %q, %q; want it as it is with its own body", k1, k2)
	}
	d1, d2 := key(long, 1), key(long, 2)
	if !strings.HasPrefix(d1, "caller-key-1-") || d1 != d2 {
		t.Errorf("rewritten body's keys %q, %q; want one key derived from the caller's, the same on a resend", d1, d2)
	}
	if bodyKey("caller-key-1", "gpt-4.1-long") == bodyKey("caller-key-1", "gpt-4.1-mini") {
		t.Error("two models, one derived key")
	}
}
