package gateway

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// requestLogGateway serves two clients over a primary that fails every
// request of client batch (503) and a secondary that answers, with the
// request log on. It returns the server and its URL after the traffic:
// web 3 ok on the primary, batch 2 failed over, one 400 from web.
func requestLogGateway(t *testing.T, content bool) (*Server, string) {
	t.Helper()
	p := newUpstream(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if strings.Contains(r.Header.Get("Authorization"), "pk") && strings.Contains(r.Header.Get("X-Test-Client"), "batch") {
			status(503, "overloaded_error")(w, r, n)
			return
		}
		chatOK("primary")(w, r, n)
	})
	s := newUpstream(t, chatOK("secondary"))
	extra := ""
	if content {
		extra = ", log_content: true"
	}
	cfg := "admin_token: " + testAdmin + "\nrequest_log: {path: " + filepath.Join(t.TempDir(), "requests.db") + extra + "}\n" +
		"server: {forward_headers: [x-test-client]}\n" +
		"clients:\n  - {name: web, key: web-key-5d1c8e2b7a}\n  - {name: batch, key: batch-key-90f3a6c4e1}\n" + twoTargets
	srv, gw := gateway(t, nil, cfg, p, s)
	send := func(key, who, body string, idem string) {
		req, _ := http.NewRequest("POST", gw.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Test-Client", who)
		req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	const prompt = `{"model":"smart","messages":[{"role":"user","content":"the secret plan"}]}`
	for range 3 {
		send("web-key-5d1c8e2b7a", "web", prompt, "")
	}
	send("batch-key-90f3a6c4e1", "batch", prompt, "idem-1")
	send("batch-key-90f3a6c4e1", "batch", prompt, "idem-2")
	send("web-key-5d1c8e2b7a", "web", `{"model":"smart"}`, "")
	srv.reqlog.Flush()
	return srv, gw.URL
}

type requestsPage struct {
	Requests []struct {
		Client, Alias, Outcome, Target, Tried string
		Status                                int
		IdempotencyKey                        string  `json:"idempotency_key"`
		TraceID                               string  `json:"trace_id"`
		RequestBody                           string  `json:"request_body"`
		LatencyMS                             float64 `json:"latency_ms"`
		TokensIn                              int     `json:"tokens_in"`
	}
	Next string
}

func getRequests(t *testing.T, base, query, token string) (int, requestsPage, string) {
	t.Helper()
	code, raw := adminRaw(t, "GET", base+"/fusebox/requests?"+query, token, "")
	var p requestsPage
	json.Unmarshal(raw, &p)
	return code, p, string(raw)
}

// "Which requests of client batch failed over in the last hour, on which
// target, why": the log answers it, and holds no prompt.
func TestRequestLogAnswersWhoFailedWhereAndWhy(t *testing.T) {
	_, base := requestLogGateway(t, false)
	code, p, raw := getRequests(t, base, "client=batch&since=1h", testAdmin)
	if code != 200 || len(p.Requests) != 2 {
		t.Fatalf("%d %s", code, raw)
	}
	for _, r := range p.Requests {
		if r.Status != 200 || r.Outcome != "ok" || r.Target != "secondary/deepseek-chat" || !strings.Contains(r.Tried, "primary/gpt-4.1") ||
			!strings.Contains(r.Tried, "503") || r.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || r.IdempotencyKey == "" || r.TokensIn == 0 {
			t.Fatalf("batch's request: %+v", r)
		}
	}
	if p.Requests[0].IdempotencyKey != "idem-2" {
		t.Errorf("not newest first: %+v", p.Requests)
	}
	if strings.Contains(raw, "secret plan") {
		t.Fatal("the log holds a prompt with log_content off")
	}
	if _, p, raw := getRequests(t, base, "client=web&outcome=error", testAdmin); len(p.Requests) != 1 || p.Requests[0].Status != 400 {
		t.Fatalf("web's errors: %s", raw)
	}
	if _, p, _ := getRequests(t, base, "alias=smart&limit=4", testAdmin); len(p.Requests) != 4 || p.Next == "" {
		t.Fatalf("a page of 4: %d, next %q", len(p.Requests), p.Next)
	} else if _, rest, _ := getRequests(t, base, "alias=smart&limit=4&cursor="+p.Next, testAdmin); len(rest.Requests) != 1 || rest.Next != "" { // the 400 never reached an alias
		t.Fatalf("the next page: %+v", rest)
	}
	if _, p, _ := getRequests(t, base, "until="+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), testAdmin); len(p.Requests) != 0 {
		t.Fatalf("until an hour ago: %d requests", len(p.Requests))
	}
	for q, want := range map[string]int{"": 401, "since=yesterday": 400, "limit=0": 400, "limit=5000": 400, "cursor=abc": 400} {
		tok := testAdmin
		if q == "" {
			tok = "web-key-5d1c8e2b7a" // a client key is not the admin token
		}
		if code, _, raw := getRequests(t, base, q, tok); code != want || !strings.Contains(raw, `"error"`) {
			t.Errorf("%q: %d %s, want %d", q, code, raw, want)
		}
	}
}

