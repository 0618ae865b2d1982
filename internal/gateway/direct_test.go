package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// provider/model requests are priced at the provider's price; a client with
// a budget may not make them when the provider has none; and the targets
// they make are bounded, their metrics series going with them.
func TestDirectRequestsArePricedAndBounded(t *testing.T) {
	priced := newUpstream(t, chatOK("priced"))
	free := newUpstream(t, chatOK("free"))
	const cfg = `
clients:
  - {name: web, key: client-key, budget: {daily: 1000}}
providers:
  priced: {type: openai, base_url: "%s", keys: [pk], price: {input: 1000000, output: 0}}
  free: {type: openai, base_url: "%s", keys: [fk]}
models:
  - name: smart
    targets: [{provider: priced, model: m}]
`
	_, gw := gateway(t, nil, cfg, priced, free)
	post := func(model string) *http.Response {
		req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"`+model+`","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer client-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("priced/gpt-x"); resp.StatusCode != 200 || resp.Header.Get("X-Fusebox-Cost") != "3" {
		t.Errorf("priced direct request: %d, cost %q; want 200 at $3 (3 prompt tokens at $1 each)", resp.StatusCode, resp.Header.Get("X-Fusebox-Cost"))
	}
	if resp := post("free/gpt-x"); resp.StatusCode != http.StatusForbidden || free.calls() != 0 {
		t.Errorf("unpriced direct request from a budgeted client: %d, upstream called %d times; want 403 and none", resp.StatusCode, free.calls())
	}
	for i := range 300 {
		post("priced/m" + strconv.Itoa(i))
	}
	b := scrape(t, gw.URL)
	if n := strings.Count(b, `fusebox_breaker_state{state="closed",target="priced/`); n > 257 {
		t.Errorf("%d targets in /metrics after 300 made-up models; want at most the bound (256) and the alias's", n)
	}
	if strings.Contains(b, `target="priced/m0"`) {
		t.Error("the first made-up model's series are still in /metrics")
	}
}
