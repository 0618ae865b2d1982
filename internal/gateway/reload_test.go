package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fuseboxhq/fusebox/breaker"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// reloadable starts a gateway whose configuration file is the text that
// set gives it; Reload and POST /fusebox/reload read it again.
func reloadable(t *testing.T, yaml string, ups ...*upstream) (srv *Server, gw *httptest.Server, set func(string)) {
	t.Helper()
	return reloadableWithLog(t, slog.New(slog.DiscardHandler), yaml, ups...)
}

// reloadableWithLog is reloadable with the gateway logging to log.
func reloadableWithLog(t *testing.T, log *slog.Logger, yaml string, ups ...*upstream) (srv *Server, gw *httptest.Server, set func(string)) {
	t.Helper()
	var mu sync.Mutex
	text := withUpstreams(yaml, ups...)
	load := func() (*config.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		return parse(text)
	}
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	srv, err = New(Options{Config: cfg, Load: load, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	gw = httptest.NewServer(srv.Handler())
	t.Cleanup(gw.Close)
	return srv, gw, func(y string) {
		mu.Lock()
		defer mu.Unlock()
		text = withUpstreams(y, ups...)
	}
}

// adminReload posts /fusebox/reload and returns the status and body.
func adminReload(t *testing.T, gw *httptest.Server) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, gw.URL+"/fusebox/reload", nil)
	req.Header.Set("Authorization", "Bearer adm")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const reloadBase = "admin_token: adm\n" + twoTargets

// A reload keeps the breaker of a target whose settings did not change,
// rebuilds the one that changed, and serves a new alias at once.
func TestReloadKeepsUnchangedBreakers(t *testing.T) {
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	srv, gw, set := reloadable(t, reloadBase, p, s)
	target := func(name string) *breaker.Breaker {
		for _, t := range srv.Router().Targets() {
			if t.Name == name {
				return t.Breaker()
			}
		}
		return nil
	}
	target("primary/gpt-4.1").ForceOpen()
	before := target("secondary/deepseek-chat")

	// The secondary gets another key; a new alias appears.
	set(strings.Replace(reloadBase, "keys: [sk1]", "keys: [sk1, sk2]", 1) + `
  - name: fast
    targets: [{provider: secondary, model: deepseek-chat}]
`)
	code, body := adminReload(t, gw)
	if code != 200 {
		t.Fatalf("reload: %d %s", code, body)
	}
	var res ReloadResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Kept) != "[primary/gpt-4.1]" || fmt.Sprint(res.Rebuilt) != "[secondary/deepseek-chat]" {
		t.Fatalf("reload result %s", body)
	}
	for _, empty := range []string{`"added":[]`, `"removed":[]`, `"warnings":[]`} {
		if !strings.Contains(body, empty) {
			t.Errorf("reload answer %s; want %s (an empty list, not null or missing)", body, empty)
		}
	}
	if b := target("primary/gpt-4.1"); b.State() != breaker.StateForcedOpen {
		t.Fatalf("the unchanged primary's breaker is %v after the reload, want forced open", b.State())
	}
	if target("secondary/deepseek-chat") == before {
		t.Fatal("the changed secondary kept its old breaker")
	}
	c := newClient(gw.URL)
	for _, model := range []string{"smart", "fast"} {
		got, err := c.Chat.Completions.New(t.Context(), params(model))
		if err != nil || text(got) != "hello from secondary" {
			t.Fatalf("%s after the reload: %q %v", model, text(got), err)
		}
	}
	if p.calls() != 0 {
		t.Fatalf("the forced-open primary was called %d times", p.calls())
	}
}

// A configuration that does not load is refused with file, line and field,
// and the old one goes on serving.
func TestReloadRefusesABadConfig(t *testing.T) {
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	srv, gw, set := reloadable(t, reloadBase, p, s)
	set(strings.Replace(reloadBase, "keys: [sk1]", "keys: [sk1], colour: blue", 1))
	code, body := adminReload(t, gw)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "fusebox.yaml:5") || !strings.Contains(body, "colour") ||
		!strings.Contains(body, "old one stays in force") {
		t.Fatalf("bad reload: %d %s", code, body)
	}
	set(strings.Replace(reloadBase, "provider: secondary", "provider: tertiary", 1))
	if _, err := srv.Reload(); err == nil || !strings.Contains(err.Error(), "tertiary") {
		t.Fatalf("reload with an unknown provider: %v", err)
	}
	c := newClient(gw.URL)
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "hello from primary" {
		t.Fatalf("after refused reloads: %q %v", text(got), err)
	}
	// Without the admin token there is no reload.
	resp, err := http.Post(gw.URL+"/fusebox/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("reload without the token: %d", resp.StatusCode)
	}
}

