package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

const dashboardToken = "adm-dash-7c1e"

// isoClock is a dashboard time: 24-hour, with the date when not today's.
var isoClock = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}$`)

// dashYAML puts two simulated providers behind the alias smart; the
// primary's breaker opens after 3 failures in a row and stays open 30 s,
// longer than the test.
const dashYAML = `admin_token: ` + dashboardToken + `
clients:
  - {name: web, key: sk-client, budget: {daily: 5, monthly: 50}}
providers:
  primary: {type: openai, base_url: "%s/v1", keys: [pk1, pk2]}
  secondary: {type: openai, base_url: "%s/v1", keys: [sk1]}
models:
  - name: smart
    targets:
      - {provider: primary, model: gpt-4.1, price: {input: 2, output: 8}}
      - {provider: secondary, model: deepseek-chat, price: {input: 0.27, output: 1.1}}
    breaker: {consecutive: 3, open: 30s}
    retry: {attempts: 1}
`

// The live dashboard in a real browser, against simulated providers and
// live traffic: an operator sees the ladder in order; when the primary's
// provider starts failing, its breaker shows open within 2 s and its
// failure chart rises, pushed by the server's events without a reload;
// forcing it closed asks for confirmation (Cancel does nothing) and then
// shows it closed. Screenshots at 1280×800 and at 390 px wide are kept in
// $FUSEBOX_ARTIFACTS, or the test's temporary directory.
func TestDashboardInBrowser(t *testing.T) {
	exe := findBrowser(t)
	primary, secondary := simProvider(t, "primary"), simProvider(t, "secondary")
	cfg, err := parse(fmt.Sprintf(dashYAML, primary.URL, secondary.URL))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Config: cfg, DashboardInterval: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(s.Handler())
	t.Cleanup(s.Close)
	t.Cleanup(gw.Close)
	traffic(t, gw.URL)
	shots := artifacts(t)

	tab := openBrowser(t, exe)
	tab.viewport(1280, 800)
	if code := tab.navigate(gw.URL + "/dashboard#token=" + dashboardToken); code != http.StatusOK {
		t.Fatalf("dashboard answered %d; want 200", code)
	}
	tab.waitTrue(`document.getElementById("sub").innerText.startsWith("live")`, 10*time.Second)
	if tab.evalBool(`location.href.includes("token") || history.length > 2`) {
		t.Error("the admin token is still in the address bar or the history")
	}
	ladder := tab.evalStrings(`[...document.querySelectorAll('#ladders [data-model="smart"] li')].map(li => li.dataset.target)`)
	if strings.Join(ladder, " ") != "primary/gpt-4.1 secondary/deepseek-chat" {
		t.Errorf("ladder %q; want primary then secondary", ladder)
	}
	const primaryCard = `document.querySelector('article[data-target="primary/gpt-4.1"]')`
	tab.waitTrue(primaryCard+`.querySelector('svg[data-series="requests"]').dataset.total > 0`, 10*time.Second)
	if got := tab.evalString(primaryCard + `.querySelector(".state").innerText`); got != "● closed" {
		t.Errorf("primary shows %q; want the word closed beside its colour", got)
	}
	if got := tab.evalString(`document.querySelector('#clients tr[data-client="web"]').innerText`); !strings.Contains(got, "of $5") || !strings.Contains(got, "of $50") {
		t.Errorf("the client's row reads %q; want its spend against $5 a day and $50 a month", got)
	}
	tab.screenshot(shots, "dashboard-1280-healthy.png")
	if !tab.evalBool(`document.getElementById("banner").hidden`) {
		t.Error("a banner is shown while every target is closed")
	}
	// The charts spread the samples there are across their width: the
	// first seconds fill the chart rather than a sliver at its right end.
	if x := tab.evalString(primaryCard + `.querySelector('svg[data-series="requests"] rect').getAttribute("x")`); x != "0.00" {
		t.Errorf("the first request bar starts at x=%s; want the chart's left edge, 0.00", x)
	}
	if span := tab.evalString(primaryCard + `.querySelector('svg[data-series="requests"]').dataset.span`); span == "" || strings.Contains(span, "15 min") {
		t.Errorf("the chart says it spans %q; want the seconds the samples cover", span)
	}
	// Times are 24-hour and ISO-style.
	if got := tab.evalString(`document.getElementById("sub").innerText`); !isoClock.MatchString(strings.TrimPrefix(got, "live · ")) {
		t.Errorf("the status line reads %q; want live · HH:MM:SS", got)
	}

	// The outage: the primary's provider answers 503 from now on.
	simFaults(t, primary.URL, http.MethodPost, `{"kind":"error_storm","status":503}`)
	began := time.Now()
	tab.waitTrue(primaryCard+`.querySelector('.state').dataset.state === "open"`, 2*time.Second)
	t.Logf("the dashboard showed the breaker open %v after the outage began", time.Since(began).Round(time.Millisecond))
	if got := tab.evalString(primaryCard + `.querySelector(".state").innerText`); got != "■ open" {
		t.Errorf("open primary shows %q; want words, not only a colour", got)
	}
	tab.waitTrue(primaryCard+`.querySelector('svg[data-series="failures"]').dataset.total >= 3`, 5*time.Second)
	tab.waitTrue(`document.querySelector('#timeline tr[data-kind="breaker"]') !== null`, 5*time.Second)
	tab.screenshot(shots, "dashboard-1280-outage.png")

	// A banner names the target that is down; the card has one next-probe
	// time, counting down.
	tab.waitTrue(`!document.getElementById("banner").hidden && document.getElementById("banner").dataset.down === "primary/gpt-4.1"`, 5*time.Second)
	if got := tab.evalString(`document.getElementById("banner").innerText`); !strings.Contains(got, "1 target down: primary/gpt-4.1") || !strings.Contains(got, "next target") {
		t.Errorf("the banner reads %q", got)
	}
	if n := tab.evalString(`String((` + primaryCard + `.innerText.match(/next probe/g) || []).length)`); n != "1" {
		t.Errorf("the open primary's card says \"next probe\" %s times; want once", n)
	}
	for _, when := range tab.evalStrings(`[...document.querySelectorAll("#timeline tr td:first-child")].map(td => td.innerText)`) {
		if !isoClock.MatchString(when) {
			t.Errorf("a timeline time reads %q; want HH:MM:SS, 24-hour", when)
		}
	}
	// The filter: by target, by model, and only those in trouble.
	visible := func() string {
		return strings.Join(tab.evalStrings(`[...document.querySelectorAll("article.target:not([hidden])")].map(a => a.dataset.target)`), " ")
	}
	tab.eval(`{ const f = document.getElementById("filter"); f.value = "DeepSeek"; f.dispatchEvent(new Event("input")) }`)
	if got := visible(); got != "secondary/deepseek-chat" {
		t.Errorf("filtered by deepseek, the page shows %q", got)
	}
	if got := tab.text("#shown"); got != "1 of 2 targets shown" {
		t.Errorf("the filter says %q", got)
	}
	tab.eval(`{ const f = document.getElementById("filter"); f.value = "smart"; f.dispatchEvent(new Event("input")) }`)
	if got := visible(); got != "primary/gpt-4.1 secondary/deepseek-chat" {
		t.Errorf("filtered by the model smart, the page shows %q", got)
	}
	tab.eval(`{ const f = document.getElementById("filter"); f.value = ""; f.dispatchEvent(new Event("input")); document.getElementById("trouble").click() }`)
	if got := visible(); got != "primary/gpt-4.1" {
		t.Errorf("only targets not closed: the page shows %q", got)
	}
	tab.eval(`document.getElementById("trouble").click()`)

	// Force open, then Cancel: nothing happens.
	tab.eval(primaryCard + `.querySelector('button[data-action="force-open"]').click()`)
	tab.waitTrue(`document.getElementById("confirm").open`, 5*time.Second)
	tab.eval(`document.getElementById("confirm-cancel").click()`)
	tab.waitTrue(`!document.getElementById("confirm").open`, 5*time.Second)
	if st := s.Router().Targets()[0].Breaker().State().String(); st != "open" {
		t.Errorf("after Cancel the breaker is %s; want it left open", st)
	}

	// Force closed from the keyboard: focus the button, Enter, confirm.
	tab.focusAndEnter(`article[data-target="primary/gpt-4.1"] button[data-action="force-closed"]`)
	tab.waitTrue(`document.getElementById("confirm").open && document.getElementById("confirm-title").innerText.includes("Force closed")`, 5*time.Second)
	tab.screenshot(shots, "dashboard-1280-confirm.png")
	tab.eval(`document.getElementById("confirm-ok").click()`)
	tab.waitTrue(primaryCard+`.querySelector('.state').dataset.state === "forced-closed"`, 5*time.Second)
	if got := tab.evalString(primaryCard + `.querySelector(".state").innerText`); got != "● forced closed" {
		t.Errorf("forced-closed primary shows %q", got)
	}
	tab.viewport(390, 844)
	tab.waitTrue(`document.documentElement.scrollWidth <= 400`, 5*time.Second)
	tab.screenshot(shots, "dashboard-390.png")
	simFaults(t, primary.URL, http.MethodDelete, "")
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
	other.waitVisible(`article[data-target="primary/gpt-4.1"]`)
	other.noExceptions()
}

// simProvider serves a simulated provider on loopback for the test.
func simProvider(t *testing.T, name string) *httptest.Server {
	t.Helper()
	p, err := sim.New(sim.Config{Name: name, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(p)
	t.Cleanup(hs.Close)
	t.Cleanup(p.Close) // runs first: releases any call the fault holds
	return hs
}

// simFaults sets (POST) or clears (DELETE) a simulated provider's live
// faults through its control API.
func simFaults(t *testing.T, base, method, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/sim/faults", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("%s /sim/faults: %d %s", method, resp.StatusCode, b)
	}
}

// traffic sends a chat completion every 20 ms until the test ends.
func traffic(t *testing.T, base string) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		c := newClient(base)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				c.Chat.Completions.New(ctx, params("smart"))
				cancel()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// artifacts returns the directory screenshots go to: $FUSEBOX_ARTIFACTS,
// or the test's temporary directory.
func artifacts(t *testing.T) string {
	dir := os.Getenv("FUSEBOX_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

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

// waitTrue waits up to within for the JavaScript expression js to be true.
func (b *browserTab) waitTrue(js string, within time.Duration) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.PollFunction[bool]("() => "+js, chromedp.WithPollingTimeout(within)))
	if err != nil {
		b.t.Fatalf("after %v, %s is not true (page: %s): %v", within, js, b.shows(), err)
	}
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

// viewport sets the tab's window to w×h CSS pixels.
func (b *browserTab) viewport(w, h int64) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(w, h)); err != nil {
		b.t.Fatalf("viewport %d×%d: %v", w, h, err)
	}
}

// screenshot saves the whole page as dir/name.
func (b *browserTab) screenshot(dir, name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// focusAndEnter focuses the element css matches and presses Enter, as a
// keyboard user would.
func (b *browserTab) focusAndEnter(css string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Focus(chromedp.CSS(css)), chromedp.KeyEvent(kb.Enter)); err != nil {
		b.t.Fatalf("Enter on %s: %v", css, err)
	}
}

func (b *browserTab) evalString(js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (b *browserTab) evalStrings(js string) []string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (b *browserTab) evalBool(js string) bool {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
