package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

const corsConfig = `
cors: {origins: ["https://app.example.com"], headers: [x-trace]}
clients:
  - {name: web, key: key-web}
providers:
  up: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: smart
    targets: [{provider: up, model: m}]
`

func corsRequest(t *testing.T, method, url string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(`{"model":"smart","messages":[{"role":"user","content":"hi"}]}`))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// A preflight from an allowed origin is answered without a key, the same
// with a valid key, a wrong one or none (it never tells which); other
// origins, methods and headers are refused; the actual answer is readable
// by the page, a 401 included.
func TestCORS(t *testing.T) {
	up := newUpstream(t, chatOK("up"))
	_, gw := gateway(t, nil, corsConfig, up)
	url := gw.URL + "/v1/chat/completions"
	pre := func(origin, method, headers string, auth ...string) *http.Response {
		h := []string{"Origin", origin, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", headers}
		return corsRequest(t, http.MethodOptions, url, append(h, auth...)...)
	}
	var answers []string
	for _, auth := range [][]string{nil, {"Authorization", "Bearer key-web"}, {"Authorization", "Bearer wrong"}} {
		resp := pre("https://app.example.com", "POST", "authorization, content-type, x-stainless-os, x-trace", auth...)
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "x-stainless-os") || resp.Header.Get("Access-Control-Max-Age") != "600" {
			t.Errorf("preflight with %v: %d %v", auth, resp.StatusCode, resp.Header)
		}
		resp.Header.Del("Date")
		answers = append(answers, resp.Status+" "+strings.Join(resp.Header.Values("Access-Control-Allow-Headers"), ","))
	}
	if answers[0] != answers[1] || answers[1] != answers[2] {
		t.Errorf("preflights differ by key: %q", answers)
	}
	for _, tc := range [][3]string{
		{"https://evil.example.com", "POST", "authorization"},
		{"https://app.example.com.evil.com", "POST", "authorization"},
		{"null", "POST", "authorization"},
		{"https://app.example.com", "PUT", "authorization"},
		{"https://app.example.com", "POST", "x-not-allowed"},
	} {
		if resp := pre(tc[0], tc[1], tc[2]); resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight %v: %d, allow-origin %q; want 403 and none", tc, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	ok := corsRequest(t, http.MethodPost, url, "Origin", "https://app.example.com", "Authorization", "Bearer key-web", "Content-Type", "application/json")
	if ok.StatusCode != 200 || ok.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(ok.Header.Get("Access-Control-Expose-Headers"), "X-Fusebox-Target") {
		t.Errorf("the actual request: %d %v", ok.StatusCode, ok.Header)
	}
	denied := corsRequest(t, http.MethodPost, url, "Origin", "https://app.example.com", "Authorization", "Bearer wrong")
	if denied.StatusCode != 401 || denied.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("a wrong key from the page: %d, allow-origin %q; want a 401 the page can read", denied.StatusCode, denied.Header.Get("Access-Control-Allow-Origin"))
	}
	if other := corsRequest(t, http.MethodPost, url, "Origin", "https://evil.example.com", "Authorization", "Bearer key-web"); other.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("an answer to another origin is readable by it")
	}
	// CORS guards what a page may read, not who may call: the request from
	// another origin with a valid key is served (as curl's would be), and
	// its page cannot read the answer. Preflights reach nobody upstream.
	if up.calls() != 2 {
		t.Errorf("the upstream got %d calls; want the two requests with a valid key", up.calls())
	}
}

// Without cors, a preflight is not answered as one: nothing is allowed.
func TestNoCORSByDefault(t *testing.T) {
	up := newUpstream(t, chatOK("up"))
	_, gw := gateway(t, nil, strings.Replace(corsConfig, `cors: {origins: ["https://app.example.com"], headers: [x-trace]}`, "", 1), up)
	resp := corsRequest(t, http.MethodOptions, gw.URL+"/v1/chat/completions", "Origin", "https://app.example.com", "Access-Control-Request-Method", "POST")
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.StatusCode == 204 {
		t.Errorf("without cors: %d %v", resp.StatusCode, resp.Header)
	}
}
