package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Under /v1/messages every error is in Anthropic's shape, the client key
// may come in either header (a valid one wins over a stale one), and a bad
// body is described in JSON's words, not Go's.
func TestMessagesErrorsAreAnthropics(t *testing.T) {
	p := newUpstream(t, chatOK("primary"))
	_, gw := gateway(t, nil, "clients:\n  - {name: web, key: good-key}\n"+twoTargets, p, newUpstream(t, chatOK("s")))
	send := func(path string, header map[string]string, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", gw.URL+path, strings.NewReader(body))
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	anthropicShape := func(what string, m map[string]any, typ string) {
		t.Helper()
		e, _ := m["error"].(map[string]any)
		if m["type"] != "error" || e == nil || e["type"] != typ {
			t.Errorf("%s: %v; want Anthropic's error shape with type %s", what, m, typ)
		}
	}
	const ok = `{"model":"smart","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	code, m := send("/v1/messages", map[string]string{"x-api-key": "wrong"}, ok)
	if code != 401 {
		t.Errorf("bad key: %d", code)
	}
	anthropicShape("bad key", m, "authentication_error")
	code, m = send("/v1/messages/batches", map[string]string{"x-api-key": "good-key"}, ok)
	if code != 404 {
		t.Errorf("unknown path under /v1/messages: %d", code)
	}
	anthropicShape("unknown path", m, "not_found_error")
	if code, m = send("/v1/messages", map[string]string{"x-api-key": "stale", "Authorization": "Bearer good-key"}, ok); code != 200 {
		t.Errorf("a stale x-api-key beside a valid Bearer: %d %v; want 200", code, m)
	}
	code, m = send("/v1/messages", map[string]string{"x-api-key": "good-key"},
		`{"model":"smart","max_tokens":10,"messages":[{"role":"user","content":5}]}`)
	anthropicShape("bad body", m, "invalid_request_error")
	msg, _ := m["error"].(map[string]any)["message"].(string)
	if code != 400 || strings.Contains(msg, "interface") || strings.Contains(msg, "map[") || strings.Contains(msg, "[]") {
		t.Errorf("bad body: %d %q; want a 400 in JSON's words", code, msg)
	}
	// OpenAI's routes keep OpenAI's shape.
	if code, m = send("/v1/chat/completions", map[string]string{"Authorization": "Bearer wrong"}, ok); code != 401 || m["type"] == "error" {
		t.Errorf("OpenAI route, bad key: %d %v; want OpenAI's shape", code, m)
	}
}
