package gateway

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// The log says once each that a breaker opened and closed, and that a
// target's limits filled and had room again.
func TestServeLogsTransitionsAndEpisodesOnce(t *testing.T) {
	var out syncBuffer
	clk := clocktest.New(time.Unix(1_800_000_000, 0))
	p := newUpstream(t, status(http.StatusServiceUnavailable, "overloaded_error"))
	s := newUpstream(t, chatOK("secondary"))
	cfg := strings.Replace(twoTargets, "keys: [sk1]}", "keys: [sk1], limits: {rpm: 60, max_wait: 1ms}}", 1)
	_, gw := start(t, Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(&out, nil))}, cfg, p, s)
	for range 6 { // the primary's breaker opens; the secondary's rpm runs out
		chat(t, gw.URL)
	}
	clk.Advance(time.Minute) // the probe fails; the secondary has room again
	chat(t, gw.URL)
	clk.Advance(time.Minute) // the primary recovers: the next probe closes it
	p.set(chatOK("primary"))
	chat(t, gw.URL)
	log := out.String()
	for line, want := range map[string]int{
		"breaker opened": 2,
		"target=primary/gpt-4.1 from=closed to=open":    1,
		"target=primary/gpt-4.1 from=half-open to=open": 1,
		"msg=\"breaker half-open\"":                     2,
		"msg=\"breaker closed\"":                        1,
		"target limits full":                            1,
		"target limits have room again":                 1,
	} {
		if n := strings.Count(log, line); n != want {
			t.Errorf("%q logged %d times, want %d:\n%s", line, n, want, log)
		}
	}
}
