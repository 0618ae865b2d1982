package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

const dashboardToken = "adm-dash-7c1e"

// The live dashboard in a real browser: an operator sees every target with
// its breaker state, sees a breaker they force change without reloading, and
// a visitor without the admin token sees no data.
func TestDashboardInBrowser(t *testing.T) {
	exe := findBrowser(t)
	// The fake clock never moves, so the primary's breaker stays open (10 s
	// in twoTargets) however slowly the browser starts.
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	p, s := newUpstream(t, status(503, "server_error")), newUpstream(t, chatOK("secondary"))
	_, gw := gateway(t, clk, "admin_token: "+dashboardToken+"\n"+twoTargets, p, s)
	c := newClient(gw.URL)
	for i := range 5 {
		got, err := c.Chat.Completions.New(t.Context(), params("smart"))
		if err != nil || text(got) != "hello from secondary" {
			t.Fatalf("request %d: %q, %v", i, text(got), err)
		}
	}
	if p.calls() != 3 {
		t.Fatalf("primary got %d calls; want 3 before its breaker opened", p.calls())
	}

	tab := openBrowser(t, exe)
	if code := tab.navigate(gw.URL + "/dashboard#token=" + dashboardToken); code != http.StatusOK {
		t.Fatalf("dashboard answered %d; want 200", code)
	}
	tab.waitVisible(`#targets tr[data-target="primary/gpt-4.1"]`)
	if tab.evalBool(`location.href.includes("token") || history.length > 2`) {
		t.Error("the admin token is still in the address bar or the history")
	}
	tab.waitShows(map[string]string{"primary/gpt-4.1": "open", "secondary/deepseek-chat": "closed"}, 10*time.Second)
	rows := tab.rows()
	if got := rows["primary/gpt-4.1"]; len(got) != colCount || got[colNextProbe] != "10.00 s" || got[colFailed] != "3" {
		t.Errorf("primary row %q; want next probe 10.00 s and 3 failed", got)
	}
	if got := rows["secondary/deepseek-chat"]; len(got) != colCount || got[colSucceeded] != "5" {
		t.Errorf("secondary row %q; want 5 succeeded", got)
	}
	if got, want := tab.text("#models"), "smart (fallback): primary/gpt-4.1 → secondary/deepseek-chat"; got != want {
		t.Errorf("models line %q; want %q", got, want)
	}

	// A mark that a reload would wipe: the change must come from polling.
	tab.eval(`window.notReloaded = true`)
	forceBreaker(t, gw.URL, "secondary/deepseek-chat", "force-open")
	tab.waitShows(map[string]string{"primary/gpt-4.1": "open", "secondary/deepseek-chat": "forced-open"}, 5*time.Second)
	if !tab.evalBool(`window.notReloaded === true`) {
		t.Error("the page reloaded; want it to update in place")
	}

	// While the status cannot be read, the page says so and greys out the
	// figures it still shows; when it can again, both clear.
	tab.eval(`window.realFetch = window.fetch; window.fetch = () => Promise.reject(new Error("network down"))`)
	tab.waitTrue(`document.getElementById("sub").className === "sub err" && document.getElementById("targets").className === "stale" &&
		document.getElementById("sub").innerText.includes("network down")`, 5*time.Second)
	tab.eval(`window.fetch = window.realFetch`)
	tab.waitTrue(`document.getElementById("sub").className === "sub" && document.getElementById("targets").className === "" &&
		document.getElementById("sub").innerText.startsWith("live")`, 5*time.Second)
	tab.noExceptions()

	// A tab without the token (a new session) sees no data and is asked
	// for it; once typed in, the page is live.
	other := openBrowser(t, exe)
	for _, path := range []string{"/dashboard", "/dashboard?token=wrong"} {
		if code := other.navigate(gw.URL + path); code != http.StatusOK {
			t.Errorf("%s answered %d; want 200 (the page holds no data)", path, code)
		}
		other.waitTrue(`!document.getElementById("login").hidden`, 5*time.Second)
		body := other.text("body")
		if strings.Contains(body, "gpt-4.1") || strings.Contains(body, "deepseek-chat") || !strings.Contains(body, "admin token") {
			t.Errorf("%s shows %q; want the admin token asked for and no targets", path, body)
		}
	}
	other.eval(`document.getElementById("token").value = "` + dashboardToken + `"; document.getElementById("login").requestSubmit()`)
	other.waitVisible(`#targets tr[data-target="primary/gpt-4.1"]`)
	other.noExceptions()
}

// Columns of the dashboard's target table.
const (
	colNextProbe = 2
	colSucceeded = 7
	colFailed    = 8
	colCount     = 13
)

// findBrowser returns the path of a Chromium or Chrome binary. With none, it
// skips the test, unless FUSEBOX_REQUIRE_BROWSER=1 (as in CI) makes that a
// failure.
func findBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const msg = "no chromium, chromium-browser or google-chrome on PATH"
	if os.Getenv("FUSEBOX_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + ", and FUSEBOX_REQUIRE_BROWSER=1 requires the browser test")
	}
	t.Skip(msg + ": skipping the dashboard browser test (apt-get install chromium to run it)")
	return ""
}

