package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

const streamToken = "adm-stream-42"

// sseEvent is one event read from a stream.
type sseEvent struct {
	name string
	data map[string]any
}

// openStream opens GET /fusebox/events with the admin token and returns a
// channel of its events, closed when the stream ends.
func openStream(t *testing.T, ctx context.Context, base, token string) (*http.Response, <-chan sseEvent) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/fusebox/events", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan sseEvent, 64)
	if resp.StatusCode != http.StatusOK { // read now, so the connection is free
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		close(ch)
		return resp, ch
	}
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<22)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &ev.data)
			case line == "":
				ch <- ev
				ev = sseEvent{}
			}
		}
	}()
	return resp, ch
}

// next returns the next event, failing the test if the stream ends first.
func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	ev, ok := <-ch
	if !ok {
		t.Fatal("the stream ended")
	}
	return ev
}

// The stream is the admin API's: without the token, with a wrong one or a
// token in the URL it is refused in OpenAI's error shape; with it, the
// first event holds the status and history, then a sample follows each
// interval on the injected clock and a transition at once.
func TestEventStream(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	p, s := newUpstream(t, status(503, "server_error")), newUpstream(t, chatOK("secondary"))
	_, gw := start(t, Options{Clock: clk, DashboardInterval: 5 * time.Second}, "admin_token: "+streamToken+"\n"+twoTargets, p, s)
	for _, tc := range []struct{ token, query string }{{"", ""}, {"wrong", ""}, {"", "?token=" + streamToken}} {
		req, _ := http.NewRequest(http.MethodGet, gw.URL+"/fusebox/events"+tc.query, nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error struct{ Code, Type string } }
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 401 || body.Error.Code != "invalid_admin_token" {
			t.Errorf("token %q%s: %d %+v; want 401 invalid_admin_token", tc.token, tc.query, resp.StatusCode, body)
		}
	}

	c := newClient(gw.URL)
	for range 2 {
		if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, events := openStream(t, ctx, gw.URL, streamToken)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	hello := next(t, events)
	if b, _ := json.Marshal(hello.data); strings.Contains(string(b), "pk1") || strings.Contains(string(b), "sk1") || strings.Contains(string(b), streamToken) {
		t.Fatalf("the stream leaks a key or the token: %s", b)
	}
	st := hello.data["status"].(map[string]any)
	targets := st["targets"].([]any)
	if hello.name != "hello" || len(targets) != 2 || targets[0].(map[string]any)["name"] != "primary/gpt-4.1" {
		t.Fatalf("first event %s %v; want hello with the ladder's two targets in order", hello.name, st)
	}

	clk.Advance(5 * time.Second)
	sample := next(t, events)
	pt, _ := sample.data["points"].(map[string]any)["primary/gpt-4.1"].(map[string]any)
	if sample.name != "sample" || pt["failures"].(float64) != 2 || pt["state"] != "closed" {
		t.Fatalf("sample %s %v; want the primary's 2 failures of the interval", sample.name, pt)
	}

	// A third failure opens the primary's breaker (consecutive: 3): the
	// stream says so at once, without waiting for a sample.
	if _, err := c.Chat.Completions.New(t.Context(), params("smart")); err != nil {
		t.Fatal(err)
	}
	tr := next(t, events)
	if tr.name != "transition" || tr.data["target"] != "primary/gpt-4.1" || tr.data["to"] != "open" || tr.data["reason"] == "" || tr.data["until"] == nil {
		t.Fatalf("after the third failure: %s %v; want the transition to open with its reason and probe time", tr.name, tr.data)
	}
}

// At most maxDashboardStreams are open at once; one more is refused with
// a 429 in OpenAI's shape, and a place freed by a client that left is
// free again.
func TestEventStreamCap(t *testing.T) {
	s, gw := start(t, Options{Clock: clocktest.New(time.Time{})}, "admin_token: "+streamToken+"\n"+twoTargets,
		newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s")))
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	var streams []<-chan sseEvent
	for range maxDashboardStreams {
		ctx, cancel := context.WithCancel(t.Context())
		cancels = append(cancels, cancel)
		resp, ch := openStream(t, ctx, gw.URL, streamToken)
		if resp.StatusCode != 200 {
			t.Fatalf("stream %d: %d", len(streams), resp.StatusCode)
		}
		next(t, ch)
		streams = append(streams, ch)
	}
	resp, _ := openStream(t, t.Context(), gw.URL, streamToken)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || !strings.Contains(string(b), `"code":"too_many_streams"`) || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("one stream too many: %d %s; want 429 too_many_streams with Retry-After", resp.StatusCode, b)
	}
	cancels[0]() // a client leaves
	for range streams[0] {
	}
	eventually(t, "the stream's place to be freed", func() bool { return s.dash.hub.count() == maxDashboardStreams-1 })
	ctx, cancel := context.WithCancel(t.Context())
	cancels = append(cancels, cancel)
	if resp, _ := openStream(t, ctx, gw.URL, streamToken); resp.StatusCode != 200 {
		t.Fatalf("after one left: %d; want a place", resp.StatusCode)
	}
}

// blockedWriter is a client that has stopped reading: its writes block
// until the connection's write deadline is moved into the past, as the
// hub does to a stream it drops.
type blockedWriter struct {
	header http.Header
	mu     sync.Mutex
	kicked chan struct{}
	once   sync.Once
	writes int
}

func (b *blockedWriter) Header() http.Header { return b.header }
func (b *blockedWriter) WriteHeader(int)     {}
func (b *blockedWriter) Flush()              {}

func (b *blockedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.writes++
	first := b.writes == 1
	b.mu.Unlock()
	if first {
		return len(p), nil // the hello goes out; then the client stops reading
	}
	<-b.kicked
	return 0, errors.New("write deadline exceeded")
}

func (b *blockedWriter) SetWriteDeadline(t time.Time) error {
	if t.Before(time.Now()) {
		b.once.Do(func() { close(b.kicked) })
	}
	return nil
}

// A reader that stops reading is dropped once its queue is full: the
// publisher never waits for it, its blocked write is cut, its handler
// returns and its place is freed. Nothing is buffered past the queue.
func TestEventStreamDropsASlowReader(t *testing.T) {
	s, _ := start(t, Options{Clock: clocktest.New(time.Time{})}, "admin_token: "+streamToken+"\n"+twoTargets,
		newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s")))
	w := &blockedWriter{header: http.Header{}, kicked: make(chan struct{})}
	req := httptest.NewRequest(http.MethodGet, "/fusebox/events", nil)
	req.Header.Set("Authorization", "Bearer "+streamToken)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Handler().ServeHTTP(w, req)
	}()
	eventually(t, "the stream to open", func() bool { return s.dash.hub.count() == 1 })
	msg := encodeEvent("sample", map[string]string{"pad": strings.Repeat("x", 1000)})
	for range streamQueue + 2 { // one taken by the blocked write, a queue full, one too many
		s.dash.hub.publish(msg)
	}
	<-done
	if n := s.dash.hub.count(); n != 0 {
		t.Fatalf("%d streams open after the slow reader was dropped", n)
	}
	s.dash.hub.publish(msg) // nobody to block on
}

// Shutting the gateway down ends the dashboard's streams at once, rather
// than after the drain period that requests in flight get.
func TestEventStreamEndsOnShutdown(t *testing.T) {
	base, cancel, done := serve(t, "admin_token: "+streamToken+"\n"+twoTargets, time.Minute,
		newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s")))
	resp, events := openStream(t, t.Context(), base, streamToken)
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	next(t, events)
	cancel()
	for range events { // ends with the shutdown
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// With the admin API off, the stream does not exist.
func TestEventStreamAdminOff(t *testing.T) {
	_, gw := gateway(t, nil, twoTargets, newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s")))
	resp, _ := openStream(t, t.Context(), gw.URL, "anything")
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("admin off: %d; want 404", resp.StatusCode)
	}
}

// Clients racing for the streams get exactly maxDashboardStreams of
// them; the others are refused, none waits.
func TestEventStreamCapUnderConcurrency(t *testing.T) {
	s, gw := start(t, Options{Clock: clocktest.New(time.Time{})}, "admin_token: "+streamToken+"\n"+twoTargets,
		newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s")))
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	codes := make(chan int, 3*maxDashboardStreams)
	for range 3 * maxDashboardStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, gw.URL+"/fusebox/events", nil)
			req.Header.Set("Authorization", "Bearer "+streamToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			codes <- resp.StatusCode
			if resp.StatusCode == 200 {
				<-ctx.Done() // holds its stream until the test ends
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	got := map[int]int{}
	for range 3 * maxDashboardStreams {
		got[<-codes]++
	}
	if got[200] != maxDashboardStreams || got[429] != 2*maxDashboardStreams {
		t.Errorf("answers %v; want %d streams and %d refusals", got, maxDashboardStreams, 2*maxDashboardStreams)
	}
	cancel()
	wg.Wait()
	eventually(t, "every stream to close", func() bool { return s.dash.hub.count() == 0 })
}

// A reload that changes the admin token ends the streams opened with the
// old one; the new token opens a stream, the old one no longer does.
func TestEventStreamEndsWhenTheAdminTokenChanges(t *testing.T) {
	p, s := newUpstream(t, chatOK("p")), newUpstream(t, chatOK("s"))
	srv, gw, set := reloadable(t, reloadBase, p, s)
	defer srv.Close()
	resp, events := openStream(t, t.Context(), gw.URL, "adm")
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	next(t, events)
	set(strings.Replace(reloadBase, "admin_token: adm", "admin_token: adm-rotated", 1))
	if code, body := adminReload(t, gw); code != 200 {
		t.Fatalf("reload: %d %s", code, body)
	}
	for range events { // ends with the reload
	}
	if resp, _ := openStream(t, t.Context(), gw.URL, "adm"); resp.StatusCode != 401 {
		t.Errorf("the old token after the rotation: %d; want 401", resp.StatusCode)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if resp, _ := openStream(t, ctx, gw.URL, "adm-rotated"); resp.StatusCode != 200 {
		t.Errorf("the new token: %d; want 200", resp.StatusCode)
	}
}
