package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request named for a client in its context is that client's, without
// its key: its model list applies, and it is logged as the client. A name
// the configuration does not know is a 401, and a key sent beside a name
// does not count: the name decides.
func TestWithClient(t *testing.T) {
	up := newUpstream(t, chatOK("p"))
	s, _ := gateway(t, nil, `
clients:
  - {name: web, key: kw, models: [m]}
  - {name: ops, key: ko}
providers:
  p: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: m
    targets: [{provider: p, model: x}]
  - name: other
    targets: [{provider: p, model: y}]
`, up)
	send := func(name, key, model string) int {
		r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		if name != "" {
			r = r.WithContext(WithClient(r.Context(), name))
		}
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		name, key, model string
		want             int
	}{
		{"web", "", "m", http.StatusOK},
		{"web", "", "other", http.StatusForbidden}, // web's model list
		{"ops", "", "other", http.StatusOK},
		{"nobody", "", "m", http.StatusUnauthorized},
		{"nobody", "ko", "m", http.StatusUnauthorized}, // a key beside a name does not count
		{"", "", "m", http.StatusUnauthorized},
		{"", "kw", "m", http.StatusOK},
	} {
		if got := send(c.name, c.key, c.model); got != c.want {
			t.Errorf("client %q key %q model %s: %d, want %d", c.name, c.key, c.model, got, c.want)
		}
	}
	r := httptest.NewRequest("GET", "/v1/batches", nil)
	r.Header.Set("Authorization", "Bearer ko")
	if name, ok := s.Identify(httptest.NewRecorder(), r); !ok || name != "ops" {
		t.Errorf("Identify = %q, %v, want ops", name, ok)
	}
	w := httptest.NewRecorder()
	if _, ok := s.Identify(w, httptest.NewRequest("GET", "/v1/batches", nil)); ok || w.Code != http.StatusUnauthorized {
		t.Errorf("Identify without a key: ok %v, %d", ok, w.Code)
	}
}
