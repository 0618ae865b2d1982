package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/openai/openai-go/v3/option"
)

// counting answers chat completions numbering its answers, so a cached
// answer is recognisable.
func counting(w http.ResponseWriter, r *http.Request, n int) {
	if r.Header.Get("Accept") == "text/event-stream" {
		streamOf([]string{"answer ", fmt.Sprint(n)}, nil)(w, r, n)
		return
	}
	chatOK(fmt.Sprint("answer ", n))(w, r, n)
}

const cachedModel = `
clients:
  - {name: alice, key: key-alice}
  - {name: bob, key: key-bob}
providers:
  up: {type: openai, base_url: "%s", keys: [k]}
models:
  - name: smart
    targets: [{provider: up, model: m}]
    breaker: {consecutive: 1, open: 1h}
    retry: {attempts: 1}
    cache: {ttl: 10m, stale_for: 1h, scope: %s}
    degraded: {content: "Busy right now, please try again shortly."}
  - name: nocache
    targets: [{provider: up, model: m}]
`

func cachedGateway(t *testing.T, clk *clocktest.Clock, scope string, up *upstream) string {
	t.Helper()
	_, gw := start(t, Options{Clock: clockOf(clk)}, fmt.Sprintf(cachedModel, up.URL+"/v1", scope))
	return gw.URL
}

func ask(t *testing.T, base, key, model string, opts ...option.RequestOption) (string, string) {
	t.Helper()
	var resp *http.Response
	c := newClient(base, append([]option.RequestOption{option.WithAPIKey(key), option.WithResponseInto(&resp)}, opts...)...)
	got, err := c.Chat.Completions.New(t.Context(), params(model))
	if err != nil {
		t.Fatalf("%s: %v", model, err)
	}
	return text(got), resp.Header.Get("X-Fusebox-Cache")
}

func TestCacheHitMissExpiry(t *testing.T) {
	clk := clocktest.New(time.Time{})
	up := newUpstream(t, counting)
	base := cachedGateway(t, clk, "client", up)
	steps := []struct {
		advance    time.Duration
		want, mark string
	}{
		{0, "hello from answer 1", "miss"},
		{time.Minute, "hello from answer 1", "hit"},
		{9*time.Minute - 1, "hello from answer 1", "hit"},
		{1, "hello from answer 2", "miss"}, // 10 min: expired
		{0, "hello from answer 2", "hit"},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		got, mark := ask(t, base, "key-alice", "smart")
		if got != s.want || mark != s.mark {
			t.Fatalf("step %d: %q (%s); want %q (%s)", i, got, mark, s.want, s.mark)
		}
	}
	if got, mark := ask(t, base, "key-alice", "nocache"); got != "hello from answer 3" || mark != "" {
		t.Fatalf("an alias without a cache: %q %q", got, mark)
	}
}

func TestCacheScopeAndBypass(t *testing.T) {
	up := newUpstream(t, counting)
	base := cachedGateway(t, nil, "client", up)
	ask(t, base, "key-alice", "smart")
	if got, mark := ask(t, base, "key-bob", "smart"); got != "hello from answer 2" || mark != "miss" {
		t.Fatalf("client scope shared alice's answer with bob: %q %s", got, mark)
	}
	if got, mark := ask(t, base, "key-alice", "smart", option.WithHeader("Cache-Control", "no-store")); got != "hello from answer 3" || mark != "bypass" {
		t.Fatalf("no-store: %q %s", got, mark)
	}
	if got, mark := ask(t, base, "key-alice", "smart", option.WithHeader("Cache-Control", "no-cache")); got != "hello from answer 4" || mark != "miss" {
		t.Fatalf("no-cache: %q %s", got, mark)
	}
	if got, mark := ask(t, base, "key-alice", "smart"); got != "hello from answer 4" || mark != "hit" {
		t.Fatalf("after a refresh: %q %s", got, mark)
	}

	global := cachedGateway(t, nil, "global", newUpstream(t, counting))
	ask(t, global, "key-alice", "smart")
	if got, mark := ask(t, global, "key-bob", "smart"); got != "hello from answer 1" || mark != "hit" {
		t.Fatalf("global scope: %q %s", got, mark)
	}
}

// A streamed request that hits is answered as a stream; a streamed answer
// is stored and serves a plain request too.
func TestCacheStreams(t *testing.T) {
	up := newUpstream(t, counting)
	base := cachedGateway(t, nil, "client", up)
	c := newClient(base, option.WithAPIKey("key-alice"))
	read := func() string {
		st := c.Chat.Completions.NewStreaming(t.Context(), params("smart"))
		var b strings.Builder
		for st.Next() {
			if ch := st.Current(); len(ch.Choices) > 0 {
				b.WriteString(ch.Choices[0].Delta.Content)
			}
		}
		if st.Err() != nil {
			t.Fatal(st.Err())
		}
		return b.String()
	}
	if got := read(); got != "answer 1" {
		t.Fatalf("first stream %q", got)
	}
	if got := read(); got != "answer 1" || up.calls() != 1 {
		t.Fatalf("second stream %q after %d upstream calls", got, up.calls())
	}
	if got, mark := ask(t, base, "key-alice", "smart"); got != "answer 1" || mark != "hit" {
		t.Fatalf("plain request after a stored stream: %q %s", got, mark)
	}
}

// With every target down, a stale answer beats a 503, and with no answer
// at all the degraded one is given.
func TestStaleIfErrorThenDegraded(t *testing.T) {
	clk := clocktest.New(time.Time{})
	up := newUpstream(t, counting)
	base := cachedGateway(t, clk, "client", up)
	ask(t, base, "key-alice", "smart")
	up.set(status(503, "server_error"))
	clk.Advance(30 * time.Minute) // expired, within stale_for
	if got, mark := ask(t, base, "key-alice", "smart"); got != "hello from answer 1" || mark != "stale" {
		t.Fatalf("outage with a stale answer: %q %s", got, mark)
	}
	var resp *http.Response
	c := newClient(base, option.WithAPIKey("key-bob"), option.WithResponseInto(&resp))
	got, err := c.Chat.Completions.New(t.Context(), params("smart"))
	if err != nil || text(got) != "Busy right now, please try again shortly." || resp.Header.Get("X-Fusebox-Degraded") != "true" {
		t.Fatalf("degraded: %q %v %v", text(got), err, resp.Header)
	}
}

func TestCacheMetrics(t *testing.T) {
	up := newUpstream(t, counting)
	base := cachedGateway(t, nil, "client", up)
	ask(t, base, "key-alice", "smart")
	ask(t, base, "key-alice", "smart")
	b := scrape(t, base)
	for _, want := range []string{
		`fusebox_cache_requests_total{model="smart",result="hit"} 1`,
		`fusebox_cache_requests_total{model="smart",result="miss"} 1`,
		"fusebox_cache_entries 1",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
