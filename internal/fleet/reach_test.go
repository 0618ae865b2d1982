package fleet

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/redistest"
)

// Step table: blips (failures with successes between them, or a few
// within LostAfter) never count Redis lost; a run of failures lasting
// LostAfter, or LostCalls of them, does; a success ends it.
func TestReachNeedsARunOfFailures(t *testing.T) {
	steps := []struct {
		advance  time.Duration
		ok       bool
		wantLost bool
	}{
		{0, false, false},
		{100 * time.Millisecond, false, false},
		{0, true, false}, // a blip of two, then a success
		{10 * time.Millisecond, false, false},
		{LostAfter - time.Millisecond, false, false},
		{time.Millisecond, false, true}, // failing for LostAfter
		{0, true, false},
	}
	var r reach
	now := start
	for i, s := range steps {
		now = now.Add(s.advance)
		if s.ok {
			r.ok()
			continue
		}
		if got := r.failed(now); got != s.wantLost {
			t.Fatalf("step %d: lost %v, want %v", i, got, s.wantLost)
		}
	}
	for i := range LostCalls {
		if got := r.failed(now); got != (i == LostCalls-1) {
			t.Fatalf("call %d of a burst at one instant: lost %v", i+1, got)
		}
	}
}

// Through a Fleet on a fake clock: blips of a slow Redis (a few failed
// calls, then answers) neither log "Redis unreachable" nor flip Up (and
// with it /readyz); an outage that lasts does, once, and the first answer
// after it says Redis is back.
func TestBlipsAreNotAnOutage(t *testing.T) {
	clk := clocktest.New(start)
	var logs syncBuffer
	var flips []bool
	f := New(Options{Clock: clk, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		OnHealth: func(up bool) { flips = append(flips, up) }})
	slow := context.DeadlineExceeded
	for range 20 { // 20 blips of three slow calls 20ms apart
		for range 3 {
			f.result("budget_reserve", slow)
			clk.Advance(20 * time.Millisecond)
		}
		f.result("sync", nil)
	}
	if !f.Up() || len(flips) != 0 || strings.Contains(string(logs.Bytes()), "unreachable") {
		t.Fatalf("blips: up %v, flips %v, logs %q", f.Up(), flips, string(logs.Bytes()))
	}
	for range 6 { // down for good: a failed call every 50ms
		f.result("sync", errors.New("dial tcp: connection refused"))
		clk.Advance(50 * time.Millisecond)
	}
	if f.Up() || len(flips) != 1 || bytes.Count(logs.Bytes(), []byte("Redis unreachable")) != 1 {
		t.Fatalf("an outage: up %v, flips %v, logs %q", f.Up(), flips, string(logs.Bytes()))
	}
	f.result("sync", nil)
	if !f.Up() || len(flips) != 2 || !flips[1] {
		t.Fatalf("back: up %v, flips %v", f.Up(), flips)
	}
}

// The request path's timeout follows the round trips: at the floor while
// they are fast, TimeoutFactor × p99 when they slow, never past the
// ceiling.
func TestTimeoutFollowsRoundTrips(t *testing.T) {
	r := newRTTs(20 * time.Millisecond)
	for range rttWindow {
		r.record(time.Millisecond)
	}
	if got := r.current(); got != 20*time.Millisecond {
		t.Errorf("fast round trips: timeout %v, want the floor 20ms", got)
	}
	for range rttWindow / 20 { // 5% of round trips at 15ms: p99 is 15ms
		r.record(15 * time.Millisecond)
		for range 19 {
			r.record(time.Millisecond)
		}
	}
	if got, want := r.current(), TimeoutFactor*15*time.Millisecond; got != min(want, TimeoutCeiling(20*time.Millisecond)) {
		t.Errorf("a slow tail: timeout %v, want %v", got, want)
	}
	for range rttWindow {
		r.record(time.Second)
	}
	if got := r.current(); got != TimeoutCeiling(20*time.Millisecond) {
		t.Errorf("a hung Redis: timeout %v, want the ceiling %v", got, TimeoutCeiling(20*time.Millisecond))
	}
}

// A real Redis behind a proxy that holds a few of the chunks sent to it
// past the timeout (blips): the replica never says Redis is unreachable.
// The same Redis hung (SIGSTOP) for good: it does.
func TestSlowRedisBlipsThenAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	slow := redistest.SlowDown(t, srv)
	var logs syncBuffer
	rdb, err := Dial(config.StateURL(slow.URL()), config.Fleet{})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	f := New(Options{Client: rdb, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	n := 0
	slow.SetDelay(func() time.Duration {
		n++
		if n%40 < 2 { // two slow chunks in every forty
			return 30 * time.Millisecond
		}
		return 0
	})
	l := f.Ledger("web")
	for range 400 {
		l.Reserve(start, 0.001, 0, 0)
	}
	if !f.Up() || strings.Contains(string(logs.Bytes()), "unreachable") {
		t.Fatalf("blips: up %v, logs %q", f.Up(), logs.Bytes())
	}
	slow.SetDelay(nil)
	srv.Pause()
	defer srv.Resume()
	waitFor(t, "a hung Redis to count as lost", func() bool {
		l.Reserve(start, 0.001, 0, 0)
		return !f.Up()
	})
	if bytes.Count(logs.Bytes(), []byte("Redis unreachable")) != 1 {
		t.Errorf("logs %q; want one \"Redis unreachable\"", logs.Bytes())
	}
}
