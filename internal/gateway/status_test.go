package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/openai/openai-go/v3/option"
)

// getStatus reads GET /fusebox/status with the admin token.
func getStatus(t *testing.T, base, token string) statusDoc {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/fusebox/status", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc statusDoc
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status: %d %v", resp.StatusCode, err)
	}
	return doc
}

func targetIn(t *testing.T, doc statusDoc, name string) statusTarget {
	t.Helper()
	for _, x := range doc.Targets {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("no target %s in %+v", name, doc.Targets)
	return statusTarget{}
}

// A throttled primary shows the provider's Retry-After honoured until
// when, its keys resting until then, and a timeline entry; the totals
// count the failovers it caused.
func TestStatusThrottle(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	p := newUpstream(t, status(429, "rate_limit_exceeded", "Retry-After", "20"))
	_, gw := gateway(t, clk, "admin_token: adm\n"+twoTargets, p, newUpstream(t, chatOK("secondary")))
	c := newClient(gw.URL)
	if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
		t.Fatal(err)
	}
	doc := getStatus(t, gw.URL, "adm")
	pt := targetIn(t, doc, "primary/gpt-4.1")
	want := clk.Now().Add(20 * time.Second)
	if pt.ThrottledUntil == nil || !pt.ThrottledUntil.Equal(want) || pt.State != "closed" {
		t.Fatalf("primary %+v; want closed and throttled until %v", pt, want)
	}
	if len(pt.Keys) != 2 || pt.Keys[0].State != "resting" || pt.Keys[0].Until == nil || !pt.Keys[0].Until.Equal(want) {
		t.Errorf("primary keys %+v; want both resting until %v", pt.Keys, want)
	}
	if len(doc.Timeline) == 0 || doc.Timeline[0].Kind != "throttle" || !strings.Contains(doc.Timeline[0].Reason, "20s") {
		t.Errorf("timeline %+v; want one throttle episode with its wait", doc.Timeline)
	}
	if doc.Totals.Requests != 1 || doc.Totals.Failovers != 1 || doc.Totals.Errors != 0 {
		t.Errorf("totals %+v; want 1 request, 1 failover, no error seen", doc.Totals)
	}
	clk.Advance(21 * time.Second)
	if pt := targetIn(t, getStatus(t, gw.URL, "adm"), "primary/gpt-4.1"); pt.ThrottledUntil != nil {
		t.Errorf("after the wait: throttled until %v; want none", pt.ThrottledUntil)
	}
}

// A key refused with a 401 is out of rotation with the answer that took
// it out; put back by an operator, it is in again, and the timeline says
// who did what.
func TestStatusKeyRefused(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	p := newUpstream(t, status(401, "invalid_api_key"))
	_, gw := gateway(t, clk, "admin_token: adm\n"+twoTargets, p, newUpstream(t, chatOK("secondary")))
	c := newClient(gw.URL)
	if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
		t.Fatal(err)
	}
	pt := targetIn(t, getStatus(t, gw.URL, "adm"), "primary/gpt-4.1")
	for _, k := range pt.Keys {
		if k.State != "refused" || !strings.Contains(k.Reason, "401") || k.Until == nil {
			t.Errorf("key %+v; want refused after the 401, with when it comes back", k)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/fusebox/key?id=primary%230&action=enable", nil)
	req.Header.Set("Authorization", "Bearer adm")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("enable: %v %v", resp, err)
	}
	resp.Body.Close()
	doc := getStatus(t, gw.URL, "adm")
	if k := targetIn(t, doc, "primary/gpt-4.1").Keys[0]; k.ID != "primary#0" || k.State != "in rotation" {
		t.Errorf("after enable: %+v", k)
	}
	if e := doc.Timeline[0]; e.Kind != "admin" || e.Key != "primary#0" || e.To != "in rotation" {
		t.Errorf("latest event %+v; want the operator's enable", e)
	}
}

// The status explains each rate with the breaker's own rules, lists the
// ladder in order, shows the provider's limits and every client's spend
// against its budget; after a sample, rates and percentiles are read from
// the counters of the last minute.
func TestStatusFigures(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	yaml := `admin_token: adm
clients:
  - {name: web, key: kw, budget: {daily: 1}}
  - {name: batch, key: kb}
providers:
  primary: {type: openai, base_url: "%s", keys: [pk1], limits: {rpm: 600, max_in_flight: 4}}
  secondary: {type: openai, base_url: "%s", keys: [sk1]}
models:
  - name: smart
    targets:
      - {provider: secondary, model: deepseek-chat, price: {input: 1, output: 1}}
      - {provider: primary, model: gpt-4.1, price: {input: 2, output: 8}}
    breaker: {window: 10s, min_calls: 20, failure_rate: 0.5, consecutive: 5, slow_call: 2s, slow_call_rate: 0.8}
`
	s, gw := gateway(t, clk, yaml, newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary")))
	c := newClient(gw.URL, option.WithAPIKey("kw"))
	for range 3 {
		if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(5 * time.Second) // a sample
	doc := getStatus(t, gw.URL, "adm")
	if len(doc.Models) != 1 || strings.Join(doc.Models[0].Targets, " ") != "secondary/deepseek-chat primary/gpt-4.1" ||
		doc.Targets[0].Name != "secondary/deepseek-chat" {
		t.Fatalf("ladder %+v; want the configuration's order", doc.Models)
	}
	sec := doc.Targets[0]
	if !strings.Contains(sec.FailureRateText, "the last 10s: 0 of 3") || !strings.Contains(sec.FailureRateText, "50% once 20 calls") ||
		!strings.Contains(sec.FailureRateText, "5 failures in a row") {
		t.Errorf("failure rate explained as %q", sec.FailureRateText)
	}
	if !strings.Contains(sec.SlowCallText, "slower than 2s") || !strings.Contains(sec.SlowCallText, "80%") {
		t.Errorf("slow-call rate explained as %q", sec.SlowCallText)
	}
	if sec.RequestsPerS != 0.6 || sec.TokensPerS != 3.6 || sec.CostUSD != 18e-6 || sec.P50MS == 0 || sec.StateText != "closed: calls pass" {
		t.Errorf("secondary figures %+v; want 3 calls and 18 tokens in 5 s, $0.000018, a latency", sec)
	}
	if pr := doc.Targets[1]; pr.RPM != 600 || pr.MaxInFlight != 4 || pr.InFlight != 0 {
		t.Errorf("primary limits %+v", pr)
	}
	if len(doc.Clients) != 2 || doc.Clients[0].Name != "web" || doc.Clients[0].SpentUSD != 18e-6 ||
		doc.Clients[0].DailyLimit == nil || *doc.Clients[0].DailyLimit != 1 || doc.Clients[0].MonthlyLimit != nil ||
		doc.Clients[1].DailyLimit != nil {
		t.Errorf("clients %+v; want web's spend against its daily budget, batch without one", doc.Clients)
	}
	if doc.Totals.Requests != 3 || doc.Totals.CostUSD != 18e-6 {
		t.Errorf("totals %+v", doc.Totals)
	}
	_ = s
}
