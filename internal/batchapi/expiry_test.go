package batchapi_test

import (
	"github.com/fuseboxhq/fusebox/internal/batchapi"
	"net/http"
	"testing"
	"time"

	"github.com/fuseboxhq/fusebox/clock/clocktest"
)

// A batch still running when its 24-hour window ends is expired: its
// lines stop, what was done is in its output.
func TestBatchExpires(t *testing.T) {
	clk := clocktest.New(time.Unix(1_800_000_000, 0))
	e := newEnv(t, batchapi.Options{Clock: clk, Concurrency: 2})
	c := e.client("sk-alice")
	release := make(chan struct{})
	e.mu.Lock()
	e.hold = func(r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	e.mu.Unlock()
	b := create(t, c, uploadFile(t, c, lines(10)).ID)
	wait(t, c, b.ID, "in_progress")
	clk.Advance(25 * time.Hour)
	close(release)
	b = wait(t, c, b.ID, "expired")
	if b.ExpiredAt == 0 || b.RequestCounts.Completed >= 10 {
		t.Fatalf("expired batch %+v", b)
	}
}