// Requests keep flowing while the configuration is reloaded again and
// again: none fails, streams that began under the old configuration end
// under it.
func TestReloadDropsNoRequest(t *testing.T) {
	p := newUpstream(t, streamOf([]string{"a", "b", "c"}, nil))
	s := newUpstream(t, chatOK("secondary"))
	srv, gw, set := reloadable(t, reloadBase, p, s)
	var failed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(gw.URL)
			for {
				select {
				case <-stop:
					return
				default:
				}
				st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
				var b strings.Builder
				for st.Next() {
					if ch := st.Current(); len(ch.Choices) > 0 {
						b.WriteString(ch.Choices[0].Delta.Content)
					}
				}
				if st.Err() != nil || b.String() != "abc" {
					failed.Add(1)
					t.Errorf("stream during reloads: %q %v", b.String(), st.Err())
				}
			}
		}()
	}
	for i := range 40 {
		// Alternate the breaker settings, so every other reload rebuilds
		// the targets under requests in flight.
		y := reloadBase
		if i%2 == 1 {
			y = strings.Replace(y, "consecutive: 3", "consecutive: 4", 1)
		}
		set(y)
		if _, err := srv.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d requests failed during reloads", failed.Load())
	}
}

// A client's spending carries over a reload that changes its budget, and
// the remaining budget is a gauge.
func TestReloadKeepsClientSpending(t *testing.T) {
	p := newUpstream(t, chatOK("primary")) // $0.00003 a call
	cfg := "clients:\n  - {name: web, key: kw, budget: {daily: 0.0001}}\n" + reloadBase
	_, gw, set := reloadable(t, cfg, p, newUpstream(t, chatOK("s")))
	c := newClient(gw.URL, option.WithAPIKey("kw"))
	small := params("smart")
	small.MaxTokens = openai.Int(3) // a reservation that fits the budget
	if _, err := c.Chat.Completions.New(t.Context(), small); err != nil {
		t.Fatal(err)
	}
	left := func() float64 {
		v, err := strconv.ParseFloat(series(t, gw.URL, `fusebox_client_budget_remaining_usd{client="web",period="daily"}`), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := left(); math.Abs(got-0.00007) > 1e-12 {
		t.Fatalf("budget left %v, want 7e-05", got)
	}
	set(strings.Replace(cfg, "daily: 0.0001", "daily: 0.00005", 1))
	if code, body := adminReload(t, gw); code != 200 {
		t.Fatalf("reload: %d %s", code, body)
	}
	if got := left(); math.Abs(got-0.00002) > 1e-12 {
		t.Fatalf("budget left after lowering it %v, want 2e-05 (the spend carried over)", got)
	}
	c.Chat.Completions.New(t.Context(), small)
	_, err := c.Chat.Completions.New(t.Context(), small)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || !strings.Contains(apiErr.Message, "daily budget of $0.00005") {
		t.Fatalf("over the lowered budget: %v", err)
	}
}

// series returns the value of one series from /metrics, "" if absent.
func series(t *testing.T, base, name string) string {
	t.Helper()
	for _, line := range strings.Split(scrape(t, base), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// A reload that removes a target removes its series from /metrics; those
// of the targets that stay are kept.
func TestReloadForgetsRemovedTargetsMetrics(t *testing.T) {
	p, s := newUpstream(t, chatOK("primary")), newUpstream(t, chatOK("secondary"))
	extra := reloadBase + `
  - name: other
    targets: [{provider: secondary, model: other-model}]
`
	_, gw, set := reloadable(t, extra, p, s)
	c := newClient(gw.URL)
	for _, model := range []string{"smart", "other"} {
		if _, err := c.Chat.Completions.New(t.Context(), params(model)); err != nil {
			t.Fatal(err)
		}
	}
	gone := `fusebox_upstream_attempts_total{target="secondary/other-model",verdict="success"} 1`
	kept := `fusebox_upstream_attempts_total{target="primary/gpt-4.1",verdict="success"} 1`
	if m := scrape(t, gw.URL); !strings.Contains(m, gone) || !strings.Contains(m, kept) {
		t.Fatalf("before the reload /metrics lacks a target:\n%s", m)
	}
	set(reloadBase)
	if code, body := adminReload(t, gw); code != 200 || !strings.Contains(body, `"removed":["secondary/other-model"]`) {
		t.Fatalf("reload: %d %s", code, body)
	}
	m := scrape(t, gw.URL)
	if strings.Contains(m, `target="secondary/other-model"`) || !strings.Contains(m, kept) {
		t.Fatalf("after the reload:\n%s", m)
	}
}