// With log_content on, the request's body is kept.
func TestRequestLogKeepsContentWhenOn(t *testing.T) {
	_, base := requestLogGateway(t, true)
	_, p, _ := getRequests(t, base, "client=batch", testAdmin)
	if len(p.Requests) == 0 || !strings.Contains(p.Requests[0].RequestBody, "secret plan") {
		t.Fatalf("%+v", p.Requests)
	}
}

// Without request_log, the endpoint says how to turn it on.
func TestRequestLogOff(t *testing.T) {
	p, s := newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s"))
	_, gw := gateway(t, nil, "admin_token: "+testAdmin+"\n"+twoTargets, p, s)
	if code, _, raw := getRequests(t, gw.URL, "", testAdmin); code != 404 || !strings.Contains(raw, "request_log.path") {
		t.Fatalf("%d %s", code, raw)
	}
}

// The request view in Chromium: it takes the token out of the URL, lists
// the requests newest first, and its filters narrow the list.
func TestRequestsPageInBrowser(t *testing.T) {
	exe := findBrowser(t)
	_, base := requestLogGateway(t, false)
	tab := openBrowser(t, exe)
	tab.viewport(1280, 800)
	if code := tab.navigate(base + "/dashboard/requests#token=" + testAdmin); code != http.StatusOK {
		t.Fatalf("the request view answered %d", code)
	}
	tab.waitTrue(`document.querySelectorAll("#rows tr").length === 6`, 10*time.Second)
	if tab.evalBool(`location.href.includes("token")`) {
		t.Error("the admin token is still in the address bar")
	}
	tab.eval(`document.getElementById("f-client").value = "batch"`)
	tab.focusAndEnter("#apply")
	tab.waitTrue(`document.querySelectorAll("#rows tr").length === 2`, 10*time.Second)
	cells := tab.evalStrings(`[...document.querySelectorAll("#rows tr")].map(tr => tr.children[1].innerText + "|" + tr.children[6].innerText)`)
	for _, c := range cells {
		if !strings.HasPrefix(c, "batch|") || !strings.Contains(c, "primary/gpt-4.1") {
			t.Errorf("row %q; want client batch with the primary tried", c)
		}
	}
	if !tab.evalBool(`location.search.includes("client=batch")`) {
		t.Error("the filters are not in the page's URL")
	}
	tab.eval(`document.getElementById("f-client").value = ""; document.getElementById("f-outcome").value = "error"`)
	tab.focusAndEnter("#apply")
	tab.waitTrue(`document.querySelectorAll("#rows tr").length === 1`, 10*time.Second)
	if got := tab.evalString(`document.querySelector("#rows tr").children[3].innerText`); got != "400" {
		t.Errorf("the error row's status %q, want 400", got)
	}
	tab.screenshot(artifacts(t), "requests-1280.png")
	tab.noExceptions()
}

// A reload that changes request_log says it waits for a restart, and the
// log goes on where it was.
func TestReloadKeepsTheRequestLog(t *testing.T) {
	p, s := newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s"))
	dir := t.TempDir()
	cfg := "admin_token: " + testAdmin + "\nrequest_log: {path: " + filepath.Join(dir, "a.db") + "}\n" + twoTargets
	next := "admin_token: " + testAdmin + "\nrequest_log: {path: " + filepath.Join(dir, "b.db") + "}\n" + twoTargets
	srv, gw := start(t, Options{Load: func() (*config.Config, error) { return parse(withUpstreams(next, p, s)) }}, cfg, p, s)
	res, err := srv.Reload()
	if err != nil || !strings.Contains(strings.Join(res.Warnings, ";"), "request_log take effect after a restart") {
		t.Fatalf("reload: %v %v", res.Warnings, err)
	}
	chat(t, gw.URL)
	srv.reqlog.Flush()
	if _, pg, _ := getRequests(t, gw.URL, "", testAdmin); len(pg.Requests) != 1 {
		t.Fatalf("%d requests after the reload, want 1", len(pg.Requests))
	}
}
