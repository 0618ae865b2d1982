package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The gateway reads a request the way its upstream will: a body whose
// routing fields a decoder could read otherwise (a duplicate after
// unescaping, a case variant) is refused with a 400 naming the field and
// never reaches an upstream; an escaped field name is read decoded.
func TestOneReadingOfTheRequest(t *testing.T) {
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if strings.Contains(r.Header.Get("Accept"), "event-stream") {
			streamOf([]string{"hi"}, nil)(w, r, n)
			return
		}
		chatOK("primary")(w, r, n)
	})
	cfg := "clients:\n  - {name: web, key: kw, models: [cheap]}\n" + strings.Replace(twoTargets, "name: smart", "name: cheap", 1)
	srv, gw := gateway(t, nil, cfg, p, newUpstream(t, chatOK("s")))
	send := func(path, body string) (int, string) {
		req, _ := http.NewRequest("POST", gw.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer kw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, body := range []string{
		`{"model":"cheap","mod\u0065l":"o1-pro","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"cheap","Model":"o1-pro","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"cheap","model":"o1-pro","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"cheap","stream":false,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		code, b := send("/v1/chat/completions", body)
		if code != 400 || !strings.Contains(b, `"param":"model"`) && !strings.Contains(b, `"param":"stream"`) {
			t.Errorf("%s: %d %s; want a 400 naming the field", body, code, b)
		}
	}
	if p.calls() != 0 {
		t.Fatalf("an ambiguous body reached the upstream %d times", p.calls())
	}
	// An escaped name is the field it decodes to: the gateway streams when
	// the upstream will, and no breaker hears of a mismatch.
	for range 3 {
		code, b := send("/v1/chat/completions", `{"model":"cheap","str\u0065am":true,"messages":[{"role":"user","content":"hi"}]}`)
		if code != 200 || !strings.Contains(b, "data: [DONE]") {
			t.Fatalf("escaped stream: %d %s; want a stream", code, b)
		}
	}
	if tot := settled(t, srv, "primary/gpt-4.1", 3); tot.Failed != 0 {
		t.Errorf("primary's breaker %+v; want no failure", tot)
	}
	// An escaped model value is the model it decodes to, allowed or not.
	if code, _ := send("/v1/chat/completions", `{"model":"ch\u0065ap","messages":[{"role":"user","content":"hi"}]}`); code != 200 {
		t.Errorf("escaped allowed model: %d; want 200", code)
	}
	if code, _ := send("/v1/chat/completions", `{"model":"o1-pr\u006f","messages":[{"role":"user","content":"hi"}]}`); code != 403 {
		t.Errorf("escaped model the key may not use: %d; want 403", code)
	}
	// The Messages API: the client's own body is read the same way, and
	// refused in Anthropic's shape.
	code, b := send("/v1/messages", `{"model":"cheap","mod\u0065l":"o1-pro","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`)
	if code != 400 || !strings.Contains(b, `"type":"error"`) || !strings.Contains(b, "model") {
		t.Errorf("Messages duplicate model: %d %s; want Anthropic's 400", code, b)
	}
}
