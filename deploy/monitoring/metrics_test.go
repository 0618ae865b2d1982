package monitoring_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// backendPrefix names the metrics a gateway exports only with state:
// redis://… (and, for the errors and fallbacks, only once Redis failed).
const backendPrefix = "fusebox_state_backend_"

// referencedMetrics returns the metric names the dashboard and the alert
// rules query, each with where it is used.
func referencedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	refs := map[string][]string{}
	for _, name := range dashboardMetrics(readDashboard(t)) {
		refs[name] = append(refs[name], "dashboard")
	}
	for alert, expr := range alertExprs(t) {
		for _, name := range metricNames(expr) {
			refs[name] = append(refs[name], alert)
		}
	}
	if len(refs) < 15 {
		t.Fatalf("found only %d metric names: %v", len(refs), slices.Sorted(maps.Keys(refs)))
	}
	return refs
}

// The ladder of the test gateways: primary always answers 503 (an outage),
// so the first request fails over to secondary and opens primary's
// breaker, and the next skips it. The client has a budget.
const ladder = `
clients:
  - {name: web, key: kw, budget: {daily: 10, monthly: 100}}
providers:
  primary: {type: openai, base_url: "%s/v1", keys: [pk1]}
  secondary: {type: openai, base_url: "%s/v1", keys: [sk1]}
models:
  - name: smart
    targets:
      - {provider: primary, model: gpt-4.1, price: {input: 2, output: 8}}
      - {provider: secondary, model: gpt-4.1-mini, price: {input: 0.4, output: 1.6}}
    breaker: {consecutive: 1, open: 1m}
    retry: {attempts: 1}
`

// upstreams starts the primary (503 to everything) and the secondary
// (answers, streamed when asked).
func upstreams(t *testing.T) (primary, secondary *httptest.Server) {
	primary = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	secondary = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1-mini",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],`+
				`"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}`,
			`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(primary.Close)
	t.Cleanup(secondary.Close)
	return primary, secondary
}

// startGateway starts an in-process gateway from the YAML config yml.
func startGateway(t *testing.T, yml string) string {
	t.Helper()
	cfg, err := config.Parse("fusebox.yaml", []byte(yml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	srv, err := gateway.New(gateway.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(srv.Close) // after the listener: cleanups run last first
	t.Cleanup(hs.Close)
	return hs.URL
}

// chat sends a chat request for the alias smart as the client web.
func chat(t *testing.T, base string, stream bool) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"smart","stream":%v,"messages":[{"role":"user","content":"hi"}]}`, stream)
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer kw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat (stream %v): %d %s", stream, resp.StatusCode, out)
	}
}

// exported scrapes base's /metrics and returns the metric families that
// have samples: a histogram's under its own name, not its _bucket, _sum
// and _count series.
func exported(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	types, samples := map[string]string{}, map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, typ, ok := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " "); ok && strings.HasPrefix(line, "# TYPE ") {
			types[name] = typ
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		samples[family(name, types)] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name := range samples {
		out[name] = types[name]
	}
	return out
}

// family is the metric family a sample belongs to: a histogram's or a
// summary's series carry a suffix.
func family(name string, types map[string]string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if ok && (types[base] == "histogram" || types[base] == "summary") {
			return base
		}
	}
	return name
}

// wantExported reports each referenced name that have is missing; a
// histogram's series (_bucket, _sum, _count) count as the histogram.
func wantExported(t *testing.T, refs map[string][]string, have map[string]string, which func(string) bool) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		if !which(name) {
			continue
		}
		if _, ok := have[family(name, have)]; ok {
			continue
		}
		t.Errorf("%s (used by %s) is not exported by the gateway", name, strings.Join(slices.Compact(slices.Sorted(slices.Values(refs[name]))), ", "))
	}
}

// TestReferencedMetricsAreExported starts a real gateway, sends it a
// request that fails over and a streamed one that skips the open
// breaker, and checks that every metric the dashboard and the alert rules
// query is on its /metrics. The state backend's metrics need state:
// redis://…: they are checked on a second gateway sharing a real Redis,
// which is then stopped so that its errors and fallbacks are counted.
func TestReferencedMetricsAreExported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gateways; skipped with -short")
	}
	refs := referencedMetrics(t)
	backend := func(name string) bool { return strings.HasPrefix(name, backendPrefix) }

	t.Run("memory", func(t *testing.T) {
		p, s := upstreams(t)
		base := startGateway(t, fmt.Sprintf(ladder, p.URL, s.URL))
		chat(t, base, false) // primary 503, failover, breaker opens
		chat(t, base, true)  // primary skipped, streamed from secondary
		wantExported(t, refs, exported(t, base), func(n string) bool { return !backend(n) })
	})

	t.Run("redis", func(t *testing.T) {
		rs := redistest.Start(t) // skips without redis-server, unless FUSEBOX_REQUIRE_REDIS=1
		p, s := upstreams(t)
		yml := "state: " + rs.URL() + "\nfleet: {sync: 10ms, timeout: 20ms}\n" + fmt.Sprintf(ladder, p.URL, s.URL)
		base := startGateway(t, yml)
		chat(t, base, false)
		rs.Stop()
		// With Redis gone the budget is reserved locally (a fallback) and
		// the sync loop fails (errors): wait for both to be counted.
		var have map[string]string
		sent := 0
		deadline := time.Now().Add(20 * time.Second)
		for {
			chat(t, base, false)
			sent++
			have = exported(t, base)
			if _, ok := have[backendPrefix+"errors_total"]; ok {
				if _, ok := have[backendPrefix+"fallbacks_total"]; ok {
					break
				}
			}
			if time.Now().After(deadline) {
				break // wantExported says what is missing
			}
			time.Sleep(20 * time.Millisecond) // Redis's loss is seen by the sync loop on its own timer
		}
		wantExported(t, refs, have, backend)
		t.Logf("%d requests sent after Redis stopped", sent)
	})
}
