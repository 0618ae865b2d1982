package gateway

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// A target that cannot be connected to is named with the cause, in the
// header that says what was passed over and in the 503 when nothing else
// answers: "connect: refused", not "connect" alone.
func TestFailedConnectNamesItsCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	up := newUpstream(t, chatOK("backup"))
	_, gw := start(t, Options{}, `
providers:
  dead: {type: openai, base_url: "http://`+dead+`/v1", keys: [k]}
  backup: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: chat
    targets: [{provider: dead, model: m}, {provider: backup, model: m}]
  - name: alone
    targets: [{provider: dead, model: m}]
`, up)
	post := func(model string) *http.Response {
		t.Helper()
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post("chat")
	if tried := resp.Header.Get("X-Fusebox-Tried"); resp.StatusCode != 200 || !strings.Contains(tried, "dead/m: outage (connect: refused)") {
		t.Errorf("status %d, x-fusebox-tried %q; want the refused connect named", resp.StatusCode, tried)
	}
	resp = post("alone")
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "connect: refused") {
		t.Errorf("status %d, body %s; want a 503 naming the refused connect", resp.StatusCode, body)
	}
}