// browserTab is one tab of a headless browser that the test owns.
type browserTab struct {
	t   *testing.T
	ctx context.Context

	// mu guards exceptions, which the tab's event loop appends to.
	mu         sync.Mutex
	exceptions []string
}

// openBrowser starts a headless browser with one tab. The test's cleanup
// stops the browser and waits until its process has exited and its profile
// directory is gone, so no goroutine or process outlives the test.
func openBrowser(t *testing.T, exe string) *browserTab {
	t.Helper()
	var outMu sync.Mutex
	var out strings.Builder
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.CombinedOutput(&lockedWriter{mu: &outMu, w: &out}))
	ctx, cancelTimeout := context.WithTimeout(context.Background(), 30*time.Second)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab := &browserTab{t: t}
	var cancelTab context.CancelFunc
	tab.ctx, cancelTab = chromedp.NewContext(allocCtx, chromedp.WithListener(tab.listen))
	t.Cleanup(func() {
		// Close the browser gracefully, so that it stops its own child
		// processes, and wait for its exit. If that fails, cancelTab kills
		// it and waits.
		if err := chromedp.Cancel(tab.ctx); err != nil {
			if ctx.Err() == nil {
				t.Errorf("closing the browser: %v", err)
			}
			cancelTab()
		}
		cancelAlloc() // waits for the output reader and the profile's removal
		cancelTimeout()
		if t.Failed() {
			t.Logf("browser output (last lines):\n%s", lastLines(logsString(&out, &outMu), 30))
		}
	})
	if err := chromedp.Do(tab.ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return tab
}

// listen records the page's uncaught exceptions.
func (b *browserTab) listen(ev any) {
	if ev, ok := ev.(*runtime.EventExceptionThrown); ok {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.exceptions = append(b.exceptions, (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
	}
}

func (b *browserTab) noExceptions() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.exceptions) > 0 {
		b.t.Errorf("the page threw: %q", b.exceptions)
	}
}

// navigate loads u and returns the HTTP status of the document.
func (b *browserTab) navigate(u string) int64 {
	b.t.Helper()
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(u))
	if err != nil {
		b.t.Fatalf("opening %s: %v", u, err)
	}
	return resp.Status
}

func (b *browserTab) waitVisible(css string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.WaitVisible(chromedp.CSS(css))); err != nil {
		b.t.Fatalf("waiting for %s to show: %v; the page shows %s", css, err, b.shows())
	}
}

// shownRowsJS returns the visible rows of the target table as the user reads
// them: target name → the text of each cell.
const shownRowsJS = `() => Object.fromEntries([...document.querySelectorAll("#targets tr")]
	.filter(tr => tr.checkVisibility())
	.map(tr => [tr.cells[0].innerText, [...tr.cells].map(td => td.innerText)]))`

// waitShows waits up to within for the page to show it is live and to show
// each target of want with its breaker state.
func (b *browserTab) waitShows(want map[string]string, within time.Duration) {
	b.t.Helper()
	pred := `(want) => {
		const rows = (` + shownRowsJS + `)();
		return document.getElementById("sub").innerText.startsWith("live") &&
			Object.entries(want).every(([name, state]) => rows[name] && rows[name][1] === state);
	}`
	_, err := chromedp.Run(b.ctx, chromedp.PollFunction[bool](pred,
		chromedp.WithPollingArgs(want), chromedp.WithPollingTimeout(within)))
	if errors.Is(err, chromedp.ErrPollingTimeout) {
		b.t.Fatalf("after %v the page shows %s; want the states %v", within, b.shows(), want)
	}
	if err != nil {
		b.t.Fatalf("waiting for the states %v: %v", want, err)
	}
}

// waitTrue waits up to within for the JavaScript expression js to be true.
func (b *browserTab) waitTrue(js string, within time.Duration) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.PollFunction[bool]("() => "+js, chromedp.WithPollingTimeout(within)))
	if err != nil {
		b.t.Fatalf("after %v, %s is not true (page: %s): %v", within, js, b.shows(), err)
	}
}

// rows returns the visible rows of the target table by target name.
func (b *browserTab) rows() map[string][]string {
	b.t.Helper()
	rows, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string][]string]("("+shownRowsJS+")()"))
	if err != nil {
		b.t.Fatalf("reading the table: %v", err)
	}
	return rows
}

// text returns the visible text of the first element css matches.
func (b *browserTab) text(css string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		b.t.Fatalf("reading %s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

// shows describes the page's visible text for a failure message.
func (b *browserTab) shows() string {
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		return fmt.Sprintf("nothing readable (%v)", err)
	}
	return strconv.Quote(strings.TrimSpace(s))
}

func (b *browserTab) eval(js string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Evaluate[chromedp.Void](js)); err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
}

func (b *browserTab) evalBool(js string) bool {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// forceBreaker runs a breaker action through the admin API.
func forceBreaker(t *testing.T, base, target, action string) {
	t.Helper()
	q := url.Values{"target": {target}, "action": {action}}
	req, _ := http.NewRequest(http.MethodPost, base+"/fusebox/breaker?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+dashboardToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", action, target, resp.StatusCode, b)
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
