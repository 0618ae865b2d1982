package gateway

import (
	"net/http"
	"strings"
	"testing"
)

// A target's own keys are the ones sent to its upstream, not its
// provider's; the other targets of the provider keep the provider's.
func TestTargetKeysAreSent(t *testing.T) {
	p := newUpstream(t, chatOK("primary"))
	const cfg = `
providers:
  primary: {type: openai, base_url: "%s", keys: [provider-key]}
models:
  - name: own
    targets:
      - {provider: primary, model: gpt-4.1, keys: [target-key]}
  - name: shared
    targets:
      - {provider: primary, model: gpt-4.1-mini}
`
	srv, gw := gateway(t, nil, cfg, p)
	for _, model := range []string{"own", "shared"} {
		resp, err := http.Post(gw.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := p.reqs[0].Header.Get("Authorization"); got != "Bearer target-key" {
		t.Errorf("target with its own keys sent %q; want Bearer target-key", got)
	}
	if got := p.reqs[1].Header.Get("Authorization"); got != "Bearer provider-key" {
		t.Errorf("target without keys of its own sent %q; want Bearer provider-key", got)
	}
	ids := []string{}
	for _, k := range srv.Router().Keys() {
		ids = append(ids, k.ID)
	}
	if strings.Join(ids, " ") != "primary#0 primary/gpt-4.1#0" {
		t.Errorf("keys listed %v; want the provider's and the target's own, by ID", ids)
	}
}
